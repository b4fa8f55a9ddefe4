"""TIMESTAMP values render in Spark's session time zone, also when nobody set one.

Spark's default session zone is the JVM's; a gateway on a machine whose zone
is not UTC must render values as Spark's CAST(ts AS STRING) does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.rest.conftest import rows, run

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

QUERY = "SELECT current_timezone(), timestamp_seconds(0), CAST(timestamp_seconds(0) AS STRING)"


@pytest.fixture
def jvm_zone(spark: SparkSession) -> Iterator[str]:
    """The JVM's default zone set to a non-UTC one for the test (Spark's default)."""
    zones = spark.sparkContext._jvm.java.util.TimeZone  # type: ignore[union-attr]
    saved = zones.getDefault()
    zones.setDefault(zones.getTimeZone("Asia/Tokyo"))
    try:
        yield "Asia/Tokyo"
    finally:
        zones.setDefault(saved)


@pytest.mark.parametrize("row_format", ["PLAIN_TEXT", "JSON"])
def test_unset_zone_renders_as_spark_casts(
    client: httpx.Client, session: str, jvm_zone: str, row_format: str
) -> None:
    [[zone, shown, cast]] = rows(run(client, session, QUERY, row_format))
    assert zone == jvm_zone
    assert cast == "1970-01-01 09:00:00"
    assert str(shown).replace("T", " ").startswith(cast), (shown, cast)
    assert [["table.local-time-zone", jvm_zone]] == rows(
        run(client, session, "SET 'table.local-time-zone'")
    )
