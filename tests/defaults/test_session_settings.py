"""SET shows Spark's effective values, and one time zone drives Spark and the results.

Run on the gateway as a user gets it: nobody has set a time zone or shuffle
partitions, so ``SET key`` must answer what Spark itself uses.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.defaults.conftest import DefaultGateway


class Rest:
    def __init__(self, url: str, session: str) -> None:
        self.base = f"{url}/v4/sessions/{session}"

    def rows(self, statement: str, row_format: str = "JSON") -> list[list[Any]]:
        response = httpx.post(f"{self.base}/statements", json={"statement": statement})
        assert response.status_code == 200, response.text
        uri: str | None = (
            f"{self.base}/operations/{response.json()['operationHandle']}"
            f"/result/0?rowFormat={row_format}"
        )
        base = self.base.split("/v4/")[0]
        rows: list[list[Any]] = []
        deadline = time.monotonic() + 120
        while uri is not None:
            assert time.monotonic() < deadline
            page = httpx.get(uri if uri.startswith("http") else base + uri, timeout=60)
            assert page.status_code == 200, page.text
            body = page.json()
            rows.extend(row["fields"] for row in body.get("results", {}).get("data", []))
            uri = body.get("nextResultUri")
        return rows

    def value(self, statement: str) -> Any:
        rows = self.rows(statement)
        assert len(rows) == 1, rows
        return rows[0][-1]


@pytest.fixture
def rest(default_gateway: DefaultGateway) -> Iterator[Rest]:
    response = httpx.post(f"{default_gateway.url}/v4/sessions", json={})
    session = response.json()["sessionHandle"]
    yield Rest(default_gateway.url, session)
    httpx.delete(f"{default_gateway.url}/v4/sessions/{session}")


def test_set_key_shows_sparks_effective_value(rest: Rest) -> None:
    listed = {row[0]: row[1] for row in rest.rows("SET -v")}
    partitions = rest.value("SET spark.sql.shuffle.partitions")
    assert partitions == listed["spark.sql.shuffle.partitions"]
    assert partitions.isdigit()
    assert rest.value("SET 'spark.sql.session.timeZone'") == rest.value("SELECT current_timezone()")
    assert rest.value("SET spark.sql.ansi.enabled") == listed["spark.sql.ansi.enabled"]
    # A key Spark does not know answers as Spark's own SET does.
    assert rest.value("SET spark.sparkgate.no.such.key") == "<undefined>"


def _agree(rest: Rest, zone: str) -> None:
    """Spark's zone, both keys and the rendered value all say ``zone``."""
    assert rest.value("SELECT current_timezone()") == zone
    assert rest.value("SET 'table.local-time-zone'") == zone
    assert rest.value("SET spark.sql.session.timeZone") == zone
    query = "SELECT timestamp_seconds(0) AS ts, CAST(timestamp_seconds(0) AS STRING) AS s"
    (shown, cast), *_ = rest.rows(query, "PLAIN_TEXT")
    assert shown.startswith(cast), (shown, cast)


def test_flink_time_zone_key_drives_spark(rest: Rest) -> None:
    system = rest.value("SELECT current_timezone()")
    rest.rows("SET 'table.local-time-zone' = 'Asia/Shanghai'")
    _agree(rest, "Asia/Shanghai")
    (cast,) = rest.rows("SELECT CAST(timestamp_seconds(0) AS STRING)")[0]
    assert cast == "1970-01-01 08:00:00"

    rest.rows("SET 'spark.sql.session.timeZone' = 'America/Lima'")
    _agree(rest, "America/Lima")

    rest.rows("RESET 'table.local-time-zone'")
    assert rest.value("SELECT current_timezone()") == system
    assert rest.value("SET 'table.local-time-zone'") == system
    assert rest.value("SET spark.sql.session.timeZone") == system

    rest.rows("SET 'table.local-time-zone' = 'Asia/Tokyo'")
    _agree(rest, "Asia/Tokyo")
    rest.rows("RESET")
    assert rest.value("SELECT current_timezone()") == system
