"""Compiled plans on the real engine: COMPILE / EXPLAIN / EXECUTE PLAN, per-node
state TTL observed in the output, and the bad inputs that start nothing."""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from pathlib import Path

import pytest

from sparkgate.api.handles import SessionHandle
from sparkgate.api.results import RowKind
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.streaming.changelog import replay
from tests.service.conftest import error_text
from tests.streaming.conftest import changes, name, run, wait_for

# One-character order ids: at most 62 distinct keys ([a-zA-Z0-9]).
_ORDER_KEYS = 62


def _orders(service: SparkGatewayService, session: SessionHandle, rate: int = 20) -> str:
    table = name("orders")
    run(
        service,
        session,
        f"CREATE TABLE {table} (order_id STRING, user_id STRING, product_id STRING, "
        "num BIGINT, proctime AS PROCTIME()) WITH ('connector' = 'datagen', "
        f"'rows-per-second' = '{rate}', 'fields.order_id.length' = '1', "
        "'fields.user_id.length' = '1', 'fields.product_id.length' = '1', "
        "'fields.num.min' = '1', 'fields.num.max' = '9')",
    )
    return table


def _example_1(orders: str, stats: str) -> str:
    """Seed 004's Example 1: deduplicate, then a group aggregate."""
    return (
        f"INSERT INTO {stats} SELECT product_id, COUNT(DISTINCT user_id) AS buy_uv, "
        "COUNT(order_id) AS order_cnt, SUM(num) AS quantity_cnt FROM (SELECT *, ROW_NUMBER() "
        f"OVER (PARTITION BY order_id ORDER BY proctime ASC) AS rn FROM {orders}) tmp "
        "WHERE rn = 1 GROUP BY product_id"
    )


def _stats(service: SparkGatewayService, session: SessionHandle, connector: str) -> str:
    table = name("stats")
    extra = f", 'print-identifier' = '{table}'" if connector == "print" else ""
    run(
        service,
        session,
        f"CREATE TABLE {table} (product_id STRING, buy_uv BIGINT, order_cnt BIGINT, "
        f"quantity_cnt BIGINT) WITH ('connector' = '{connector}'{extra})",
    )
    return table


