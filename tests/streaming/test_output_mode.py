"""Output-mode fallback: recognised by Spark's error condition, not its message text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from sparkgate.service.streaming.query import start_with_fallback

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_falls_back_to_the_mode_spark_accepts(spark: SparkSession) -> None:
    counts = spark.readStream.format("rate").load().groupBy("value").count()
    tried: list[str] = []

    def make(mode: str) -> Any:
        tried.append(mode)
        return counts.writeStream.format("memory").queryName(f"om_{mode}").outputMode(mode)

    query = start_with_fallback(make, ["append", "update"])
    try:
        assert tried == ["append", "update"]
    finally:
        query.stop()
        # The memory sink's table is a temporary view other tests would list.
        for mode in tried:
            spark.catalog.dropTempView(f"om_{mode}")


def test_other_errors_are_not_taken_for_an_output_mode(spark: SparkSession) -> None:
    rows = spark.readStream.format("rate").load()
    tried: list[str] = []

    def make(mode: str) -> Any:
        tried.append(mode)
        # The message names the missing source 'no_such_outputmode', yet it is no output mode error.
        return rows.writeStream.format("no_such_outputmode").outputMode(mode)

    with pytest.raises(Exception, match="DATA_SOURCE_NOT_FOUND"):
        start_with_fallback(make, ["append", "update"])
    assert tried == ["append"]
