"""Compiled plans on the real engine: COMPILE / EXPLAIN / EXECUTE PLAN, per-node
state TTL observed in the output, and the bad inputs that start nothing."""

from __future__ import annotations

import json
import logging
import re
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from sparkgate.api.handles import SessionHandle
from sparkgate.api.results import RowKind
from sparkgate.client.embedded import EmbeddedExecutor
from sparkgate.client.rest import RestExecutor
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.streaming.changelog import replay
from tests.client.helpers import text_client
from tests.rest.conftest import settings
from tests.service.conftest import error_text
from tests.streaming.conftest import changes, name, run, wait_for, wait_job

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
        "SELECT a.k, a.v, b.v AS w FROM {a} a RIGHT JOIN {b} b ON a.k = b.k",
        "SELECT a.k, b.k AS bk, a.v, b.v AS w FROM {a} a FULL JOIN {b} b ON a.k = b.k",
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
    # A bounded source ends the changelog (EOS), as in Spark's own execution.
    got, columns = _streamed(stream_service, session, text, ttl="1 d")
    assert len(columns) == len(next(iter(expected))), columns  # no kind column
    # The changelog, replayed, is Spark's answer (retractions included).
    assert _replayed(got) == expected


@pytest.mark.parametrize(
    "query",
    [
        "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn "
        "FROM {a}) t WHERE rn = 1",
        "SELECT k, v, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn "
        "FROM {a}) t WHERE rn <= 2",
        "SELECT a.k, a.v, b.v AS w FROM {a} a LEFT JOIN {b} b ON a.k = b.k",
    ],
)
def test_deduplication_top_n_and_outer_joins_run_in_streaming_mode_without_a_ttl(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path, query: str
) -> None:
    # Spark's streaming has no ROW_NUMBER (NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING)
    # and no outer join of two streams without watermarks; Flink's deduplication,
    # Top-N and regular joins run on the gateway's operators, state kept.
    a = _file_table(
        stream_service, session, tmp_path / "a", "('x', 1), ('x', 5), ('y', 2), ('x', 3)"
    )
    b = _file_table(stream_service, session, tmp_path / "b", "('x', 4), ('q', 3)")
    text = query.format(a=a, b=b)
    expected = _normalised(Counter(tuple(r) for r in run(stream_service, session, text)))
    got, _ = _streamed(stream_service, session, text)
    assert _replayed(got) == expected


def _streamed(
    service: SparkGatewayService, session: SessionHandle, query: str, ttl: str | None = None
) -> tuple[list[tuple[RowKind, tuple[object, ...]]], tuple[str, ...]]:
    """A query's changelog to its end in streaming mode (with ``ttl``: that state
    TTL), and its result's column names; the session's settings restored."""
    run(service, session, "SET 'execution.runtime-mode' = 'streaming'")
    if ttl is not None:
        run(service, session, f"SET 'table.exec.state.ttl' = '{ttl}'")
    try:
        op = service.execute_statement(session, query)
        got = changes(service, session, op, timeout=180)
        return got, tuple(service.get_operation_result_schema(session, op).names)
    finally:
        run(service, session, "RESET 'table.exec.state.ttl'")
        run(service, session, "RESET 'execution.runtime-mode'")


def _normal(value: object) -> object:
    return round(value, 6) if isinstance(value, float) else value


def _replayed(got: list[tuple[RowKind, tuple[object, ...]]]) -> Counter[tuple[object, ...]]:
    return _normalised(replay(got))  # type: ignore[arg-type]


def _normalised(rows: Counter[tuple[object, ...]]) -> Counter[tuple[object, ...]]:
    return Counter({tuple(_normal(v) for v in row): n for row, n in rows.items()})


# -- TTL observed over time: sources whose files the test writes when it wants ------


class _Feed:
    """A monitored filesystem table whose CSV files the test drops in one by one."""

    def __init__(
        self,
        service: SparkGatewayService,
        session: SessionHandle,
        path: Path,
        columns: str,
        extra: str = "",
    ) -> None:
        self.table = name("feed")
        self.path = path
        self.count = 0
        path.mkdir(parents=True)
        run(
            service,
            session,
            f"CREATE TABLE {self.table} ({columns}{extra}) WITH ('connector' = 'filesystem', "
            f"'path' = '{path}', 'format' = 'csv', 'source.monitor-interval' = '1 s')",
        )

    def drop(self, *rows: str) -> None:
        self.count += 1
        aside = self.path / f".part-{self.count}.tmp"
        aside.write_text("".join(f"{row}\n" for row in rows))
        aside.rename(self.path / f"part-{self.count:04d}.csv")


