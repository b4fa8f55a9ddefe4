"""Workflow schedulers for materialized tables (FLIP-448): plug-ins of the
entry-point group ``sparkgate.workflow_schedulers``, on the contracts of
:mod:`sparkgate.api.workflow` only. ``embedded`` is the built-in one."""
