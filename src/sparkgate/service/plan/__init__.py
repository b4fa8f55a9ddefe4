"""Compiled plans with per-operator state TTL (FLIP-190, FLIP-292, seed 001's TTL policies).

:mod:`.document` is the plan's JSON, :mod:`.compiler` makes it from Spark's
analyzed plan, :mod:`.executor` and :mod:`.operators` run it on Structured
Streaming's ``transformWithState``, :mod:`.planner` is what the statement
handlers call.
"""
