"""Fetching results: body shapes, row formats, tokens, long polls and failures."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import httpx
import pyarrow as pa
import pytest

from sparkgate.endpoints.rest.errors import (
    FLINK_GATEWAY_EXCEPTION,
    SERVER_SIDE_END,
    SERVER_SIDE_START,
)
from sparkgate.endpoints.rest.results import COLUMNS_METADATA_KEY

from .conftest import flink_client_reason, rows, run, submit, walk

PAYLOAD_KEYS = ["resultType", "isQueryResult", "jobID", "resultKind", "results", "nextResultUri"]
VALUES = (
    "SELECT CAST(1 AS INT) AS i, 'x' AS s, CAST(1.50 AS DECIMAL(5,2)) AS d, TRUE AS b, "
    "CAST(2.5 AS DOUBLE) AS f, DATE'2024-01-02' AS day, "
    "TIMESTAMP_NTZ'2024-01-02 03:04:05.120' AS ts, ARRAY(1, 2) AS arr, "
    "CAST(NULL AS STRING) AS n"
)


def test_json_rows_and_body_order(client: httpx.Client, session: str) -> None:
    bodies = run(client, session, VALUES, "JSON")
    payload = next(b for b in bodies if b.get("results", {}).get("data"))
    assert [k for k in PAYLOAD_KEYS if k in payload] == list(payload)
    assert payload["resultType"] == "PAYLOAD" and payload["isQueryResult"] is True
    assert payload["resultKind"] == "SUCCESS_WITH_CONTENT"
    assert list(payload["results"]) == ["columns", "rowFormat", "data"]
    assert payload["results"]["rowFormat"] == "JSON"
    columns = payload["results"]["columns"]
    assert [c["name"] for c in columns] == ["i", "s", "d", "b", "f", "day", "ts", "arr", "n"]
    assert all(list(c) == ["name", "logicalType", "comment"] for c in columns)
    assert rows(bodies) == [
        [1, "x", 1.5, True, 2.5, "2024-01-02", "2024-01-02T03:04:05.12", [1, 2], None]
    ]
    assert payload["results"]["data"][0]["kind"] == "INSERT"
    eos = bodies[-1]
    assert eos["resultType"] == "EOS" and "nextResultUri" not in eos
    assert list(eos) == [k for k in PAYLOAD_KEYS if k in eos]


def test_decimal_json_is_flinks_wire_text(client: httpx.Client, session: str) -> None:
    """DECIMAL as Flink's gateway writes it (see tests/unit/test_codec_decimal_flink.py).

    Flink's Jackson node strips trailing zeros (``1.50`` -> ``1.5``, ``0.00``
    -> ``0``, ``100.00`` -> ``1E+2``); the scale is in the column's type.
    """
    op = submit(
        client,
        session,
        "SELECT CAST(1.50 AS DECIMAL(10,2)) a, CAST(0 AS DECIMAL(10,2)) b, "
        "CAST(-1.5 AS DECIMAL(10,2)) c, CAST(100 AS DECIMAL(10,2)) d, "
        "CAST('12345678901234567890.123456789012345678' AS DECIMAL(38,18)) e, "
        "array(CAST(1.50 AS DECIMAL(10,2))) f, named_struct('x', CAST(0 AS DECIMAL(10,2))) g, "
        "map('k', CAST(-1.5 AS DECIMAL(10,2))) h, CAST(7 AS DECIMAL(5,0)) i",
    )
    uri: str | None = f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON"
    texts = []
    while uri is not None:  # the raw bodies: json parsing would hide the number's text
        response = client.get(uri)
        assert response.status_code == 200, response.text
        texts.append(response.text)
        uri = response.json().get("nextResultUri")
    raw = next(t for t in texts if '"data":[{' in t)
    page = json.loads(raw)
    flink = (
        '"data":[{"kind":"INSERT","fields":[1.5,0,-1.5,1E+2,'
        '12345678901234567890.123456789012345678,[1.5],{"x":0},{"k":-1.5},7]}]'
    )
    assert flink in raw
    types = [c["logicalType"] for c in page["results"]["columns"]]
    assert (types[0]["precision"], types[0]["scale"]) == (10, 2)
    plain = rows(
        run(
            client,
            session,
            "SELECT CAST(1.50 AS DECIMAL(10,2)), CAST(0 AS DECIMAL(10,2))",
            "PLAIN_TEXT",
        )
    )
    assert plain == [["1.50", "0.00"]]


def test_plain_text_rows(client: httpx.Client, session: str) -> None:
    bodies = run(client, session, VALUES, "PLAIN_TEXT")
    assert {b["results"]["rowFormat"] for b in bodies if "results" in b} == {"PLAIN_TEXT"}
    assert rows(bodies) == [
        [
            "1",
            "x",
            "1.50",
            "TRUE",
            "2.5",
            "2024-01-02",
            "2024-01-02 03:04:05.120",  # TIMESTAMP(3): the literal's digits, as Flink
            "[1, 2]",
            None,
        ]
    ]


def test_ddl_answers_ok_without_job_id(client: httpx.Client, session: str) -> None:
    bodies = run(client, session, "SET 'x.y' = 'z'", "PLAIN_TEXT")
    first = bodies[0]
    assert list(first) == ["resultType", "isQueryResult", "resultKind", "results", "nextResultUri"]
    assert first["isQueryResult"] is False and first["resultKind"] == "SUCCESS"
    assert rows(bodies) == [["OK"]]


@pytest.mark.parametrize(
    ("prefix", "query", "suffix"),
    [
        ("/v1", "", ""),
        ("/v1", "?rowFormat=PLAIN_TEXT", ""),  # V1 has no rowFormat: JSON, none in the URI
        ("/v2", "?rowFormat=PLAIN_TEXT", "?rowFormat=PLAIN_TEXT"),
        ("/v3", "?rowFormat=json", "?rowFormat=JSON"),
        ("/v4", "?rowFormat=JSON", "?rowFormat=JSON"),
        ("", "?rowFormat=JSON", "?rowFormat=JSON"),
    ],
)
def test_next_result_uri_keeps_version_and_format(
    client: httpx.Client, session: str, prefix: str, query: str, suffix: str
) -> None:
    op = submit(client, session, "SELECT 1 AS one")
    base = f"/sessions/{session}/operations/{op}/result"
    first = client.get(f"{prefix}{base}/0{query}").json()
    version = prefix or "/v4"
    assert first["nextResultUri"] == f"{version}{base}/1{suffix}"
    expected = "PLAIN_TEXT" if "PLAIN" in suffix else "JSON"
    assert first["results"]["rowFormat"] == expected
    walk(client, first["nextResultUri"])


def test_tokens_replay_and_refuse_jumps(client: httpx.Client, session: str) -> None:
    op = submit(client, session, "SELECT id FROM range(5)")
    base = f"/v4/sessions/{session}/operations/{op}/result"
    first = client.get(base + "/0?rowFormat=JSON").json()
    assert first["resultType"] == "PAYLOAD"
    assert client.get(base + "/0?rowFormat=JSON").json() == first  # N-1 replays
    for token in ("5", "-1", "abc", "1.5"):
        response = client.get(f"{base}/{token}?rowFormat=JSON")
        assert response.status_code == 400, token
        assert "token" in response.json()["errors"][0]
    bodies = [first, *walk(client, first["nextResultUri"])]
    assert [r[0] for r in rows(bodies)] == [0, 1, 2, 3, 4]


def test_long_poll_first_fetch_skips_not_ready(client: httpx.Client, session: str) -> None:
    op = submit(client, session, "SELECT 42 AS answer")
    first = client.get(f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON")
    assert first.json()["resultType"] == "PAYLOAD"
    assert rows(walk(client, first.json()["nextResultUri"])) + rows([first.json()]) == [[42]]


def test_not_ready_and_later_pages_never_not_ready(client: httpx.Client, session: str) -> None:
    statement = "SELECT id FROM range(3) WHERE reflect('java.lang.Thread', 'sleep', 2500L) IS NULL"
    op = submit(client, session, statement)
    base = f"/v4/sessions/{session}/operations/{op}/result"
    started = time.monotonic()
    first = client.get(base + "/0?rowFormat=JSON").json()
    waited = time.monotonic() - started
    if first["resultType"] == "NOT_READY":
        assert list(first) == ["resultType", "nextResultUri"] and waited >= 0.9
        assert first["nextResultUri"] == base + "/0?rowFormat=JSON"
    bodies = walk(client, first["nextResultUri"] if first["resultType"] != "EOS" else "")
    seen = [b["resultType"] for b in bodies]
    assert "NOT_READY" not in seen[1:] and seen[-1] == "EOS"


def test_page_size_is_bounded_by_fetch_max_rows(client: httpx.Client, session: str) -> None:
    bodies = run(client, session, "SELECT id FROM range(2500)")
    assert max(len(b["results"]["data"]) for b in bodies if "results" in b) <= 1000
    assert [r[0] for r in rows(bodies)] == list(range(2500))


def test_arrow_pages_read_back_with_pyarrow(client: httpx.Client, session: str) -> None:
    op = submit(client, session, "SELECT id, CAST(id AS STRING) AS s FROM range(1500)")
    uri: str | None = f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=ARROW"
    tables = []
    while uri:
        response = client.get(uri)
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/vnd.apache.arrow.stream"
        kind = response.headers["x-sparkgate-result-type"]
        uri = response.headers.get("x-sparkgate-next-result-uri")
        if kind == "NOT_READY":
            continue
        assert response.headers["x-sparkgate-is-query-result"] == "true"
        assert response.headers["x-sparkgate-result-kind"] == "SUCCESS_WITH_CONTENT"
        assert "x-sparkgate-job-id" in response.headers
        columns = json.loads(response.headers["x-sparkgate-columns"])
        assert [c["name"] for c in columns] == ["id", "s"]
        table = pa.ipc.open_stream(response.content).read_all()
        assert json.loads(table.schema.metadata[COLUMNS_METADATA_KEY]) == columns
        assert table.column_names == ["id", "s"]
        tables.append(table)
        if kind == "EOS":
            assert uri is None
        else:
            assert uri is not None and uri.endswith("?rowFormat=ARROW")
    data = pa.concat_tables([t for t in tables if t.num_rows], promote_options="default")
    assert data.column("id").to_pylist() == list(range(1500))
    assert data.column("s").to_pylist()[:2] == ["0", "1"]


def first_non_waiting(client: httpx.Client, uri: str) -> httpx.Response:
    """Fetch token 0 until it is no longer NOT_READY."""
    deadline = time.monotonic() + 120
    while True:
        response = client.get(uri)
        if response.status_code != 200 or response.json()["resultType"] != "NOT_READY":
            return response
        assert time.monotonic() < deadline


def test_failed_statement_is_500_with_flinks_stack_trace(
    client: httpx.Client, session: str
) -> None:
    op = submit(client, session, "SELECT * FROM no_such_table_rest")
    uri = f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON"
    response = first_non_waiting(client, uri)
    assert response.status_code == 500
    errors = response.json()["errors"]
    assert errors[0] == "Internal server error."
    trace = errors[1]
    lines = trace.splitlines()
    assert lines[:2] == [SERVER_SIDE_START, f"{FLINK_GATEWAY_EXCEPTION}: Failed to fetchResults."]
    assert lines[-2:] == ["", SERVER_SIDE_END]
    # Every exception of the chain, as in a Java trace, is followed by frame lines.
    blocks = trace.split("\nCaused by: ")
    assert len(blocks) >= 2
    assert all("\n\tat " in block for block in blocks)
    root = blocks[-1].split("\n\tat ")[0]
    assert "AnalysisException: [TABLE_OR_VIEW_NOT_FOUND]" in root
    assert "no_such_table_rest" in root
    # Flink's SQL client prints the root cause, whole, and nothing after it.
    assert flink_client_reason(errors) == root.strip()
    assert client.get(f"/v4/sessions/{session}/operations/{op}/status").json() == {
        "status": "ERROR"
    }


def test_gateway_parse_error_on_fetch_is_a_failed_statement(
    client: httpx.Client, session: str
) -> None:
    op = submit(client, session, "SELECT 'unterminated")
    uri = f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON"
    response = first_non_waiting(client, uri)
    assert response.status_code == 500
    errors = response.json()["errors"]
    assert errors[1].rsplit("Caused by: ", 1)[1].startswith("SqlParseError: ")
    assert flink_client_reason(errors).startswith("SqlParseError: ")
    assert not flink_client_reason(errors).endswith("]")


def test_execution_config_and_timeout(client: httpx.Client, session: str) -> None:
    response = client.post(
        f"/v4/sessions/{session}/statements",
        json={
            "statement": "SELECT current_timezone()",
            "executionTimeout": 60000,
            "executionConfig": {"spark.sql.session.timeZone": "America/Lima"},
        },
    )
    op = response.json()["operationHandle"]
    bodies = walk(client, f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON")
    assert rows(bodies) == [["America/Lima"]]


def test_missing_row_format_falls_back_to_json(client: httpx.Client, session: str) -> None:
    # Flink's handler defaults to JSON; py-flink-sql-gateway fetches later pages without it.
    op = submit(client, session, "SELECT 7 AS seven")
    bodies = walk(client, f"/v4/sessions/{session}/operations/{op}/result/0")
    assert rows(bodies) == [[7]]
    assert all(b["results"]["rowFormat"] == "JSON" for b in bodies if "results" in b)


def test_progress_extension_reports_spark_work(client: httpx.Client, session: str) -> None:
    op = submit(client, session, "SELECT sum(id) FROM range(0, 100000, 1, 4)")
    walk(client, f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON")
    body = client.get(f"/v4/sessions/{session}/operations/{op}/progress").json()
    assert body["status"] == "FINISHED"
    assert body["jobsTotal"] >= 1 and body["tasksDone"] == body["tasksTotal"] >= 1
    assert set(body) >= {"stagesTotal", "stagesDone", "tasksRunning", "elapsed"}
    missing = client.get(f"/v4/sessions/{session}/operations/{uuid.uuid4()}/progress")
    assert missing.status_code == 404


def test_a_declared_timestamp_precision_is_the_columns_and_its_values(
    client: httpx.Client, session: str, tmp_path: Path
) -> None:
    # Flink's TIMESTAMP(3) holds milliseconds: the column says precision 3 and its
    # values show no more digits, though Spark reads (and keeps) microseconds. (A
    # connector's TIMESTAMP column is Spark's TIMESTAMP, an instant: hence the Z.)
    (tmp_path / "rows.csv").write_text(
        "2024-01-02 03:04:05.123456,2024-01-02 03:04:05.120000\n", encoding="utf-8"
    )
    table = f"stamps_{uuid.uuid4().hex[:8]}"
    run(
        client,
        session,
        f"CREATE TEMPORARY TABLE {table} (ms TIMESTAMP(3), us TIMESTAMP(6), "
        "p AS PROCTIME()) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path}', 'format' = 'csv')",
    )
    query = f"SELECT ms, us, p FROM {table}"
    bodies = run(client, session, query)
    columns = next(b["results"]["columns"] for b in bodies if b.get("results", {}).get("columns"))
    precisions = {c["name"]: c["logicalType"]["precision"] for c in columns}
    assert precisions == {"ms": 3, "us": 6, "p": 3}
    [[ms, us, p]] = rows(bodies)
    assert (ms, us) == ("2024-01-02T03:04:05.123Z", "2024-01-02T03:04:05.12Z")
    assert len(p.split(".")[-1].rstrip("Z")) <= 3, p
    [[ms, us, _]] = rows(run(client, session, query, "PLAIN_TEXT"))
    assert (ms, us) == ("2024-01-02 03:04:05.123", "2024-01-02 03:04:05.120000")


def test_a_nested_declared_timestamp_precision_is_its_elements(
    client: httpx.Client, session: str, tmp_path: Path
) -> None:
    # ROW<t TIMESTAMP(3), ...> and ARRAY<TIMESTAMP(3)>: the parts answer as a
    # top-level TIMESTAMP(3) column does, in the type and in every value.
    (tmp_path / "rows.json").write_text(
        '{"r": {"t": "2024-01-02T03:04:05.123456", "n": 1}, '
        '"a": ["2024-01-02T03:04:05.5"], "v": ["x"]}\n',
        encoding="utf-8",
    )
    table = f"nested_{uuid.uuid4().hex[:8]}"
    run(
        client,
        session,
        f"CREATE TEMPORARY TABLE {table} (r ROW<t TIMESTAMP(3), n INT>, "
        "a ARRAY<TIMESTAMP(3)>, v ARRAY<VARCHAR(8)>) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path}', 'format' = 'json')",
    )
    bodies = run(client, session, f"SELECT r, a, v FROM {table}")
    columns = next(b["results"]["columns"] for b in bodies if b.get("results", {}).get("columns"))
    types = {c["name"]: c["logicalType"] for c in columns}
    assert types["r"]["fields"][0]["fieldType"]["precision"] == 3, types["r"]
    assert types["a"]["elementType"]["precision"] == 3, types["a"]
    assert types["v"]["elementType"] == {"type": "VARCHAR", "nullable": True, "length": 8}
    [[r, a, _]] = rows(run(client, session, f"SELECT r, a, v FROM {table}", "PLAIN_TEXT"))
    assert (r, a) == ("(2024-01-02 03:04:05.123, 1)", "[2024-01-02 03:04:05.500]")


def test_a_casts_timestamp_precision_is_the_columns_and_its_values(
    client: httpx.Client, session: str
) -> None:
    # CAST(x AS TIMESTAMP(3)) answers as Flink's TIMESTAMP(3), though Spark's
    # timestamps have no precision: the gateway's rewrite keeps it for the schema.
    value = "'2024-01-02 03:04:05.123456'"
    # After a plain column and a star too, which have no cast of their own.
    query = (
        f"SELECT CAST({value} AS TIMESTAMP(3)) AS a, CAST({value} AS TIMESTAMP_LTZ(0)), "
        f"CAST({value} AS TIMESTAMP(6)) AS c, CAST(CAST({value} AS TIMESTAMP(3)) AS STRING) AS s"
    )
    around = f"SELECT one, *, CAST({value} AS TIMESTAMP(3)) FROM (SELECT 1 AS one)"
    bodies = run(client, session, around)
    columns = next(b["results"]["columns"] for b in bodies if b.get("results", {}).get("columns"))
    assert [(c["name"], c["logicalType"].get("precision")) for c in columns] == [
        ("one", None),
        ("one", None),
        ("EXPR$2", 3),
    ]
    bodies = run(client, session, query)
    columns = next(b["results"]["columns"] for b in bodies if b.get("results", {}).get("columns"))
    types = {c["name"]: c["logicalType"].get("precision") for c in columns}
    assert types == {"a": 3, "EXPR$1": 0, "c": 6, "s": None}
    [row] = rows(run(client, session, query, "PLAIN_TEXT"))
    assert row[:3] == [
        "2024-01-02 03:04:05.123",
        "2024-01-02 03:04:05",
        "2024-01-02 03:04:05.123456",
    ]


@pytest.mark.parametrize(
    ("query", "names"),
    [
        # Flink names a column without an alias EXPR$<position>: an expression, a
        # literal, a call, an aggregate, a cast.
        (
            "SELECT 1, 'a' AS s, 1 + 1, upper('a'), CAST(2 AS STRING) AS c, TRUE",
            ["EXPR$0", "s", "EXPR$2", "EXPR$3", "c", "EXPR$5"],
        ),
        ("SELECT x, x + 1 FROM (SELECT 1 + 1) AS q(x)", ["x", "EXPR$1"]),
        # A cast and a string literal, which Spark names as a column ('x', 'a').
        ("SELECT CAST(x AS STRING), 'a', x FROM (SELECT 1 AS x)", ["EXPR$0", "EXPR$1", "x"]),
        ("SELECT a, count(*) FROM (VALUES (1), (2)) AS t(a) GROUP BY a", ["a", "EXPR$1"]),
        ("SELECT 1 + 1 UNION ALL SELECT 3", ["EXPR$0"]),
    ],
)
def test_a_column_without_a_name_is_named_as_flink_names_it(
    client: httpx.Client, session: str, query: str, names: list[str]
) -> None:
    bodies = run(client, session, query)
    columns = next(b["results"]["columns"] for b in bodies if b.get("results", {}).get("columns"))
    assert [c["name"] for c in columns] == names