def test_compile_writes_a_plan_explain_draws_it(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    orders = _orders(stream_service, session)
    stats = _stats(stream_service, session, "blackhole")
    path = tmp_path / "example.json"
    run(stream_service, session, "SET 'table.exec.state.ttl' = '1 h'")
    compile_ = f"COMPILE PLAN '{path.as_uri()}' FOR {_example_1(orders, stats)}"
    assert run(stream_service, session, compile_) == [("OK",)]
    body = json.loads(path.read_text())
    types = [node["type"] for node in body["nodes"]]
    assert types[0] == "stream-exec-table-source-scan_1"
    assert "stream-exec-deduplicate_1" in types and "stream-exec-group-aggregate_1" in types
    assert types[-1] == "stream-exec-sink_1"
    stateful = [n for n in body["nodes"] if "state" in n]
    assert [s["ttl"] for n in stateful for s in n["state"]] == ["3600000 ms", "3600000 ms"]
    assert {(e["source"], e["target"]) for e in body["edges"]} <= {
        (a["id"], b["id"]) for a in body["nodes"] for b in body["nodes"]
    }
    # Nothing ran.
    assert not [j for j in run(stream_service, session, "SHOW JOBS") if stats in str(j)]

    [(text,)] = run(stream_service, session, f"EXPLAIN PLAN '{path}'")
    assert "Deduplicate(keep=[FirstRow]" in text and "GroupAggregate(groupBy=[product_id]" in text
    assert "deduplicateState: ttl=1 h update=OnWrite time=PROCESSING_TIME" in text
    assert f"TableSourceScan(table=[[spark_catalog, default, {orders}]]" in text

    # An existing file: an error, kept with IF NOT EXISTS, replaced with force-recompile.
    assert "Cannot overwrite the plan file" in error_text(stream_service, session, compile_)
    run(stream_service, session, "SET 'table.exec.state.ttl' = '2 h'")
    before = path.read_text()
    if_not_exists = compile_.replace("' FOR", "' IF NOT EXISTS FOR", 1)
    assert run(stream_service, session, if_not_exists) == [("OK",)]
    assert path.read_text() == before
    run(stream_service, session, "SET 'table.plan.force-recompile' = 'true'")
    try:
        run(stream_service, session, compile_)
        again = path.read_text()
        assert "7200000 ms" in again and "3600000 ms" not in again
        # Stable ids and order: compiling again gives the same document.
        run(stream_service, session, compile_)
        assert path.read_text() == again
    finally:
        run(stream_service, session, "RESET 'table.plan.force-recompile'")
        run(stream_service, session, "RESET 'table.exec.state.ttl'")


def test_bad_plans_start_nothing(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    jobs_before = len(run(stream_service, session, "SHOW JOBS"))
    missing = tmp_path / "missing.json"
    assert "does not exist" in error_text(stream_service, session, f"EXECUTE PLAN '{missing}'")
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{ not json")
    assert "is not JSON" in error_text(stream_service, session, f"EXECUTE PLAN '{garbage}'")
    text = error_text(stream_service, session, "EXPLAIN PLAN 'nosuchfs://host/p.json'")
    assert "No file system serves" in text and "nosuchfs" in text
    text = error_text(stream_service, session, f"COMPILE PLAN '{tmp_path / 's.json'}' FOR SELECT 1")
    assert "compiles an INSERT or a statement set" in text

    orders = _orders(stream_service, session)
    stats = _stats(stream_service, session, "blackhole")
    path = tmp_path / "plan.json"
    run(stream_service, session, f"COMPILE PLAN '{path}' FOR {_example_1(orders, stats)}")
    body = json.loads(path.read_text())
    dedup = next(n for n in body["nodes"] if n["type"] == "stream-exec-deduplicate_1")
    dedup["state"][0]["ttl"] = "-3 s"
    edited = tmp_path / "negative.json"
    edited.write_text(json.dumps(body))
    text = error_text(stream_service, session, f"EXECUTE PLAN '{edited}'")
    assert f"node {dedup['id']}: state[0].ttl must not be negative" in text
    body["planVersion"] = 7
    edited.write_text(json.dumps(body))
    assert "unknown plan version 7" in error_text(
        stream_service, session, f"EXECUTE PLAN '{edited}'"
    )

    run(stream_service, session, f"DROP TABLE {orders}")
    text = error_text(stream_service, session, f"EXPLAIN PLAN '{path}'")
    assert "node 1: the table" in text and "does not exist" in text
    assert len(run(stream_service, session, "SHOW JOBS")) == jobs_before


_PRINTED = re.compile(r"^(\S+)> ([+-][IUD])\[(.*)\]$")


def test_example_1_dedup_forgets_after_its_ttl_while_the_aggregate_keeps_counting(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Seed 004 Example 1 with the deduplication's TTL edited to 1 s in the plan
    and a long one on the aggregate: an order id seen again after 1 s passes the
    deduplication again, and the aggregate counts it on top of what it kept."""
    orders = _orders(stream_service, session)
    stats = _stats(stream_service, session, "print")
    path = tmp_path / "example.json"
    run(stream_service, session, "SET 'table.exec.state.ttl' = '1 d'")
    try:
        run(stream_service, session, f"COMPILE PLAN '{path}' FOR {_example_1(orders, stats)}")
    finally:
        run(stream_service, session, "RESET 'table.exec.state.ttl'")
    body = json.loads(path.read_text())
    dedup = next(n for n in body["nodes"] if n["type"] == "stream-exec-deduplicate_1")
    dedup["state"][0]["ttl"] = "1 s"
    path.write_text(json.dumps(body, indent=2))
    [(text,)] = run(stream_service, session, f"EXPLAIN PLAN '{path}'")
    assert "deduplicateState: ttl=1 s" in text and "groupAggregateState: ttl=1 d" in text

    caplog.set_level(logging.INFO, logger="sparkgate.print")
    [(job_id,)] = run(stream_service, session, f"EXECUTE PLAN '{path}'")
    latest: dict[str, int] = {}
    history: dict[str, list[int]] = {}

    def counted() -> int:
        for record in caplog.records:
            match = _PRINTED.match(record.getMessage())
            if match is None or match.group(1) != stats or match.group(2) in ("-U", "-D"):
                continue
            product, _uv, count, _qty = match.group(3).split(", ")
            history.setdefault(product, []).append(int(count))
            latest[product] = int(count)
        caplog.clear()
        return sum(latest.values())

    try:
        assert wait_for(lambda: counted() > _ORDER_KEYS + 20, timeout=180), latest
    finally:
        run(stream_service, session, f"STOP JOB '{job_id}'")
    # More orders than there are order ids: ids were let through again after 1 s;
    # and no product's count ever went back (the aggregate's state was kept).
    assert sum(latest.values()) > _ORDER_KEYS
    assert all(counts == sorted(counts) for counts in history.values()), history


def _file_table(service: SparkGatewayService, session: SessionHandle, path: Path, rows: str) -> str:
    table = name("fs")
    run(
        service,
        session,
        f"CREATE TABLE {table} (k STRING, v BIGINT) WITH ('connector' = 'filesystem', "
        f"'path' = '{path}', 'format' = 'csv')",
    )
    run(service, session, "SET 'execution.runtime-mode' = 'batch'")
    run(service, session, f"INSERT INTO {table} VALUES {rows}")
    return table


@pytest.mark.parametrize(
    "query",
    [
        "SELECT k, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS lo, MAX(v) AS hi, AVG(v) AS a, "
        "COUNT(DISTINCT v) AS d FROM {a} GROUP BY k",
        "SELECT k, v, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn "
        "FROM {a}) t WHERE rn <= 2",
        "SELECT a.k, a.v, b.v AS w FROM {a} a JOIN {b} b ON a.k = b.k AND a.v < b.v",
        "SELECT a.k, a.v, b.v AS w FROM {a} a LEFT JOIN {b} b ON a.k = b.k",
        "SELECT k, n, COUNT(*) AS c FROM (SELECT k, COUNT(*) AS n FROM {a} GROUP BY k) "
        "GROUP BY k, n",
    ],
)
def test_with_long_ttls_results_equal_sparks_own(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path, query: str
) -> None:
    """Differential: the gateway's TTL operators against Spark's batch answer."""
    a = _file_table(
        stream_service,
        session,
        tmp_path / "a",
        "('x', 1), ('x', 5), ('y', 2), ('y', 2), ('z', 7), ('x', 3), ('w', 4)",
    )
    b = _file_table(
        stream_service, session, tmp_path / "b", "('x', 4), ('y', 9), ('y', 1), ('q', 3)"
    )
    text = query.format(a=a, b=b)
    expected = _normalised(Counter(tuple(r) for r in run(stream_service, session, text)))
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    run(stream_service, session, "SET 'table.exec.state.ttl' = '1 d'")
    try:
        op = stream_service.execute_statement(session, text)
        got = changes(
            stream_service, session, op, until=lambda c: _replayed(c) == expected, timeout=180
        )
        stream_service.close_operation(session, op)
    finally:
        run(stream_service, session, "RESET 'table.exec.state.ttl'")
        run(stream_service, session, "RESET 'execution.runtime-mode'")
    # The changelog, replayed, is Spark's answer (retractions included).
    assert _replayed(got) == expected


def _normal(value: object) -> object:
    return round(value, 6) if isinstance(value, float) else value


def _replayed(got: list[tuple[RowKind, tuple[object, ...]]]) -> Counter[tuple[object, ...]]:
    return _normalised(replay(got))  # type: ignore[arg-type]


def _normalised(rows: Counter[tuple[object, ...]]) -> Counter[tuple[object, ...]]:
    return Counter({tuple(_normal(v) for v in row): n for row, n in rows.items()})
