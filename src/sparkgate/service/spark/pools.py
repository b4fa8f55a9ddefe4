"""Spark's FAIR scheduler pools, one per gateway session by default.

Under Spark's default FIFO scheduler one session's long scan holds every core
until it ends, and another session's ``SELECT count(*) FROM range(1000)``
waits behind it. The gateway starts Spark in FAIR mode and runs each
session's jobs in a pool of its own (as Spark's Thrift server does with
``spark.sql.thriftserver.scheduler.pool``), so sessions share the cores by
weight. Pools named in ``spark.scheduler.allocation.file`` keep the weight and
minimum share written there; others are made with the gateway's defaults and
removed when their session ends (Spark never forgets a pool by itself).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from sparkgate.service.spark.jvm_cache import jvm_constant, scala_context

if TYPE_CHECKING:
    from pyspark import SparkContext

__all__ = ["POOL_PROPERTY", "add_pool", "is_fair", "remove_pool"]

log = logging.getLogger(__name__)

#: The thread-local property Spark's FAIR scheduler reads the pool name from.
POOL_PROPERTY = "spark.scheduler.pool"


def _root(sc: SparkContext) -> Any:
    return scala_context(sc).taskScheduler().rootPool()


def is_fair(sc: SparkContext) -> bool:
    return str(scala_context(sc).getSchedulingMode().toString()) == "FAIR"


def add_pool(
    sc: SparkContext, name: str, weight: int, min_share: int, fair_inside: bool = False
) -> bool:
    """Make pool ``name`` unless it exists; True if this call made it. Its jobs run
    one after the other (FIFO), or with ``fair_inside`` share it (a user's pool,
    which several sessions use)."""
    if not is_fair(sc):
        return False
    root = _root(sc)
    if root.getSchedulableByName(name) is not None:
        return False  # the allocation file's, or another session's
    jvm = sc._jvm
    assert jvm is not None
    scheduler = jvm_constant(jvm, "scheduler", _Scheduler)
    mode = scheduler.fair if fair_inside else scheduler.fifo
    root.addSchedulable(scheduler.pool(name, mode, min_share, weight))
    return True


class _Scheduler:
    """Spark's scheduling modes and pool class (:mod:`.jvm_cache`)."""

    def __init__(self, jvm: Any) -> None:
        package = jvm.org.apache.spark.scheduler
        self.fair = package.SchedulingMode.FAIR()
        self.fifo = package.SchedulingMode.FIFO()
        self.pool = package.Pool


def remove_pool(sc: SparkContext, name: str) -> None:
    try:
        root = _root(sc)
        pool = root.getSchedulableByName(name)
        if pool is not None and pool.runningTasks() == 0:
            root.removeSchedulable(pool)
    except Exception:  # the engine may be gone with the session; nothing to keep
        log.debug("Could not remove scheduler pool %s", name, exc_info=True)
