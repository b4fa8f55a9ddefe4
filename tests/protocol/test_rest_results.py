"""REST result pages: tokens, nextResultUri, body shapes and row formats, over the double."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pyarrow as pa
import pytest

from sparkgate.api.results import RowKind
from sparkgate.api.types import BIGINT, INT, STRING, LocalZonedTimestampType, ResultSchema
from sparkgate.endpoints.rest.results import (
    ARROW_MEDIA_TYPE,
    COLUMNS_METADATA_KEY,
    ROW_KIND_COLUMN,
)
from tests.doubles import Canned, FakeGatewayService, InProcessClient

SCHEMA = ResultSchema.of(("id", INT), ("name", STRING))
ROWS = [(1, "one"), (2, None), (3, "three")]


def submit(http: InProcessClient, session: str, statement: str) -> str:
    response = http.post(f"/v4/sessions/{session}/statements", json={"statement": statement})
    assert response.status_code == 200, response.text
    return str(response.json()["operationHandle"])


def walk(http: InProcessClient, uri: str | None) -> list[dict[str, Any]]:
    bodies = []
    while uri is not None:
        response = http.get(uri)
        assert response.status_code == 200, response.text
        bodies.append(response.json())
        uri = bodies[-1].get("nextResultUri")
        assert len(bodies) < 50, "no end of stream"
    return bodies


@pytest.mark.parametrize("version", ["v1", "v2", "v3", "v4"])
def test_pages_follow_next_result_uri_to_eos(
    http: InProcessClient, service: FakeGatewayService, session: str, version: str
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS, page_rows=2)
    op = submit(http, session, "SELECT rows")
    base = f"/{version}/sessions/{session}/operations/{op}/result"
    first = f"{base}/0" if version == "v1" else f"{base}/0?rowFormat=JSON"
    bodies = walk(http, first)
    assert [b["resultType"] for b in bodies] == ["PAYLOAD", "PAYLOAD", "EOS"]
    suffix = "" if version == "v1" else "?rowFormat=JSON"
    assert [b.get("nextResultUri") for b in bodies] == [
        f"{base}/1{suffix}",
        f"{base}/2{suffix}",
        None,
    ]
    data = [row for b in bodies for row in b["results"]["data"]]
    assert data == [{"kind": "INSERT", "fields": list(row)} for row in ROWS]
    # The endpoint asks for its fetch-max-rows and waits its fetch-timeout.
    fetches = service.called("fetch_results")
    assert [c.args[2:] for c in fetches] == [(0, 1000), (1, 1000), (2, 1000)]
    assert {c.kwargs["wait"] for c in fetches} == {0.0}


def test_body_keys_in_flinks_wire_order(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.results["INSERT INTO t SELECT 1"] = Canned(
        schema=ResultSchema.of(("job id", STRING)), rows=(("a" * 32,),), job_id="a" * 32
    )
    op = submit(http, session, "INSERT INTO t SELECT 1")
    payload, eos = walk(http, f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON")
    assert list(payload) == [
        "resultType",
        "isQueryResult",
        "jobID",
        "resultKind",
        "results",
        "nextResultUri",
    ]
    assert payload["isQueryResult"] is False and payload["jobID"] == "a" * 32
    assert payload["resultKind"] == "SUCCESS_WITH_CONTENT"
    assert list(payload["results"]) == ["columns", "rowFormat", "data"]
    assert payload["results"]["columns"] == [
        {
            "name": "job id",
            "logicalType": {"type": "VARCHAR", "nullable": True, "length": 2147483647},
            "comment": None,
        }
    ]
    assert "nextResultUri" not in eos and eos["results"]["data"] == []


def test_not_ready_answers_only_type_and_the_same_token(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.results["SELECT later"] = Canned.query(SCHEMA, ROWS[:1], not_ready=2)
    op = submit(http, session, "SELECT later")
    uri = f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON"
    assert http.get(uri).json() == {"resultType": "NOT_READY", "nextResultUri": uri}
    bodies = walk(http, uri)
    assert [b["resultType"] for b in bodies] == ["NOT_READY", "PAYLOAD", "EOS"]


def test_last_token_again_replays_its_page_and_other_tokens_are_refused(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS, page_rows=1)
    op = submit(http, session, "SELECT rows")
    base = f"/v4/sessions/{session}/operations/{op}/result"
    first = http.get(f"{base}/0?rowFormat=JSON").json()
    assert http.get(f"{base}/0?rowFormat=JSON").json() == first
    for token in ("5", "x", "-1"):
        response = http.get(f"{base}/{token}?rowFormat=JSON")
        assert response.status_code == 400, (token, response.text)
        assert "token" in response.json()["errors"][0]


@pytest.mark.parametrize(("raw", "format_name"), [(None, "JSON"), ("plain_text", "PLAIN_TEXT")])
def test_row_format_defaults_to_json_and_ignores_case(
    http: InProcessClient,
    service: FakeGatewayService,
    session: str,
    raw: str | None,
    format_name: str,
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS)
    op = submit(http, session, "SELECT rows")
    query = "" if raw is None else f"?rowFormat={raw}"
    body = http.get(f"/v4/sessions/{session}/operations/{op}/result/0{query}").json()
    assert body["results"]["rowFormat"] == format_name
    assert body["nextResultUri"].endswith(f"/result/1?rowFormat={format_name}")
    if format_name == "PLAIN_TEXT":
        assert body["results"]["data"][1] == {"kind": "INSERT", "fields": ["2", None]}


def test_unknown_row_format_is_400(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS)
    op = submit(http, session, "SELECT rows")
    response = http.get(f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=CSV")
    assert response.status_code == 400
    assert "Invalid rowFormat" in response.json()["errors"][0]
    assert not service.called("fetch_results")


def test_changelog_rows_carry_their_kinds(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    kinds = (RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE)
    rows = [(1, "a"), (1, "a"), (1, "b"), (1, "b")]
    service.results["SELECT stream"] = Canned.query(SCHEMA, rows, kinds=kinds)
    op = submit(http, session, "SELECT stream")
    [payload, _] = walk(http, f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON")
    assert [r["kind"] for r in payload["results"]["data"]] == [k.name for k in kinds]


def test_arrow_pages_are_ipc_streams_with_the_facts_in_headers(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    kinds = (RowKind.INSERT, RowKind.DELETE, RowKind.INSERT)
    service.results["SELECT stream"] = Canned.query(SCHEMA, ROWS, kinds=kinds, job_id="j" * 32)
    op = submit(http, session, "SELECT stream")
    response = http.get(f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=ARROW")
    assert response.status_code == 200
    assert response.headers["content-type"] == ARROW_MEDIA_TYPE
    assert response.headers["x-sparkgate-result-type"] == "PAYLOAD"
    assert response.headers["x-sparkgate-is-query-result"] == "true"
    assert response.headers["x-sparkgate-job-id"] == "j" * 32
    assert response.headers["x-sparkgate-next-result-uri"].endswith("/result/1?rowFormat=ARROW")
    assert json.loads(response.headers["x-sparkgate-columns"]) == SCHEMA.to_json()
    table = pa.ipc.open_stream(response.content).read_all()
    assert table.column_names == ["id", "name", ROW_KIND_COLUMN]
    assert table.to_pylist() == [
        {"id": 1, "name": "one", ROW_KIND_COLUMN: "+I"},
        {"id": 2, "name": None, ROW_KIND_COLUMN: "-D"},
        {"id": 3, "name": "three", ROW_KIND_COLUMN: "+I"},
    ]
    assert json.loads(table.schema.metadata[COLUMNS_METADATA_KEY]) == SCHEMA.to_json()


def test_local_zoned_timestamps_render_in_the_sessions_zone(
    http: InProcessClient, service: FakeGatewayService
) -> None:
    schema = ResultSchema.of(("ts", LocalZonedTimestampType(6)), ("n", BIGINT))
    instant = dt.datetime(2024, 1, 1, 0, 0, tzinfo=dt.timezone.utc)
    service.results["SELECT ts"] = Canned.query(schema, [(instant, 1)])
    rendered = {}
    for zone in ("UTC", "Asia/Tokyo"):
        handle = http.post(
            "/v4/sessions", json={"properties": {"spark.sql.session.timeZone": zone}}
        ).json()["sessionHandle"]
        op = submit(http, handle, "SELECT ts")
        uri = f"/v4/sessions/{handle}/operations/{op}/result/0?rowFormat=PLAIN_TEXT"
        rendered[zone] = http.get(uri).json()["results"]["data"][0]["fields"][0]
    assert rendered["UTC"].startswith("2024-01-01 00:00:00")
    assert rendered["Asia/Tokyo"].startswith("2024-01-01 09:00:00")


def test_results_without_local_zoned_timestamps_never_read_the_session_config(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS)
    op = submit(http, session, "SELECT rows")
    walk(http, f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=PLAIN_TEXT")
    assert not service.called("get_session_config")