class _Printed:
    """The rows a print table's job printed (through the ``sparkgate.print`` logger)."""

    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        caplog.set_level(logging.INFO, logger="sparkgate.print")
        self.caplog = caplog
        self.rows: dict[str, list[tuple[str, list[str]]]] = {}

    def of(self, table: str) -> list[tuple[str, list[str]]]:
        for record in self.caplog.records:
            match = _PRINTED.match(record.getMessage())
            if match is not None:
                self.rows.setdefault(match.group(1), []).append(
                    (match.group(2), match.group(3).split(", "))
                )
        self.caplog.clear()
        return self.rows.get(table, [])

    def wait(self, table: str, predicate: Callable[[list[tuple[str, list[str]]]], bool]) -> None:
        assert wait_for(lambda: predicate(self.of(table)), timeout=120), self.of(table)


def _print_table(service: SparkGatewayService, session: SessionHandle, columns: str) -> str:
    table = name("out")
    run(
        service,
        session,
        f"CREATE TABLE {table} ({columns}) WITH ('connector' = 'print', "
        f"'print-identifier' = '{table}')",
    )
    return table


def _edited_plan(
    service: SparkGatewayService,
    session: SessionHandle,
    path: Path,
    insert: str,
    edit: Callable[[dict[str, Any]], None],
) -> Path:
    """COMPILE PLAN ``insert`` to ``path``, then change the stateful node's states."""
    run(service, session, f"COMPILE PLAN '{path}' FOR {insert}")
    body = json.loads(path.read_text())
    [node] = [n for n in body["nodes"] if "state" in n]
    edit(node)
    path.write_text(json.dumps(body, indent=2))
    return path


def _dedup(feed: str, out: str) -> str:
    return (
        f"INSERT INTO {out} SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k "
        f"ORDER BY proctime) AS rn FROM {feed}) WHERE rn = 1"
    )


def _keys(rows: list[tuple[str, list[str]]], key: str) -> list[str]:
    return [values[1] for kind, values in rows if values[0] == key and kind == "+I"]


