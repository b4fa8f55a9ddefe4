"""Giving back what a closed session held in the JVM, soon after it closes.

A gateway session's Spark session stays in the JVM for as long as py4j holds
it for Python: until the last Python object over it (the ``SparkSession``,
its cached ``catalog`` and ``conf``, a DataFrame of it) is freed. Those
objects sit in reference cycles (PySpark's cached properties point back at
their session; the gateway's operations, their closures and bound methods at
the gateway session), and only Python's full collection frees cycles.
CPython runs one when the objects that survived earlier collections have
grown by a quarter, which in a long-running gateway with a large heap may not
happen for hours: 300 sessions opened, used and closed left 49 Spark sessions
(with their catalogs, SQL confs, plans and cached relations) in the JVM, and
1,001 expired ones all 1,001.

So a closed session asks for a full collection (:func:`released`). A
background thread runs it, batched (one for the sessions closed within
``delay_s`` of each other) and at most one per ``min_interval_s``: a full
collection of a gateway-sized heap holds the GIL for tens of milliseconds.

The JVM holds sessions of its own accord too. Spark SQL runs query stages,
broadcasts and subqueries on cached thread pools whose core size is their
maximum (1,024 for shuffle and result stages): each task on a pool smaller
than that starts a new thread, which inherits the Spark session active where
it was started (``SparkSession.activeThreadSession`` is an
``InheritableThreadLocal``) and keeps it until it has been idle for a minute.
A gateway running a query a second kept ~60 closed sessions alive that way,
and up to a thousand per pool under load. Those pools' idle threads are let
go after a few seconds instead (:func:`shorten_idle_threads`): threads were
started per task anyway, so it costs nothing.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any

from sparkgate.service.spark.plans import active_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["IDLE_THREAD_KEEPALIVE_S", "ReleaseCollector", "released", "shorten_idle_threads"]

log = logging.getLogger(__name__)

#: How long Spark SQL's pool threads (and the Spark session each holds) outlive their work.
IDLE_THREAD_KEEPALIVE_S = 3
# The Scala objects whose ``executionContext`` is such a pool (Spark 4.x).
_SPARK_SQL_POOLS = (
    "org.apache.spark.sql.execution.exchange.ShuffleExchangeExec$",
    "org.apache.spark.sql.execution.adaptive.ResultQueryStageExec$",
    "org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec$",
    "org.apache.spark.sql.execution.exchange.BroadcastExchangeExec$",
    "org.apache.spark.sql.execution.SubqueryExec$",
    "org.apache.spark.sql.execution.SubqueryBroadcastExec$",
)


class ReleaseCollector:
    """Runs ``gc.collect()`` after sessions close: soon, but batched and rate-limited."""

    def __init__(self, *, delay_s: float = 1.0, min_interval_s: float = 5.0) -> None:
        self.delay_s = delay_s
        self.min_interval_s = min_interval_s
        self._lock = threading.Lock()
        self._wanted = threading.Event()
        self._thread: threading.Thread | None = None
        self._last = 0.0
        #: Full collections run so far (tests, diagnostics).
        self.collections = 0

    def request(self) -> None:
        """Ask for a collection; the thread that runs it starts on the first request."""
        self._wanted.set()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="sparkgate-session-release", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            # Let the sessions closing with this one close first, then one pass for all.
            time.sleep(max(self.delay_s, self._last + self.min_interval_s - time.monotonic()))
            self._wanted.clear()
            started = time.monotonic()
            try:
                found = gc.collect()
            except Exception:  # a finalizer's failure must not end the thread
                log.debug("Collecting closed sessions' objects failed", exc_info=True)
                found = -1
            self._last = time.monotonic()
            self.collections += 1
            log.debug(
                "Collected closed sessions' objects: %d unreachable, %.0f ms",
                found,
                (self._last - started) * 1000,
            )


def shorten_idle_threads(spark: SparkSession, keepalive_s: int = IDLE_THREAD_KEEPALIVE_S) -> int:
    """Let the idle threads of Spark SQL's cached pools end after ``keepalive_s``
    (Spark's: 60 s), with the Spark session each holds; returns how many pools.

    Best effort: a pool this Spark version lacks is skipped.
    """
    jvm: Any = spark.sparkContext._jvm
    seconds = getattr(jvm, "java.util.concurrent.TimeUnit").SECONDS
    shortened = 0
    # A pool made here reads its size (a static setting, the engine's) from the active
    # session's conf.
    with active_session(spark):
        for name in _SPARK_SQL_POOLS:
            try:
                pool = getattr(getattr(jvm, name), "MODULE$").executionContext().executor()
                pool.allowCoreThreadTimeOut(True)
                pool.setKeepAliveTime(keepalive_s, seconds)
                shortened += 1
            except Exception:
                log.debug("No thread pool to shorten in %s", name, exc_info=True)
    return shortened


_collector = ReleaseCollector()
# The engines (py4j views of their JVMs) whose pools are shortened already.
_shortened: weakref.WeakSet[Any] = weakref.WeakSet()
_shortened_lock = threading.Lock()


def released(spark: SparkSession | None = None) -> None:
    """Say that a gateway session using ``spark`` closed: what it held in Python,
    and through py4j and Spark's pool threads in the JVM, is freed shortly."""
    if spark is not None:
        from pyspark.sql import SparkSession

        # PySpark's class-level "active" session (createDataFrame sets it) would
        # keep one closed session alive.
        if SparkSession._activeSession is spark:
            SparkSession._activeSession = None
        jvm = spark.sparkContext._jvm
        with _shortened_lock:
            first = jvm is not None and jvm not in _shortened
            if first:
                _shortened.add(jvm)
        if first:
            try:
                shorten_idle_threads(spark)
            except Exception:  # the engine may be gone; the next one is shortened
                log.debug("Could not shorten Spark's idle threads", exc_info=True)
    _collector.request()
