"""sparkgate's benchmark suite: ``python -m bench`` (or ``make bench``).

Runs the same workloads against in-process PySpark, the sparkgate gateway
(REST now, HiveServer2 later) and Spark's own Thrift server, side by side in
one run, and reports medians, tails and ratios. See ``BENCHMARKS.md``.
"""
