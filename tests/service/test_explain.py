"""Flink's EXPLAIN forms: Spark's plans under Flink's section headings; nothing runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkgate.api.errors import ExecutionError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import EndpointVersion, SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from tests.service.conftest import fetch_all, run, unique_name

HEADINGS = (
    "== Abstract Syntax Tree ==",
    "== Optimized Physical Plan ==",
    "== Optimized Execution Plan ==",
)


@pytest.fixture(scope="module")
def tables(
    service: SparkGatewayService, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str, Path]]:
    source, sink = unique_name("explain_src"), unique_name("explain_sink")
    out = tmp_path_factory.mktemp("explain-sink")
    session = service.open_session(SessionEnvironment(session_name="explain"))
    run(
        service,
        session,
        f"CREATE TABLE {source} (k STRING, v INT) "
        "WITH ('connector' = 'datagen', 'number-of-rows' = '5')",
    )
    run(
        service,
        session,
        f"CREATE TABLE {sink} (k STRING, v INT) "
        f"WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json')",
    )
    yield source, sink, out
    run(service, session, f"DROP TABLE {source}")
    run(service, session, f"DROP TABLE {sink}")
    service.close_session(session)


def explained(service: SparkGatewayService, session: SessionHandle, statement: str) -> str:
    op = service.execute_statement(session, statement)
    first, rows = fetch_all(service, session, op)
    assert first.schema.names == ("result",) and len(rows) == 1
    return str(rows[0][0])


def sections(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("== ")]


@pytest.mark.parametrize("form", ["EXPLAIN", "EXPLAIN PLAN FOR", "EXPLAIN EXECUTE"])
def test_a_query_in_flinks_sections(
    service: SparkGatewayService, session: SessionHandle, tables: tuple[str, str, Path], form: str
) -> None:
    source = tables[0]
    text = explained(service, session, f"{form} SELECT k, count(*) FROM {source} GROUP BY k")
    assert sections(text) == list(HEADINGS)
    ast = text.split(HEADINGS[1])[0]
    assert f"SubqueryAlias {source}" in ast and "Range (0, 5" in ast
    assert "__sparkgate_" not in ast  # the views connector tables are read through
    assert "Aggregate" in text.split(HEADINGS[1])[1]
    assert "HashAggregate" in text.split(HEADINGS[2])[1]


def test_the_details(
    service: SparkGatewayService, session: SessionHandle, tables: tuple[str, str, Path]
) -> None:
    source = tables[0]
    query = f"SELECT k, count(*) FROM {source} GROUP BY k"
    cost = explained(service, session, f"EXPLAIN ESTIMATED_COST {query}")
    assert "Statistics(sizeInBytes=" in cost.split(HEADINGS[1])[1]
    advice = explained(service, session, f"EXPLAIN PLAN_ADVICE {query}")
    assert "== Optimized Physical Plan With Advice ==" in sections(advice)
    plan = explained(service, session, f"EXPLAIN JSON_EXECUTION_PLAN {query}")
    assert sections(plan)[-1] == "== Physical Execution Plan =="
    nodes = json.loads(plan.split("== Physical Execution Plan ==")[1])["nodes"]
    assert nodes[0]["pact"] == "Data Source" and nodes[-1]["type"] == "HashAggregate"
    assert any(p["ship_strategy"] == "HASH" for node in nodes for p in node.get("predecessors", []))
    streaming = service.open_session(
        SessionEnvironment(
            session_name="explain-streaming",
            config={"execution.runtime-mode": "streaming"},
        )
    )
    changelog = explained(service, streaming, f"EXPLAIN CHANGELOG_MODE, ESTIMATED_COST {query}")
    optimized = changelog.split(HEADINGS[1])[1].split(HEADINGS[2])[0].strip().splitlines()
    assert optimized[0].endswith("changelogMode=[I,UB,UA]")  # the aggregation
    assert optimized[-1].endswith("changelogMode=[I]")  # its source
    with pytest.raises(ExecutionError, match="JSON_EXECUTION_PLAN explains batch queries"):
        explained(service, streaming, f"EXPLAIN JSON_EXECUTION_PLAN {query}")
    service.close_session(streaming)


def test_inserts_and_statement_sets_are_explained_not_run(
    service: SparkGatewayService, session: SessionHandle, tables: tuple[str, str, Path]
) -> None:
    source, sink, out = tables
    insert = f"INSERT INTO {sink} SELECT * FROM {source}"
    for statement in (
        f"EXPLAIN {insert}",
        f"EXPLAIN EXECUTE {insert}",
        f"EXPLAIN STATEMENT SET BEGIN {insert}; {insert}; END",
    ):
        text = explained(service, session, statement)
        ast = text.split(HEADINGS[1])[0]
        assert ast.count(f"Sink(table=[{sink}]") == (2 if "STATEMENT SET" in statement else 1)
    assert not [p for p in out.rglob("*") if p.is_file()]  # nothing was written
    assert run(service, session, f"SELECT count(*) FROM {sink}") == [(0,)]
    with pytest.raises(ExecutionError, match="EXPLAIN explains a query, an INSERT"):
        explained(service, session, "EXPLAIN CREATE TABLE never_made (a INT)")


def test_hiveserver2_sessions_keep_sparks_explain(service: SparkGatewayService) -> None:
    hive = EndpointVersion("hiveserver2", "HIVE_CLI_SERVICE_PROTOCOL_V10")
    session = service.open_session(SessionEnvironment(session_name="h", endpoint_version=hive))
    op = service.execute_statement(session, "EXPLAIN SELECT 1")
    first, rows = fetch_all(service, session, op)
    assert first.schema.names == ("plan",)
    assert str(rows[0][0]).startswith("== Physical Plan ==")
    service.close_session(session)
