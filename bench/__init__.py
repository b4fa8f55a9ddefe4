"""sparkgate's benchmark suite: ``python -m bench`` (or ``make bench``).

Runs the same workloads against in-process PySpark, the sparkgate gateway
(REST and HiveServer2) and Spark's own Thrift server, side by side in one run,
and reports medians, tails and ratios, with the machine's load and the CPU
other processes took (a noisy run does not rewrite ``BENCHMARKS.md``). See
``BENCHMARKS.md``.
"""
