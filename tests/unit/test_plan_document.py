"""Compiled plans without Spark: the statements' forms, the JSON document and its
checks, and Flink's STATE_TTL hint."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from sparkgate.api.errors import PlanError, SqlParseError
from sparkgate.service.plan import document as d
from sparkgate.service.plan.document import Edge, Node, Plan, StateSpec
from sparkgate.service.plan.hints import state_ttl_hints
from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.parser import parse_statement


def _plan(ttl: timedelta = timedelta(hours=1)) -> Plan:
    row = (("k", "STRING"), ("n", "BIGINT"))
    nodes = (
        Node(1, d.SCAN, "TableSourceScan", row, 0, fields={"table": {"identifier": ["t"]}}),
        Node(
            2,
            d.GROUP_AGGREGATE,
            "GroupAggregate",
            row,
            1,
            (StateSpec(0, "groupAggregateState", ttl),),
            {"grouping": [0], "aggCalls": []},
        ),
        Node(3, d.SINK, "Sink", row, 1, fields={"table": {"identifier": ["s"]}}),
    )
    return Plan("INSERT INTO s ...", nodes, (Edge(1, 2), Edge(2, 3)))


@pytest.mark.parametrize(
    ("text", "uri", "if_not_exists", "execute", "inserts"),
    [
        (
            "COMPILE PLAN '/tmp/p.json' FOR INSERT INTO s SELECT * FROM t",
            "/tmp/p.json",
            False,
            False,
            1,
        ),
        (
            "COMPILE PLAN 'file:///p.json' IF NOT EXISTS FOR INSERT INTO s SELECT 1",
            "file:///p.json",
            True,
            False,
            1,
        ),
        (
            "COMPILE AND EXECUTE PLAN 'p.json' FOR STATEMENT SET BEGIN "
            "INSERT INTO a SELECT 1; INSERT INTO b SELECT 2; END",
            "p.json",
            False,
            True,
            2,
        ),
        (
            "COMPILE PLAN 'p.json' FOR EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END",
            "p.json",
            False,
            False,
            1,
        ),
    ],
)
def test_compile_forms(
    text: str, uri: str, if_not_exists: bool, execute: bool, inserts: int
) -> None:
    statement = parse_statement(text)
    assert isinstance(statement, k.CompilePlan)
    assert (statement.uri, statement.if_not_exists, statement.execute) == (
        uri,
        if_not_exists,
        execute,
    )
    assert len(statement.inserts) == inserts


def test_execute_and_explain_forms() -> None:
    assert parse_statement("EXECUTE PLAN 's3a://b/p.json'") == k.ExecutePlan(
        "EXECUTE PLAN 's3a://b/p.json'", "s3a://b/p.json"
    )
    explain = parse_statement("EXPLAIN PLAN '/tmp/p.json';")
    assert isinstance(explain, k.ExplainPlan) and explain.uri == "/tmp/p.json"
    # Spark's own EXPLAIN modes are untouched; a plain EXPLAIN is Flink's.
    assert isinstance(parse_statement("EXPLAIN EXTENDED SELECT 1"), k.SparkQuery)
    assert isinstance(parse_statement("EXPLAIN SELECT 1"), k.Explain)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("COMPILE PLAN FOR INSERT INTO s SELECT 1", "quoted string"),
        ("COMPILE PLAN 'p.json' FOR SELECT 1", "compiles an INSERT or a statement set"),
        ("COMPILE PLAN 'p.json' INSERT INTO s SELECT 1", "expected FOR"),
        ("COMPILE PLAN '' FOR INSERT INTO s SELECT 1", "empty"),
        ("EXECUTE PLAN 'p.json' now", "unexpected input"),
    ],
)
def test_bad_forms(text: str, message: str) -> None:
    with pytest.raises(SqlParseError, match=message):
        parse_statement(text)


def test_document_round_trip_is_stable() -> None:
    plan = _plan()
    text = plan.to_json()
    again = Plan.from_json(text)
    assert again.to_json() == text
    body = json.loads(text)
    assert body["planVersion"] == d.PLAN_VERSION
    [state] = body["nodes"][1]["state"]
    assert state == {
        "index": 0,
        "ttl": "3600000 ms",
        "name": "groupAggregateState",
        "ttlUpdate": "OnWrite",
        "ttlTime": "PROCESSING_TIME",
    }


def _edited(change: object) -> str:
    body = json.loads(_plan().to_json())
    change(body)  # type: ignore[operator]
    return json.dumps(body)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "is not JSON"),
        ("[1]", "a plan is a JSON object"),
        (_edited(lambda b: b.update(planVersion=99)), "unknown plan version 99"),
        (_edited(lambda b: b.pop("planVersion")), "planVersion is missing"),
        (
            _edited(lambda b: b["nodes"][1]["state"][0].update(ttl="-5 s")),
            r"node 2: state\[0\].ttl must not be negative",
        ),
        (
            _edited(lambda b: b["nodes"][1]["state"][0].update(ttl="soon")),
            r"node 2: state\[0\].ttl is not a duration",
        ),
        (
            _edited(lambda b: b["nodes"][1]["state"][0].update(ttlUpdate="OnWhim")),
            "ttlUpdate 'OnWhim'",
        ),
        (_edited(lambda b: b["nodes"][1]["state"][0].update(ttlTime="LUNAR")), "ttlTime 'LUNAR'"),
        (
            _edited(lambda b: b["nodes"][1].update(type="stream-exec-magic_1")),
            "node 2: unknown node type",
        ),
        (_edited(lambda b: b["edges"].append({"source": 1, "target": 9})), "names node 9"),
        (_edited(lambda b: b["nodes"].pop()), "names node 3"),
    ],
)
def test_bad_documents_name_the_field(text: str, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        Plan.from_json(text)


def test_a_plan_without_state_runs_with_the_session_ttl() -> None:
    """Fields are only ever added: a plan without ``state`` (an older or trimmed
    one) gets the session's ``table.exec.state.ttl``, Flink's rule for plans
    compiled before FLIP-292."""
    body = json.loads(_plan().to_json())
    del body["nodes"][1]["state"]
    for node in body["nodes"]:
        node.pop("description", None)
    plan = Plan.from_json(json.dumps(body)).with_ttl(timedelta(seconds=5))
    [spec] = plan.node(2).state or ()
    assert spec.ttl == timedelta(seconds=5)
    assert (spec.ttl_update, spec.ttl_time) == ("OnWrite", "PROCESSING_TIME")


def test_state_ttl_hints_are_read_and_removed() -> None:
    text = (
        "SELECT /*+ STATE_TTL('o' = '1d', \"c\" = '12 h'), BROADCAST(c) */ * "
        "FROM o JOIN c ON o.k = c.k"
    )
    stripped, ttls = state_ttl_hints(text)
    assert ttls == {"o": timedelta(days=1), "c": timedelta(hours=12)}
    assert "STATE_TTL" not in stripped and "BROADCAST(c)" in stripped
    assert state_ttl_hints("SELECT 1") == ("SELECT 1", {})
    with pytest.raises(SqlParseError, match="must not be negative"):
        state_ttl_hints("SELECT /*+ STATE_TTL('o' = '-1 s') */ 1")
    with pytest.raises(SqlParseError, match="pairs"):
        state_ttl_hints("SELECT /*+ STATE_TTL('o', '1 s') */ 1")
