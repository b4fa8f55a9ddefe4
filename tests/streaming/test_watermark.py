"""WATERMARK and PROCTIME() columns become Spark's withWatermark and processing time."""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from sparkgate.service.streaming.connectors import stream_frame
from sparkgate.service.streaming.ddl import parse_connector_table

DDL = (
    "CREATE TABLE events (id BIGINT, ts TIMESTAMP(3), pt AS PROCTIME(), "
    "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) "
    "WITH ('connector' = 'datagen', 'rows-per-second' = '5')"
)


def windowed_append(frame):  # type: ignore[no-untyped-def]
    counts = frame.groupBy(F.window("ts", "10 seconds")).count()
    return counts.writeStream.outputMode("append").format("memory").queryName("wm_probe").start()


def test_watermark_lets_a_windowed_aggregation_run_in_append_mode(spark: SparkSession) -> None:
    source = stream_frame(spark.newSession(), parse_connector_table(DDL), 0.5)
    frame = source.frame
    assert frame.isStreaming and not source.bounded
    assert "EventTimeWatermark" in frame._jdf.queryExecution().logical().toString()
    assert dict(frame.dtypes)["pt"] == "timestamp"
    # Spark refuses append mode for a windowed aggregation without a watermark,
    # so this starting at all shows the watermark is in the plan.
    query = windowed_append(frame)
    try:
        assert query.isActive
    finally:
        query.stop()


def test_without_the_watermark_append_mode_is_refused(spark: SparkSession) -> None:
    ddl = DDL.replace(", WATERMARK FOR ts AS ts - INTERVAL '5' SECOND", "")
    frame = stream_frame(spark.newSession(), parse_connector_table(ddl), 0.5).frame
    with pytest.raises(AnalysisException, match=r"(?i)watermark"):
        windowed_append(frame).stop()
