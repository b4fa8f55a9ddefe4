"""Flink's ``CREATE TEMPORARY TABLE ... WITH``: a connector table that lives in its
session, shadows a permanent table of the same name, streams and sinks like any
connector table, and goes with ``DROP TEMPORARY TABLE`` or the session."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from sparkgate.api.errors import ExecutionError, UnsupportedStatementError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.streaming.changelog import replay

from .conftest import changes, name, run, wait_job

SOURCE = (
    "CREATE TEMPORARY TABLE {t} (id BIGINT, twice AS id * 2) WITH ('connector' = 'datagen', "
    "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}', "
    "'rows-per-second' = '40')"
)


def test_temporary_source_reads_in_batch_and_streams_in_streaming_mode(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    table = name("tmp")
    assert run(stream_service, session, SOURCE.format(t=table, n=12)) == [("OK",)]
    assert run(stream_service, session, f"SELECT sum(id), max(twice) FROM {table}") == [(78, 24)]
    assert (table,) in run(stream_service, session, "SHOW TABLES")  # Flink's `table name`
    assert (table,) not in run(stream_service, session, "SHOW VIEWS")
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    op = stream_service.execute_statement(
        session, f"SELECT id % 2 AS parity, count(*) AS c FROM {table} GROUP BY id % 2"
    )
    log = changes(stream_service, session, op)
    assert replay(log) == Counter({(0, 6): 1, (1, 6): 1})


def test_temporary_tables_are_private_to_their_session_and_shadow_permanent_ones(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    table = name("shadow")
    run(stream_service, session, f"CREATE TABLE {table} AS SELECT 100L AS id")
    run(stream_service, session, SOURCE.format(t=table, n=3))
    assert run(stream_service, session, f"SELECT sum(id) FROM {table}") == [(6,)]
    other = stream_service.open_session(SessionEnvironment())
    try:
        assert run(stream_service, other, f"SELECT sum(id) FROM {table}") == [(100,)]
    finally:
        stream_service.close_session(other)
    assert run(stream_service, session, f"DROP TEMPORARY TABLE {table}") == [("OK",)]
    assert run(stream_service, session, f"SELECT sum(id) FROM {table}") == [(100,)]
    run(stream_service, session, f"DROP TABLE {table}")


def test_temporary_filesystem_sink_takes_a_streaming_insert(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    src, sink = name("src"), name("sink")
    run(stream_service, session, SOURCE.format(t=src, n=20))
    run(
        stream_service,
        session,
        f"CREATE TEMPORARY TABLE {sink} (id BIGINT) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'out'}', 'format' = 'json')",
    )
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    [(job_id,)] = run(stream_service, session, f"INSERT INTO {sink} SELECT id FROM {src}")
    wait_job(stream_service, session, job_id)
    run(stream_service, session, "SET 'execution.runtime-mode' = 'batch'")
    assert run(stream_service, session, f"SELECT count(*), sum(id) FROM {sink}") == [(20, 210)]


def test_temporary_table_errors_are_clear(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    table = name("tmp")
    run(stream_service, session, SOURCE.format(t=table, n=3))
    with pytest.raises(ExecutionError, match="already exists"):
        run(stream_service, session, SOURCE.format(t=table, n=3))
    exists = SOURCE.format(t=table, n=3).replace("TABLE", "TABLE IF NOT EXISTS", 1)
    assert run(stream_service, session, exists) == [("OK",)]
    with pytest.raises(UnsupportedStatementError, match="one part"):
        run(stream_service, session, SOURCE.format(t=f"default.{table}", n=3))
    # A temporary view replacing it under the same name is not a connector table.
    run(stream_service, session, f"CREATE OR REPLACE TEMPORARY VIEW {table} AS SELECT 7L AS id")
    assert run(stream_service, session, f"SELECT id FROM {table}") == [(7,)]
    run(stream_service, session, f"DROP TEMPORARY TABLE {table}")
    with pytest.raises(ExecutionError, match="does not exist"):
        run(stream_service, session, f"DROP TEMPORARY TABLE {table}")
    assert run(stream_service, session, f"DROP TEMPORARY TABLE IF EXISTS {table}") == [("OK",)]
