"""Streaming results over the REST endpoint and in the SQL client's changelog mode."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import httpx

from sparkgate.api.results import RowKind
from sparkgate.client.embedded import EmbeddedExecutor
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.streaming.changelog import replay
from tests.client.helpers import text_client
from tests.rest.conftest import submit, walk

from .conftest import name, wait_for

SOURCE = (
    "CREATE TABLE {t} (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
    "'sequence', 'fields.id.start' = '1', 'fields.id.end' = '30', 'rows-per-second' = '20')"
)
QUERY = "SELECT id % 2 AS parity, count(*) AS c FROM {t} GROUP BY id % 2"


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
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("|")
    ]
    assert rows[0] == ["op", "parity", "c"]
    kinds = {row[0] for row in rows[1:]}
    assert {"+I", "-U", "+U"} <= kinds <= {"+I", "-U", "+U", "-D"}
    assert f"Received a total of {len(rows) - 1} rows" in text
    assert ["+U", "0", "15"] in rows and ["+U", "1", "15"] in rows


def test_statement_sets_and_jobs_over_rest(http: httpx.Client, tmp_path: Path) -> None:
    def rows_of(handle: str, statement: str) -> list[list[object]]:
        op = submit(http, handle, statement)
        bodies = walk(http, f"/v4/sessions/{handle}/operations/{op}/result/0?rowFormat=JSON")
        return [row["fields"] for b in bodies if "results" in b for row in b["results"]["data"]]

    handle = http.post("/v4/sessions", json={}).json()["sessionHandle"]
    src, a, b = name("src"), name("a"), name("b")
    rows_of(handle, SOURCE.format(t=src))
    for sink in (a, b):
        rows_of(
            handle,
            f"CREATE TABLE {sink} (id BIGINT) WITH ('connector' = 'filesystem', "
            f"'path' = '{tmp_path / sink}', 'format' = 'parquet')",
        )
    assert rows_of(handle, "SET 'pipeline.name' = 'rest set'") == [["OK"]]
    # Asynchronous DML makes the set a job of the gateway's registry.
    assert rows_of(handle, "SET 'table.dml-sync' = 'false'") == [["OK"]]
    assert rows_of(handle, "BEGIN STATEMENT SET") == [["OK"]]
    assert rows_of(handle, f"INSERT INTO {a} SELECT id FROM {src} WHERE id % 2 = 0") == [["OK"]]
    assert rows_of(handle, f"INSERT INTO {b} SELECT id FROM {src} WHERE id % 2 = 1") == [["OK"]]
    [[job_id]] = rows_of(handle, "END")
    # Another session sees the job in SHOW JOBS and DESCRIBE JOB.
    other = http.post("/v4/sessions", json={}).json()["sessionHandle"]

    def job_row() -> list[object] | None:
        jobs = {str(row[0]): row for row in rows_of(other, "SHOW JOBS")}
        return jobs.get(str(job_id))

    assert wait_for(lambda: (job_row() or [None, None, None])[2] == "FINISHED", 90)
    assert "rest set" in (job_row() or [])
    assert rows_of(handle, f"SELECT count(*) FROM {a}") == [[15]]
    assert rows_of(handle, f"SELECT count(*) FROM {b}") == [[15]]
    described = rows_of(other, f"DESCRIBE JOB '{job_id}'")
    assert described and str(described[0][0]) == job_id
    for h in (handle, other):
        http.delete(f"/v4/sessions/{h}")
