"""Streaming results over the REST endpoint and in the SQL client's changelog mode."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import httpx
import pytest

from sparkgate.api.results import RowKind
from sparkgate.client.embedded import EmbeddedExecutor
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.streaming.changelog import replay
from tests.client.helpers import text_client
from tests.rest.conftest import settings, submit, walk

from .conftest import name

SOURCE = (
    "CREATE TABLE {t} (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
    "'sequence', 'fields.id.start' = '1', 'fields.id.end' = '30', 'rows-per-second' = '20')"
)
QUERY = "SELECT id % 2 AS parity, count(*) AS c FROM {t} GROUP BY id % 2"


@pytest.fixture
def http(stream_service: SparkGatewayService) -> Iterator[httpx.Client]:
    endpoint = RestEndpoint(stream_service, settings())
    endpoint.start()
    try:
        with httpx.Client(base_url=endpoint.address, timeout=120) as client:
            yield client
    finally:
        endpoint.stop()


def test_rest_results_carry_the_change_kinds(http: httpx.Client) -> None:
    handle = http.post("/v4/sessions", json={"sessionName": "stream"}).json()["sessionHandle"]
    table = name("gen")
    for statement in (SOURCE.format(t=table), "SET 'execution.runtime-mode' = 'streaming'"):
        op = submit(http, handle, statement)
        walk(http, f"/v4/sessions/{handle}/operations/{op}/result/0")
    op = submit(http, handle, QUERY.format(t=table))
    bodies = walk(http, f"/v4/sessions/{handle}/operations/{op}/result/0?rowFormat=JSON")
    data = [row for b in bodies if "results" in b for row in b["results"]["data"]]
    log = [(RowKind[row["kind"]], tuple(row["fields"])) for row in data]
    assert {kind for kind, _ in log} >= {
        RowKind.INSERT,
        RowKind.UPDATE_BEFORE,
        RowKind.UPDATE_AFTER,
    }
    assert replay(log) == Counter({(0, 15): 1, (1, 15): 1})
    assert any(b.get("isQueryResult") for b in bodies)
    http.delete(f"/v4/sessions/{handle}")


def test_sql_client_changelog_mode_prints_the_changes(
    stream_service: SparkGatewayService,
) -> None:
    client, out = text_client(EmbeddedExecutor(stream_service))
    table = name("gen")
    script = ";\n".join(
        [
            "SET 'sql-client.execution.result-mode' = 'changelog'",
            "SET 'execution.runtime-mode' = 'streaming'",
            SOURCE.format(t=table),
            QUERY.format(t=table),
        ]
    )
    try:
        assert client.run_script(script + ";")
    finally:
        client.close()
    text = out.getvalue()
    assert "| op | parity |" in text
    assert "| -U |" in text and "| +U |" in text
    assert "Received a total of" in text
    finals = [line for line in text.splitlines() if line.startswith("| +U |")]
    assert any(line.split("|")[3].strip() == "15" for line in finals)
