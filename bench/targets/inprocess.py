"""In-process PySpark: the benchmark's own process drives Spark directly.

This is the physical limit every gateway is compared with: no network, no
protocol, no second process. The engine is started with sparkgate's own
engine start-up (same defaults as the gateway: Hive catalog on Derby under a
tmp data dir, Spark's console in a log file), with the run's Spark settings.

Modes: ``arrow`` is ``spark.sql(q).toArrow()`` plus a pass over every column;
``rows`` is ``spark.sql(q).collect()`` (Python ``Row`` objects).
"""

from __future__ import annotations

import logging
import os
import time
from typing import TYPE_CHECKING, Any

from bench.targets.base import Session, Target, touch_arrow

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["InProcessTarget"]

log = logging.getLogger(__name__)


class _InProcessSession:
    def __init__(self, spark: SparkSession, mode: str) -> None:
        self._spark = spark
        self._mode = mode
        #: Size of the last Arrow result in bytes (the size a full buffer would need).
        self.last_nbytes = 0

    def execute(self, sql: str) -> int:
        frame = self._spark.sql(sql)
        if self._mode == "arrow":
            table = frame.toArrow()
            self.last_nbytes = int(table.nbytes)
            touch_arrow(table)
            return int(table.num_rows)
        return len(frame.collect())

    def close(self) -> None:
        # A Spark session has no close: dropping it is all a client does.
        self._spark = None  # type: ignore[assignment]


class InProcessTarget(Target):
    name = "inprocess"
    label = "in-process PySpark"
    # ``rows`` first: ``spark.sql(...).collect()`` is the floor for statement latency.
    modes = ("rows", "arrow")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._spark: SparkSession | None = None
        self._started = False

    def launch(self) -> None:
        # Started in wait_ready: the JVM boots while this process waits anyway.
        pass

    def wait_ready(self) -> None:
        from sparkgate.service.spark.engine import start_spark

        start = time.monotonic()
        self._started = True
        self._spark = start_spark(
            self.settings.spark.conf(), self.work_dir / "inprocess", app_name="bench-inprocess"
        )
        self._spark.sql("SELECT 1").collect()
        self.startup_s = time.monotonic() - start

    def stop(self) -> None:
        if not self._started:
            return
        self._started = False
        from sparkgate.service.spark.engine import stop_spark

        try:
            stop_spark()
        except Exception:
            log.exception("Could not stop in-process Spark")
        self._spark = None

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            raise RuntimeError("in-process Spark is not started")
        return self._spark

    @property
    def version(self) -> str:
        return str(self.spark.version)

    def open_session(self, mode: str | None = None) -> Session:
        return _InProcessSession(self.spark.newSession(), mode or self.modes[0])

    def server_pids(self) -> list[int]:
        # This process and its JVM; the servers it started are excluded by the
        # memory sampler (their own process trees are subtracted).
        return [os.getpid()]