def test_on_read_write_extends_a_key_s_life_on_create_does_not(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Seed 001's policies on one input sequence, in one job (two deduplications
    of one source, so both see the same micro-batch times): a key read (a
    duplicate seen) 10 s after it was kept and seen again 10 s later, with a
    20 s TTL. Under OnCreate it expired 20 s after creation and passes again;
    under OnReadWrite the read moved its expiry, so it is still a duplicate."""
    printed = _Printed(caplog)
    feed = _Feed(
        stream_service, session, tmp_path / "in", "k STRING, v BIGINT", ", proctime AS PROCTIME()"
    )
    out = _print_table(stream_service, session, "k STRING, v BIGINT, policy STRING")
    policies = ("OnCreate", "OnReadWrite")
    branches = " UNION ALL ".join(
        f"SELECT k, v, '{policy}' AS policy FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k "
        f"ORDER BY proctime) AS rn FROM {feed.table}) WHERE rn = 1"
        for policy in policies
    )
    path = tmp_path / "policies.json"
    run(stream_service, session, f"COMPILE PLAN '{path}' FOR INSERT INTO {out} {branches}")
    body = json.loads(path.read_text())
    dedups = [n for n in body["nodes"] if n["type"] == "stream-exec-deduplicate_1"]
    assert len(dedups) == 2
    for node, policy in zip(dedups, policies, strict=True):
        node["state"][0].update(ttl="20 s", ttlUpdate=policy)
    path.write_text(json.dumps(body, indent=2))
    [(text,)] = run(stream_service, session, f"EXPLAIN PLAN '{path}'")
    for policy in policies:
        assert f"deduplicateState: ttl=20 s update={policy} time=PROCESSING_TIME" in text
    [(job_id,)] = run(stream_service, session, f"EXECUTE PLAN '{path}'")

    try:
        # The first micro-batch starts the Python workers (seconds): before the clock matters.
        feed.drop("warm,0")
        printed.wait(out, lambda rows: len([r for r in rows if r[1][0] == "warm"]) == 2)
        # Each wait below is on a printed row, so every gap is at least as long as
        # said: a,3 comes at least 20 s (the TTL) after a,1 was kept, and a,2 and
        # a,3 within 10 s plus a micro-batch of their predecessors' batches.
        feed.drop("a,1")
        printed.wait(out, lambda rows: len([r for r in rows if r[1][0] == "a"]) == 2)
        time.sleep(10)
        feed.drop("a,2", "m,0")  # a read of the kept key (a duplicate); m marks the batch
        printed.wait(out, lambda rows: len([r for r in rows if r[1][0] == "m"]) == 2)
        time.sleep(10)
        feed.drop("a,3", "done,0")
        printed.wait(out, lambda rows: len([r for r in rows if r[1][0] == "done"]) == 2)
    finally:
        run(stream_service, session, f"STOP JOB '{job_id}'")
    by_policy = {
        policy: [v[1] for kind, v in printed.rows[out] if v[0] == "a" and v[2] == policy]
        for policy in policies
    }
    assert by_policy == {"OnCreate": ["1", "3"], "OnReadWrite": ["1"]}


def test_event_time_ttl_expires_with_the_watermark_not_the_clock(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    printed = _Printed(caplog)
    feed = _Feed(
        stream_service,
        session,
        tmp_path / "in",
        "k STRING, v BIGINT, ts TIMESTAMP(3)",
        ", proctime AS PROCTIME(), WATERMARK FOR ts AS ts",
    )
    out = _print_table(stream_service, session, "k STRING, v BIGINT")

    def edit(node: dict[str, Any]) -> None:
        node["state"][0].update(ttl="5 s", ttlTime="EVENT_TIME", ttlUpdate="OnCreate")

    plan = _edited_plan(
        stream_service, session, tmp_path / "plan.json", _dedup(feed.table, out), edit
    )
    [(job_id,)] = run(stream_service, session, f"EXECUTE PLAN '{plan}'")
    try:
        feed.drop("warm,0,2030-01-01 00:00:00")
        printed.wait(out, lambda rows: bool(_keys(rows, "warm")))
        feed.drop("a,1,2030-01-01 00:00:00")
        printed.wait(out, lambda rows: _keys(rows, "a") == ["1"])
        time.sleep(8)  # past the TTL on the clock, but the watermark stands still
        feed.drop("a,2,2030-01-01 00:00:01", "b,0,2030-01-01 00:00:01")
        printed.wait(out, lambda rows: bool(_keys(rows, "b")))
        feed.drop("c,0,2030-01-01 00:00:30")  # the watermark passes a's expiry
        printed.wait(out, lambda rows: bool(_keys(rows, "c")))
        feed.drop("a,3,2030-01-01 00:00:31")
        printed.wait(out, lambda rows: len(_keys(rows, "a")) > 1)
    finally:
        run(stream_service, session, f"STOP JOB '{job_id}'")
    assert _keys(printed.of(out), "a") == ["1", "3"]


def test_a_join_keeps_each_side_for_its_own_ttl(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Seed 004's StreamExecJoin: the left state's TTL 15 s, the right's 1 h. A
    right row 15 s after a left row finds it gone; a left row after that still
    finds the right row; a right row at once finds the left row."""
    printed = _Printed(caplog)
    left = _Feed(stream_service, session, tmp_path / "l", "k STRING, a BIGINT")
    right = _Feed(stream_service, session, tmp_path / "r", "k STRING, b BIGINT")
    out = _print_table(stream_service, session, "k STRING, a BIGINT, b BIGINT")
    insert = (
        f"INSERT INTO {out} SELECT l.k, l.a, r.b FROM {left.table} l "
        f"JOIN {right.table} r ON l.k = r.k"
    )

    def edit(node: dict[str, Any]) -> None:
        assert [s["name"] for s in node["state"]] == ["leftState", "rightState"]
        node["state"][0]["ttl"] = "15 s"
        node["state"][1]["ttl"] = "1 h"

    plan = _edited_plan(stream_service, session, tmp_path / "join.json", insert, edit)
    [(text,)] = run(stream_service, session, f"EXPLAIN PLAN '{plan}'")
    assert "leftState: ttl=15 s" in text and "rightState: ttl=1 h" in text
    [(job_id,)] = run(stream_service, session, f"EXECUTE PLAN '{plan}'")

    def joined(rows: list[tuple[str, list[str]]]) -> list[list[str]]:
        return [values for kind, values in rows if kind == "+I"]

    def wait(*row: str) -> None:
        printed.wait(out, lambda rows: list(row) in joined(rows))

    try:
        # Right rows kept for an hour; a left row of one of their keys marks when
        # a left file was read (its join is printed in the same micro-batch).
        right.drop("warm,0", "m1,0", "m2,0")
        left.drop("warm,0")
        wait("warm", "0", "0")
        left.drop("x,1", "m1,1")
        wait("m1", "1", "0")
        time.sleep(15)  # the left row x,1 is past its TTL
        right.drop("x,10")
        left.drop("y,3", "m2,3")
        wait("m2", "3", "0")
        right.drop("y,20")  # at once: the left row y,3 is kept
        wait("y", "3", "20")
        left.drop("x,2")  # the right row x,10 is kept for an hour
        wait("x", "2", "10")
    finally:
        run(stream_service, session, f"STOP JOB '{job_id}'")
    assert ["x", "1", "10"] not in joined(printed.rows[out])


