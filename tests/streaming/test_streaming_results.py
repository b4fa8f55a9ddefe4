"""Streaming mode: queries run as Structured Streaming queries whose results are
changelogs; cancel stops the query; a slow reader holds the query back."""

from __future__ import annotations

import datetime
import logging
import time
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import ConfigurationError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.results import RowKind
from sparkgate.api.session import SessionEnvironment
from sparkgate.api.status import OperationStatus
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.streaming.changelog import replay

from .conftest import changes, make_service, name, run, wait_for, wait_job

AGGREGATE = "SELECT id % 3 AS m, count(*) AS c, sum(id) AS total FROM {t} GROUP BY id % 3"


def make_source(service: SparkGatewayService, session: SessionHandle, rows: int = 40) -> str:
    table = name("gen")
    run(
        service,
        session,
        f"CREATE TABLE {table} (id BIGINT, v DOUBLE) WITH ('connector' = 'datagen', "
        f"'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{rows}', "
        "'rows-per-second' = '30')",
    )
    return table


def streaming(service: SparkGatewayService, session: SessionHandle) -> None:
    run(service, session, "SET 'execution.runtime-mode' = 'streaming'")


def active_queries(spark: SparkSession) -> list[str]:
    """The gateway's queries still running in ``spark`` (a gateway session's Spark session)."""
    return [q.name or "" for q in spark.streams.active if (q.name or "").startswith("sparkgate-")]


def spark_of(service: SparkGatewayService, session: SessionHandle) -> SparkSession:
    return service._session(session).spark


