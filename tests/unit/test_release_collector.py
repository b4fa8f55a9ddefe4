"""Closed sessions' objects are collected soon, in batches (service/spark/release.py)."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Callable

from sparkgate.service.spark.release import ReleaseCollector


class _Cycle:
    """An object only the cyclic collector frees (as PySpark's sessions are)."""

    def __init__(self) -> None:
        self.me = self


def _wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def test_requests_close_together_make_one_collection() -> None:
    collector = ReleaseCollector(delay_s=0.2, min_interval_s=0.5)
    freed: list[int] = []
    gc.disable()  # only the collector may free the cycle
    try:
        garbage = _Cycle()
        weakref.finalize(garbage, freed.append, 1)
        del garbage
        for _ in range(5):
            collector.request()
        assert _wait_for(lambda: freed == [1])
        time.sleep(0.3)
        assert collector.collections == 1
        collector.request()  # a later one: another collection, after the interval
        assert _wait_for(lambda: collector.collections == 2)
    finally:
        gc.enable()