def test_state_stays_bounded_while_the_key_space_grows(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    """New keys arrive for a minute; with a 2 s TTL the deduplication's state
    (Spark's own count, ``stateOperators[].numRowsTotal``) stays flat."""
    source = name("keys")
    run(
        stream_service,
        session,
        f"CREATE TABLE {source} (k BIGINT, v BIGINT, proctime AS PROCTIME()) WITH ("
        "'connector' = 'datagen', 'rows-per-second' = '200', 'fields.k.kind' = 'sequence', "
        "'fields.k.start' = '1', 'fields.k.end' = '100000000')",
    )
    sink = name("sink")
    run(
        stream_service,
        session,
        f"CREATE TABLE {sink} (k BIGINT, v BIGINT) WITH ('connector' = 'blackhole')",
    )
    plan = tmp_path / "p.json"
    run(stream_service, session, "SET 'table.exec.state.ttl' = '2 s'")
    try:
        [(job_id,)] = run(
            stream_service,
            session,
            f"COMPILE AND EXECUTE PLAN '{plan}' FOR {_dedup(source, sink)}",
        )
    finally:
        run(stream_service, session, "RESET 'table.exec.state.ttl'")
    assert plan.exists()  # written, then run
    assert job_id in {row[0] for row in run(stream_service, session, "SHOW JOBS")}
    [query] = stream_service.jobs.get(job_id).queries
    samples: list[tuple[float, int, int]] = []  # (time, keys seen, state rows)
    start = time.monotonic()
    try:
        while time.monotonic() - start < 60:
            progress = query.lastProgress
            if progress and progress["stateOperators"]:
                [operator] = progress["stateOperators"]
                offset = json.loads(progress["sources"][0]["endOffset"])["offset"]
                samples.append((time.monotonic() - start, int(offset), operator["numRowsTotal"]))
            time.sleep(1)
    finally:
        run(stream_service, session, f"STOP JOB '{job_id}'")
    early = [rows for t, _, rows in samples if 15 <= t < 30]
    late = [rows for t, _, rows in samples if t >= 45]
    keys_seen = samples[-1][1]
    assert early and late, samples
    # Thousands of keys went through; the state holds a few seconds' worth.
    assert keys_seen > 1000, samples
    assert max(late) < keys_seen / 10, samples
    assert max(late) <= 2 * max(early) + 100, samples


def test_state_ttl_hints_set_each_input_s_ttl(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    """Flink's ``/*+ STATE_TTL('alias' = '...') */``: per input of the join, in
    the compiled plan and in a streaming query that runs on the TTL operators."""
    a = _file_table(stream_service, session, tmp_path / "a", "('x', 1), ('y', 2)")
    b = _file_table(stream_service, session, tmp_path / "b", "('x', 5), ('x', 6)")
    sink = name("sink")
    run(
        stream_service,
        session,
        f"CREATE TABLE {sink} (k STRING, v BIGINT, w BIGINT) WITH ('connector' = 'blackhole')",
    )
    hinted = (
        f"SELECT /*+ STATE_TTL('l' = '2 h', 'r' = '3 h') */ l.k, l.v, r.v AS w "
        f"FROM {a} l JOIN {b} r ON l.k = r.k"
    )
    path = tmp_path / "hinted.json"
    run(stream_service, session, f"COMPILE PLAN '{path}' FOR INSERT INTO {sink} {hinted}")
    [join] = [n for n in json.loads(path.read_text())["nodes"] if n["type"] == "stream-exec-join_1"]
    assert [s["ttl"] for s in join["state"]] == ["7200000 ms", "10800000 ms"]

    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    try:
        op = stream_service.execute_statement(session, hinted)
        got = changes(stream_service, session, op, timeout=180)
    finally:
        run(stream_service, session, "RESET 'execution.runtime-mode'")
    assert _replayed(got) == Counter({("x", 1, 5): 1, ("x", 1, 6): 1})


# -- gateway mode: a plan file of the SQL client's machine ---------------------------


def _remote(executor: RestExecutor, statement: str) -> list[list[str | None]]:
    """Run ``statement`` through the SQL client's REST executor, to its end."""
    operation = executor.submit(statement)
    rows: list[list[str | None]] = []
    token: int | None = 0
    try:
        while token is not None:
            page = executor.fetch(operation, token, 1000, 1.0)
            rows.extend(page.rows)
            token = page.next_token
    finally:
        executor.close_operation(operation)
    return rows


def test_gateway_mode_puts_a_local_plan_in_the_session_and_removes_it_at_the_end(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    """FLIP-292: the SQL client in gateway mode hands the gateway a plan file of
    its own machine as a session resource, writes a compiled plan back there, and
    the gateway removes the session's copies when the session ends."""
    orders = _orders(stream_service, session)
    stats = _stats(stream_service, session, "blackhole")
    endpoint = RestEndpoint(stream_service, settings())
    endpoint.start()
    local = tmp_path / "client" / "plan.json"
    sessions_dir = stream_service.jobs.data_dir / "sessions"
    try:
        executor = RestExecutor("127.0.0.1", endpoint.port)
        executor.open()
        try:
            assert _remote(executor, f"COMPILE PLAN '{local}' FOR {_example_1(orders, stats)}")
            body = json.loads(local.read_text())  # written back to the client's path
            kept = list(sessions_dir.glob("*/resources/*plan.json"))
            assert len(kept) == 1 and json.loads(kept[0].read_text()) == body

            dedup = next(n for n in body["nodes"] if n["type"] == "stream-exec-deduplicate_1")
            dedup["state"][0]["ttl"] = "7 s"
            local.write_text(json.dumps(body))  # edited on the client's machine
            [[text]] = _remote(executor, f"EXPLAIN PLAN '{local.as_uri()}'")
            assert text is not None and "deduplicateState: ttl=7 s" in text
            # The user's file by its name; the plan holds the INSERT it compiled.
            assert "plan.json (the SQL client's file)" in text
            assert body["statement"].startswith("INSERT INTO") and "resource" not in text
            assert "7 s" in kept[0].read_text()  # the gateway read the uploaded copy

            # A query on the state-TTL operators, its changelog over REST.
            table = _file_table(stream_service, session, tmp_path / "t", "('x', 1), ('x', 2)")
            _remote(executor, "SET 'execution.runtime-mode' = 'streaming'")
            _remote(executor, "SET 'table.exec.state.ttl' = '1 h'")
            changed = _remote(executor, f"SELECT k, SUM(v) AS s FROM {table} GROUP BY k")
            assert changed and changed[-1] == ["x", "3"]
            _remote(executor, "RESET 'table.exec.state.ttl'")

            # IF NOT EXISTS keeps the client's file as it is.
            assert _remote(
                executor, f"COMPILE PLAN '{local}' IF NOT EXISTS FOR {_example_1(orders, stats)}"
            )
            assert json.loads(local.read_text()) == body
        finally:
            executor.close()
        assert not list(sessions_dir.glob("*/resources/*plan.json"))
        with httpx.Client(base_url=endpoint.address) as http:
            handle = http.post("/v4/sessions", json={}).json()["sessionHandle"]
            bad = http.put(f"/v4/sessions/{handle}/resources/..%2Fx", json={"content": "{}"})
            assert bad.status_code in (400, 404)
            bad = http.put(f"/v4/sessions/{handle}/resources/.hidden", json={"content": "{}"})
            assert bad.status_code == 400 and "Invalid resource name" in bad.text
            http.delete(f"/v4/sessions/{handle}")
    finally:
        endpoint.stop()


def test_the_sql_client_prints_a_state_ttl_query_s_changelog(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    table = _file_table(stream_service, session, tmp_path / "a", "('x', 1), ('x', 5), ('y', 2)")
    client, out = text_client(EmbeddedExecutor(stream_service))
    script = ";\n".join(
        [
            "SET 'sql-client.execution.result-mode' = 'changelog'",
            "SET 'execution.runtime-mode' = 'streaming'",
            "SET 'table.exec.state.ttl' = '1 h'",
            f"SELECT k, SUM(v) AS total FROM {table} GROUP BY k",
        ]
    )
    try:
        assert client.run_script(script + ";")
    finally:
        client.close()
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in out.getvalue().splitlines()
        if line.startswith("|")
    ]
    assert rows[0] == ["op", "k", "total"]
    final: dict[str, str] = {}
    for kind, key, total in rows[1:]:
        if kind in ("+I", "+U"):
            final[key] = total
    assert final == {"x": "6", "y": "2"}


def test_a_plan_job_stops_with_a_savepoint_and_resumes_from_it_with_its_state(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """EXECUTE PLAN makes a job like any other: STOP JOB ... WITH SAVEPOINT, then
    the plan again from ``execution.savepoint.path`` keeps the deduplication's
    state (a key kept before the stop is still a duplicate after it)."""
    printed = _Printed(caplog)
    feed = _Feed(
        stream_service, session, tmp_path / "in", "k STRING, v BIGINT", ", proctime AS PROCTIME()"
    )
    out = _print_table(stream_service, session, "k STRING, v BIGINT")
    plan = tmp_path / "plan.json"
    run(stream_service, session, "SET 'table.exec.state.ttl' = '1 h'")
    try:
        run(stream_service, session, f"COMPILE PLAN '{plan}' FOR {_dedup(feed.table, out)}")
    finally:
        run(stream_service, session, "RESET 'table.exec.state.ttl'")
    [(job_id,)] = run(stream_service, session, f"EXECUTE PLAN '{plan}'")
    feed.drop("a,1")
    printed.wait(out, lambda rows: _keys(rows, "a") == ["1"])
    [(savepoint,)] = run(stream_service, session, f"STOP JOB '{job_id}' WITH SAVEPOINT")
    assert savepoint

    feed.drop("a,2", "b,1")  # while stopped
    run(stream_service, session, f"SET 'execution.savepoint.path' = '{savepoint}'")
    try:
        [(resumed,)] = run(stream_service, session, f"EXECUTE PLAN '{plan}'")
    finally:
        run(stream_service, session, "RESET 'execution.savepoint.path'")
    try:
        printed.wait(out, lambda rows: bool(_keys(rows, "b")))
        [info] = run(stream_service, session, f"DESCRIBE JOB '{resumed}'")
        assert info[2] == "RUNNING"
    finally:
        run(stream_service, session, f"STOP JOB '{resumed}'")
    assert _keys(printed.of(out), "a") == ["1"]


def test_a_plan_without_state_metadata_runs_with_the_session_ttl(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    """Compatibility: a plan whose nodes have no ``state`` (as plans before
    per-operator TTL) still explains and runs, with ``table.exec.state.ttl``."""
    orders = _orders(stream_service, session)
    stats = _stats(stream_service, session, "blackhole")
    path = tmp_path / "old.json"
    run(stream_service, session, f"COMPILE PLAN '{path}' FOR {_example_1(orders, stats)}")
    body = json.loads(path.read_text())
    for node in body["nodes"]:
        node.pop("state", None)
    del body["sparkgateVersion"]
    path.write_text(json.dumps(body))
    run(stream_service, session, "SET 'table.exec.state.ttl' = '90 min'")
    try:
        [(text,)] = run(stream_service, session, f"EXPLAIN PLAN '{path}'")
        assert (
            "deduplicateState: ttl=90 min" in text or "deduplicateState: ttl=1 h 30 min" in text
        ), text
        [(job_id,)] = run(stream_service, session, f"EXECUTE PLAN '{path}'")
    finally:
        run(stream_service, session, "RESET 'table.exec.state.ttl'")
    try:
        assert wait_for(lambda: bool(stream_service.jobs.get(job_id).queries[0].lastProgress), 120)
        [info] = run(stream_service, session, f"DESCRIBE JOB '{job_id}'")
        assert info[2] == "RUNNING"
    finally:
        run(stream_service, session, f"STOP JOB '{job_id}'")


# -- VALUES lists: a values node --------------------------------------------------------


def test_a_plan_over_values_holds_its_rows_and_runs_them_as_a_stream(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    """Flink compiles ``INSERT ... VALUES`` and queries over a VALUES list into a
    values node; its rows are in the plan (each cell's literal), and EXECUTE PLAN
    reads them as a bounded stream: the job ends once every row is written."""
    sink = name("vsink")
    run(
        stream_service,
        session,
        f"CREATE TABLE {sink} (k BIGINT, v STRING, d DECIMAL(5, 2)) WITH ("
        f"'connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'json')",
    )
    path = tmp_path / "values.json"
    rows = "(1, 'a', 1.5), (2, 'it''s, (b)', NULL), (3, 'c', 20.25)"
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    try:
        run(
            stream_service,
            session,
            f"COMPILE PLAN '{path}' FOR INSERT INTO {sink} SELECT k, upper(v), d "
            f"FROM (VALUES {rows}) AS t(k, v, d) WHERE k > 1",
        )
        body = json.loads(path.read_text())
        [values] = [n for n in body["nodes"] if n["type"] == "stream-exec-values_1"]
        assert values["inputProperties"] == []
        assert [row[:2] for row in values["tuples"]] == [
            ["1", "'a'"],
            ["2", "'it\\'s, (b)'"],
            ["3", "'c'"],
        ]
        assert "NULL" in values["tuples"][1][2].upper()
        [(text,)] = run(stream_service, session, f"EXPLAIN PLAN '{path}'")
        assert "Values(tuples=[[{ 1, 'a'" in text, text
        [(job_id,)] = run(stream_service, session, f"EXECUTE PLAN '{path}'")
        wait_job(stream_service, session, job_id, timeout=120)
    finally:
        run(stream_service, session, "RESET 'execution.runtime-mode'")
    got = run(stream_service, session, f"SELECT k, v, CAST(d AS STRING) FROM {sink} ORDER BY k")
    assert got == [(2, "IT'S, (B)", None), (3, "C", "20.25")]


def test_a_stateful_query_over_values_runs_on_the_operators(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    """With a state TTL, a streaming aggregate over a VALUES list is compiled (a
    values node under the group aggregate) and answers Flink's changelog row by row."""
    query = "SELECT k, COUNT(*) AS n FROM (VALUES ('x'), ('y'), ('x')) AS t(k) GROUP BY k"
    got, _ = _streamed(stream_service, session, query, ttl="1 d")
    assert got == [
        (RowKind.INSERT, ("x", 1)),
        (RowKind.INSERT, ("y", 1)),
        (RowKind.UPDATE_BEFORE, ("x", 1)),
        (RowKind.UPDATE_AFTER, ("x", 2)),
    ]


def test_a_values_node_with_bad_tuples_starts_nothing(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    sink = name("vsink")
    run(stream_service, session, f"CREATE TABLE {sink} (k INT) WITH ('connector' = 'blackhole')")
    path = tmp_path / "values.json"
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    try:
        compile_ = f"COMPILE PLAN '{path}' FOR INSERT INTO {sink} VALUES (1), (2)"
        run(stream_service, session, compile_)
        body = json.loads(path.read_text())
        [values] = [n for n in body["nodes"] if n["type"] == "stream-exec-values_1"]
        values["tuples"] = [["1", "2"]]  # two cells for one column
        path.write_text(json.dumps(body))
        jobs_before = len(run(stream_service, session, "SHOW JOBS"))
        message = error_text(stream_service, session, f"EXECUTE PLAN '{path}'")
        assert f"node {values['id']}: tuples must be a non-empty list of rows of 1" in message
        assert len(run(stream_service, session, "SHOW JOBS")) == jobs_before
    finally:
        run(stream_service, session, "RESET 'execution.runtime-mode'")


_READ_SECRET = "SELECT max(value) FROM text.`{secret}`"


def _set_expr(node: dict[str, Any], text: str) -> None:
    node["projection"][0]["expr"] = text


def _set_condition(node: dict[str, Any], text: str) -> None:
    node["condition"] = text


def _set_cell(node: dict[str, Any], text: str) -> None:
    node["tuples"][0][0] = text


@pytest.mark.parametrize(
    ("node_type", "edit", "text"),
    [
        # A calc expression reading a file of the host: a subquery no check saw.
        ("stream-exec-calc_1", _set_expr, f"({_READ_SECRET})"),
        # A condition that closes its expression early.
        ("stream-exec-calc_1", _set_condition, "true) OR (true"),
        # A values cell that ends the list and reads a file.
        ("stream-exec-values_1", _set_cell, f"'x') AS t(k) UNION ALL {_READ_SECRET} --"),
    ],
)
def test_a_plan_s_sql_is_expressions_over_its_input_only(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
    node_type: str,
    edit: Callable[[dict[str, Any], str], None],
    text: str,
) -> None:
    """A plan file is the user's to edit, but its Spark SQL stays expressions over
    each node's input: a subquery, or text escaping its expression, would read
    tables and files that no statement check saw. Refused before anything runs."""
    secret = tmp_path / "secret.txt"
    secret.write_text("hidden\n")
    sink = name("vsink")
    run(stream_service, session, f"CREATE TABLE {sink} (k STRING) WITH ('connector' = 'blackhole')")
    path = tmp_path / "p.json"
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    try:
        compile_ = (
            f"COMPILE PLAN '{path}' FOR INSERT INTO {sink} "
            "SELECT upper(k) FROM (VALUES ('a'), ('b')) AS t(k) WHERE k <> 'c'"
        )
        run(stream_service, session, compile_)
        body = json.loads(path.read_text())
        node = next(n for n in body["nodes"] if n["type"] == node_type)
        edit(node, text.format(secret=secret))
        path.write_text(json.dumps(body))
        jobs_before = len(run(stream_service, session, "SHOW JOBS"))
        message = error_text(stream_service, session, f"EXECUTE PLAN '{path}'")
        assert f"node {node['id']} ({node_type})" in message, message
        assert "compute over their input only" in message, message
        assert len(run(stream_service, session, "SHOW JOBS")) == jobs_before
    finally:
        run(stream_service, session, "RESET 'execution.runtime-mode'")


def test_a_plan_keeps_the_options_hints_of_its_reads_and_its_sink(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    """A table read or written with an OPTIONS hint keeps the hint's options in its
    scan or sink node, so EXECUTE PLAN reads and writes as the statement would."""
    src, sink = name("src"), name("hinted")
    run(
        stream_service,
        session,
        f"CREATE TABLE {src} (k BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '9', "
        "'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '9')",
    )
    run(
        stream_service,
        session,
        f"CREATE TABLE {sink} (k BIGINT) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'declared'}', 'format' = 'json')",
    )
    out, path = tmp_path / "hinted", tmp_path / "hints.json"
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    try:
        run(
            stream_service,
            session,
            f"COMPILE PLAN '{path}' FOR INSERT INTO {sink} /*+ OPTIONS('path' = '{out}') */ "
            f"SELECT k FROM {src} /*+ OPTIONS('number-of-rows' = '2') */ WHERE k > 0",
        )
        body = json.loads(path.read_text())
        tables = {n["type"]: n["table"] for n in body["nodes"] if "table" in n}
        assert tables["stream-exec-table-source-scan_1"]["options"] == {"number-of-rows": "2"}
        assert tables["stream-exec-sink_1"]["options"] == {"path": str(out)}
        [(job_id,)] = run(stream_service, session, f"EXECUTE PLAN '{path}'")
        wait_job(stream_service, session, job_id, timeout=120)
        # An option that is not a string, or a value closing the hint, starts nothing.
        jobs_before = len(run(stream_service, session, "SHOW JOBS"))
        for options, message in [
            ({"number-of-rows": 2}, "table.options must map option names to strings"),
            ({"number-of-rows": "2') */ x"}, "cannot hold '*/'"),
        ]:
            [scan] = [n for n in body["nodes"] if n["type"] == "stream-exec-table-source-scan_1"]
            scan["table"]["options"] = options
            path.write_text(json.dumps(body))
            assert message in error_text(stream_service, session, f"EXECUTE PLAN '{path}'")
        assert len(run(stream_service, session, "SHOW JOBS")) == jobs_before
    finally:
        run(stream_service, session, "RESET 'execution.runtime-mode'")
    assert list((tmp_path / "declared").iterdir()) == []
    hint = f"/*+ OPTIONS('path' = '{out}') */"
    assert run(stream_service, session, f"SELECT k FROM {sink} {hint} ORDER BY k") == [(1,), (2,)]