def test_runtime_mode_is_validated(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    # Refused as it is submitted (a 400), naming the key and what it takes.
    expected = r"Invalid value 'fast' for execution\.runtime-mode"
    with pytest.raises(ConfigurationError, match=expected):
        run(stream_service, session, "SET 'execution.runtime-mode' = 'fast'")


@pytest.mark.parametrize(
    "query",
    [
        AGGREGATE,
        # The key is not in the output: the result is diffed whole (complete mode).
        "SELECT count(*) AS c FROM {t} GROUP BY id % 2",
        "SELECT id, id * 2 AS twice FROM {t} WHERE id % 2 = 0",
    ],
)
def test_changelog_replays_to_the_batch_result(
    stream_service: SparkGatewayService, session: SessionHandle, query: str
) -> None:
    table = make_source(stream_service, session)
    expected = Counter(run(stream_service, session, query.format(t=table)))
    streaming(stream_service, session)
    op = stream_service.execute_statement(session, query.format(t=table))
    log = changes(stream_service, session, op)
    assert replay(log) == expected
    if query is AGGREGATE:
        kinds = {kind for kind, _ in log}
        assert RowKind.UPDATE_BEFORE in kinds and RowKind.UPDATE_AFTER in kinds
        # Every UPDATE_BEFORE is immediately followed by the same key's UPDATE_AFTER.
        for i, (kind, row) in enumerate(log):
            if kind is RowKind.UPDATE_BEFORE:
                assert log[i + 1][0] is RowKind.UPDATE_AFTER and log[i + 1][1][0] == row[0]


def test_a_window_aggregation_emits_each_window_once(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    # Flink's window TVF grouped by window_start, window_end: insert-only rows, one
    # per window, once the watermark passes it, as Flink emits them; so it can
    # also go into a sink that takes only appends.
    table = name("ticks")
    run(
        stream_service,
        session,
        f"CREATE TABLE {table} (id INT, ts TIMESTAMP(3), "
        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
        "WITH ('connector' = 'datagen', 'rows-per-second' = '20')",
    )
    windowed = (
        "SELECT window_start, window_end, count(*) AS n "
        f"FROM TABLE(TUMBLE(TABLE {table}, DESCRIPTOR(ts), INTERVAL '1' SECOND)) "
        "GROUP BY window_start, window_end"
    )
    streaming(stream_service, session)
    op = stream_service.execute_statement(session, windowed)
    log = changes(stream_service, session, op, until=lambda out: len(out) >= 3)
    stream_service.cancel_operation(session, op)
    assert {kind for kind, _ in log} == {RowKind.INSERT}
    starts = [row[0] for _, row in log]
    assert len(set(starts)) == len(starts)  # each window once
    assert all((end - start).total_seconds() == 1 and n > 0 for _, (start, end, n) in log)
    sink = name("per_second")
    run(
        stream_service,
        session,
        f"CREATE TABLE {sink} (window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'json')",
    )
    [(job_id,)] = run(stream_service, session, f"INSERT INTO {sink} {windowed}")
    try:
        assert wait_for(lambda: any((tmp_path / "out").glob("*.json")), timeout=90)
    finally:
        run(stream_service, session, f"STOP JOB '{job_id}'")


def test_a_view_over_a_connector_table_streams_as_the_table_does(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    """A view's query is read by the gateway: over a datagen table it is a stream in
    streaming mode (Spark alone would read the table's stored batch view), and the
    table's computed columns are in it."""
    table = make_source(stream_service, session)
    run(stream_service, session, f"ALTER TABLE {table} ADD (half AS id / 2, at AS PROCTIME())")
    view, nested = name("view"), name("nested")
    run(stream_service, session, f"CREATE VIEW {view} AS SELECT * FROM {table} WHERE id > 10")
    run(stream_service, session, f"CREATE TEMPORARY VIEW {nested} AS SELECT id, half FROM {view}")
    query = f"SELECT id % 3 AS m, count(*) AS c, sum(half) AS h FROM {nested} GROUP BY id % 3"
    expected = Counter(run(stream_service, session, query))
    assert sum(c for _, c, _ in expected) == 30
    streaming(stream_service, session)
    op = stream_service.execute_statement(session, query)
    log = changes(stream_service, session, op)
    assert replay(log) == expected
    assert {RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER} <= {kind for kind, _ in log}
    run(stream_service, session, f"DROP VIEW {view}")
    assert active_queries(spark_of(stream_service, session)) == []


def test_values_stream_row_by_row_in_streaming_mode(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    """As Flink reads a VALUES list in streaming mode: one row after another, so an
    aggregation over it answers with its updates, not only its final rows."""
    counted = "SELECT k, count(*) AS n FROM (VALUES ('a'), ('b'), ('a')) AS t(k) GROUP BY k"
    assert sorted(run(stream_service, session, counted)) == [("a", 2), ("b", 1)]  # batch
    streaming(stream_service, session)
    insert, before, after = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER
    op = stream_service.execute_statement(session, counted)
    assert changes(stream_service, session, op) == [
        (insert, ("a", 1)),
        (insert, ("b", 1)),
        (before, ("a", 1)),
        (after, ("a", 2)),
    ]
    for listed in (
        "SELECT * FROM (VALUES (1, 'x'), (2, 'y')) AS t(a, b)",
        "SELECT * FROM VALUES (1, 'x'), (2, 'y') AS t(a, b)",  # the alias within the list
        "VALUES (1, 'x'), (2, 'y')",
    ):
        op = stream_service.execute_statement(session, listed)
        expected = [(insert, (1, "x")), (insert, (2, "y"))]
        assert changes(stream_service, session, op) == expected, listed
    assert active_queries(spark_of(stream_service, session)) == []


def test_a_distinct_count_streams_its_updates(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    """Spark's streaming aggregation has no DISTINCT; Flink's has: the distinct
    values are kept as a set, and the count changes only with a new value."""
    counted = (
        "SELECT k, count(DISTINCT v) AS n, count(DISTINCT v, w) AS p "
        "FROM (VALUES (1, 'a', 1), (1, 'b', NULL), (2, 'a', 1), (1, 'a', 2)) AS t(k, v, w) "
        "GROUP BY k"
    )
    batch = sorted(run(stream_service, session, counted))
    assert batch == [(1, 2, 2), (2, 1, 1)]
    streaming(stream_service, session)
    insert, before, after = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER
    op = stream_service.execute_statement(session, counted)
    log = changes(stream_service, session, op)
    assert log == [
        (insert, (1, 1, 1)),
        (before, (1, 1, 1)),
        (after, (1, 2, 1)),
        (insert, (2, 1, 1)),
        (before, (1, 2, 1)),
        (after, (1, 2, 2)),
    ]
    assert sorted(replay(log)) == batch
    assert active_queries(spark_of(stream_service, session)) == []


def test_values_read_at_once_by_a_query_keeping_no_state(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A query over VALUES that keeps no state answers the same inserts read row by row
    or all at once: it runs as one Spark batch, without a streaming query's
    micro-batches; one that keeps state (an aggregate, a DISTINCT) streams."""
    streaming(stream_service, session)
    insert = RowKind.INSERT
    caplog.set_level(logging.INFO, logger="sparkgate.service.streaming.query")
    for stateless, expected in (
        (
            "SELECT a + 1, upper(b) FROM (VALUES (1, 'x'), (2, 'y')) AS t(a, b) WHERE a > 0",
            [(insert, (2, "X")), (insert, (3, "Y"))],
        ),
        (
            "SELECT * FROM (VALUES (1)) AS t(a) UNION ALL SELECT * FROM (VALUES (2)) AS u(a)",
            [(insert, (1,)), (insert, (2,))],
        ),
    ):
        op = stream_service.execute_statement(session, stateless)
        assert changes(stream_service, session, op) == expected, stateless
    assert not [r for r in caplog.records if "Streaming query" in r.getMessage()]
    # SELECT DISTINCT streams, and answers each new row once, as Flink's.
    distinct = "SELECT DISTINCT a FROM (VALUES (1), (1), (2)) AS t(a)"
    op = stream_service.execute_statement(session, distinct)
    assert changes(stream_service, session, op) == [(insert, (1,)), (insert, (2,))]
    assert [r for r in caplog.records if "Streaming query" in r.getMessage()]


def test_time_values_stream_as_times(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    """Flink's TIME: literals, casts and columns, in batch and streaming results."""
    query = (
        "SELECT TIME '20:12:11' AS t0, k, CAST(t AS TIME(3)) AS t3 "
        "FROM (VALUES (1, '01:02:03.456'), (2, NULL)) AS v(k, t)"
    )
    times = (datetime.time(20, 12, 11), 1, datetime.time(1, 2, 3, 456000))
    assert run(stream_service, session, query) == [times, (datetime.time(20, 12, 11), 2, None)]
    streaming(stream_service, session)
    op = stream_service.execute_statement(session, query)
    insert = RowKind.INSERT
    assert changes(stream_service, session, op) == [
        (insert, times),
        (insert, (datetime.time(20, 12, 11), 2, None)),
    ]
    schema = stream_service.get_operation_result_schema(session, op)
    assert [str(column.logical_type) for column in schema.columns] == [
        "TIME(0) NOT NULL",  # a literal: its digits, as Flink types it
        "INT NOT NULL",
        "TIME(3)",
    ]


def test_filesystem_source_streams_what_is_there_and_ends(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    table = name("fs")
    run(
        stream_service,
        session,
        f"CREATE TABLE {table} (word STRING, n INT) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'words'}', 'format' = 'json')",
    )
    run(stream_service, session, f"INSERT INTO {table} VALUES ('a', 1), ('b', 2), ('a', 3)")
    run(stream_service, session, f"INSERT INTO {table} VALUES ('b', 4), ('c', 5)")
    query = f"SELECT word, sum(n) AS s FROM {table} GROUP BY word"
    streaming(stream_service, session)
    op = stream_service.execute_statement(session, query)
    assert replay(changes(stream_service, session, op)) == Counter(
        {("a", 4): 1, ("b", 6): 1, ("c", 5): 1}
    )


def test_spark_file_tables_stream_in_streaming_mode(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    words, counts = name("words"), name("counts")
    run(stream_service, session, f"CREATE TABLE {words} (word STRING, n INT) USING parquet")
    run(stream_service, session, f"INSERT INTO {words} VALUES ('a', 1), ('b', 2), ('a', 3)")
    run(stream_service, session, f"INSERT INTO {words} VALUES ('b', 4), ('c', 5)")
    run(stream_service, session, f"CREATE TABLE {counts} (word STRING, n INT) USING json")
    streaming(stream_service, session)
    query = f"SELECT word, sum(n) AS s FROM {words} GROUP BY word"
    op = stream_service.execute_statement(session, query)
    log = changes(stream_service, session, op)
    assert {kind for kind, _ in log} <= {
        RowKind.INSERT,
        RowKind.UPDATE_BEFORE,
        RowKind.UPDATE_AFTER,
    }
    assert replay(log) == Counter({("a", 4): 1, ("b", 6): 1, ("c", 5): 1})
    # A streaming INSERT between Spark tables is a job that ends with the files there.
    [(job_id,)] = run(stream_service, session, f"INSERT INTO {counts} SELECT word, n FROM {words}")
    wait_job(stream_service, session, job_id)
    run(stream_service, session, "SET 'execution.runtime-mode' = 'batch'")
    assert run(stream_service, session, f"SELECT count(*), sum(n) FROM {counts}") == [(5, 15)]


def test_spark_stream_syntax_gives_a_changelog_in_batch_mode(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    table = make_source(stream_service, session, rows=6)
    op = stream_service.execute_statement(session, f"SELECT id FROM STREAM({table})")
    assert sorted(row for _, row in changes(stream_service, session, op)) == [
        (i,) for i in range(1, 7)
    ]


def test_cancel_stops_the_streaming_query(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    spark = spark_of(stream_service, session)
    table = name("gen")
    run(stream_service, session, f"CREATE TABLE {table} (a INT) WITH ('connector' = 'datagen')")
    streaming(stream_service, session)
    op = stream_service.execute_statement(session, f"SELECT a FROM {table}")
    assert changes(stream_service, session, op, until=lambda got: len(got) > 0)
    assert active_queries(spark)
    stream_service.cancel_operation(session, op)
    assert stream_service.get_operation_info(session, op).status is OperationStatus.CANCELED
    assert wait_for(lambda: not active_queries(spark), 30), active_queries(spark)


def test_closing_the_session_stops_the_streaming_query(
    stream_service: SparkGatewayService,
) -> None:
    handle = stream_service.open_session(SessionEnvironment())
    spark = spark_of(stream_service, handle)
    table = name("gen")
    run(stream_service, handle, f"CREATE TABLE {table} (a INT) WITH ('connector' = 'datagen')")
    streaming(stream_service, handle)
    op = stream_service.execute_statement(handle, f"SELECT a FROM {table}")
    assert changes(stream_service, handle, op, until=lambda got: len(got) > 0)
    assert active_queries(spark)
    stream_service.close_session(handle)
    assert wait_for(lambda: not active_queries(spark), 30), active_queries(spark)


def test_a_slow_reader_keeps_the_buffer_bounded(spark: SparkSession, data_dir: Path) -> None:
    service = make_service(
        spark,
        **{
            "sql-gateway.data-dir": str(data_dir),
            "sql-gateway.result.buffer-rows": "50",
            "execution.checkpointing.interval": "200 ms",
            "execution.runtime-mode": "streaming",
        },
    )
    try:
        handle = service.open_session(SessionEnvironment())
        spark = spark_of(service, handle)
        table = name("gen")
        run(
            service,
            handle,
            f"CREATE TABLE {table} (a INT) WITH ('connector' = 'datagen', "
            "'rows-per-second' = '200')",
        )
        op = service.execute_statement(handle, f"SELECT a FROM {table}")
        assert wait_for(lambda: bool(active_queries(spark)), 30)
        time.sleep(4)  # nobody fetches: ~40 rows per micro-batch would pile up
        [query] = [q for q in spark.streams.active if (q.name or "").startswith("sparkgate-")]
        held_back = query.lastProgress["batchId"] if query.lastProgress else 0
        time.sleep(2)
        still = query.lastProgress["batchId"] if query.lastProgress else 0
        buffer = service._operation(handle, op)._fetcher.buffer  # type: ignore[union-attr]
        assert buffer.peak_rows <= 50
        assert still == held_back, "the query kept running while the buffer was full"
        fetched = changes(service, handle, op, until=lambda got: len(got) >= 300)
        assert len(fetched) >= 300 and buffer.peak_rows <= 50
        service.close_operation(handle, op)
        assert wait_for(lambda: not active_queries(spark), 30)
    finally:
        service.stop()
