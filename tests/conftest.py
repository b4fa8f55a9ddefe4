"""Shared pytest fixtures.

Service tests share one SparkSession for the whole run: starting the JVM
costs seconds, so a fresh session per test would dominate the suite's time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["spark"]


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """The engine's session on ``local[2]``, its data dir (metastore, warehouse,
    logs) in a tmp dir so nothing is written into the repository."""
    from sparkgate.service.spark.engine import start_spark, stop_spark

    session = start_spark(
        {
            "spark.master": "local[2]",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "4",
        },
        tmp_path_factory.mktemp("spark-data"),
        app_name="sparkgate-tests",
    )
    try:
        yield session
    finally:
        stop_spark()
