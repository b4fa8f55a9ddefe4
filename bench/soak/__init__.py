"""A soak run of one sparkgate gateway under mixed clients (``python -m bench.soak``).

One gateway subprocess with its default options (free ports, its own data
dir, both endpoints) serves, for the whole run: REST readers of verified
results in JSON and Arrow, HiveServer2 clients (PyHive), a streaming job,
sessions opened and left to expire, a hostile session sending the statements
that act on the host (which must be refused and have no effect) and, now and
then, a 50 M-row SELECT read to the end; once, at a set point, the engine JVM
is SIGKILLed and the gateway must heal itself (``restart.py``). A sampler
records both processes' resident memory and the engine's health every few
seconds; the report gives statements served, lost results, errors by kind
(those expected during the engine restart apart), engine restarts and the RSS
slope over the second half of the run. See ``BENCHMARKS.md`` (Soak).
"""
