"""TIMESTAMP_LTZ values print in the zone Spark uses; no zone name ends the client."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

from sparkgate.api.types import LocalZonedTimestampType, ResultSchema
from sparkgate.client.executor import RenderError
from sparkgate.client.textrows import render_batches
from sparkgate.client.timezone import usable_zone
from tests.client.helpers import ExecutorFactory, text_client

SAME_AS_SPARK = (
    "SELECT TIMESTAMP '2024-02-29 12:34:56.789' AS ltz, "
    "CAST(TIMESTAMP '2024-02-29 12:34:56.789' AS STRING) AS spark_text, "
    "array(TIMESTAMP '2024-01-01 00:00:00') AS arr"
)


@pytest.mark.parametrize(
    ("name", "zone"),
    [
        ("Asia/Shanghai", "Asia/Shanghai"),
        ("Etc/UTC", "Etc/UTC"),
        ("Z", "UTC"),
        ("GMT+8", "+08:00"),
        ("UTC-05:30", "-05:30"),
        ("+01:00", "+01:00"),
        ("PST", "America/Los_Angeles"),
        ("SystemV/PST8", "-08:00"),
        ("SystemV/PST8PDT", "PST8PDT"),
        ("<undefined>", None),
        ("SystemV/AST4ADT", None),
        ("Mars/Olympus_Mons", None),
        ("+19:00", None),
        ("", None),
        (None, None),
    ],
)
def test_usable_zone(name: str | None, zone: str | None) -> None:
    assert usable_zone(name) == zone


def test_a_value_that_cannot_be_rendered_is_a_render_error() -> None:
    batch = pa.record_batch([pa.array([0], pa.timestamp("us", tz="UTC"))], names=["t"])
    schema = ResultSchema.of(("t", LocalZonedTimestampType(6)))
    with pytest.raises(RenderError, match="Could not show the values"):
        render_batches([batch], schema, "<undefined>")


def _first_row(out: str) -> list[str]:
    """The cells of the first data row of the only table in ``out``."""
    lines = re.findall(r"^\| (.+) \|$", out, re.M)
    assert len(lines) >= 2, out
    return [cell.strip() for cell in lines[1].split(" | ")]


@pytest.mark.parametrize("zone", ["GMT+8", "America/Los_Angeles", "SystemV/PST8"])
def test_timestamps_print_in_the_zone_spark_uses(zone: str, make_executor: ExecutorFactory) -> None:
    client, out = text_client(make_executor())
    try:
        assert client.execute(f"SET 'spark.sql.session.timeZone' = '{zone}'")
        assert client.execute(SAME_AS_SPARK)
    finally:
        client.close()
    ltz, spark_text, arr = _first_row(out.getvalue())
    # A literal is typed by its digits (TIMESTAMP_LTZ(3)), as Flink types it.
    assert ltz == "2024-02-29 12:34:56.789" and spark_text == "2024-02-29 12:34:56.789"
    assert arr == "[2024-01-01 00:00:00]"  # its element a TIMESTAMP_LTZ(0), as in Flink
    assert "[WARNING]" not in out.getvalue()


def test_an_unknown_zone_warns_and_the_client_goes_on(make_executor: ExecutorFactory) -> None:
    client, out = text_client(make_executor())
    try:
        # Spark (Java) knows this zone, pyarrow's tz database does not.
        assert client.execute("SET 'spark.sql.session.timeZone' = 'SystemV/AST4ADT'")
        assert client.execute("SELECT TIMESTAMP '2024-02-29 12:00:00' AS t")
        assert client.execute("SELECT 'next' AS s")
    finally:
        client.close()
    text = out.getvalue()
    assert "[WARNING] The session time zone ('SystemV/AST4ADT') is not a zone" in text, text
    assert "TIMESTAMP_LTZ values print in UTC." in text
    assert "| 2024-02-29 16:00:00 |" in text, text  # 12:00 at -04:00, in UTC
    assert "| next |" in text, text
