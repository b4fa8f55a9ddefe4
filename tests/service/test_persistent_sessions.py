"""sql-gateway.session.persistent: a session handle outlives a restart of the gateway.

With it on, a gateway service stopped (or gone) and a new one started on the
same data directory serves the same session handles, with their properties,
current catalog and database, temporary connector tables and views; the
operations they had open answer with an error saying what became of them.
Off (the default, as Flink), a restart forgets every session.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import ExecutionError, SessionNotFoundError
from sparkgate.api.session import SessionEnvironment
from sparkgate.api.status import OperationStatus

from .conftest import fetch_all, run, service_on, unique_name

PERSISTENT = {
    "sql-gateway.session.persistent": "true",
    # A statement that is still running when the gateway stops (reflect's sleep).
    "sql-gateway.security.allowed-host-statements": "reflection",
}


def test_by_default_a_restart_forgets_every_session(spark: SparkSession, tmp_path: Path) -> None:
    with service_on(spark, tmp_path) as first:
        handle = first.open_session(SessionEnvironment(session_name="gone"))
        run(first, handle, "SET 'k' = 'v'")
    with service_on(spark, tmp_path) as second:
        with pytest.raises(SessionNotFoundError, match="does not exist"):
            second.get_session_config(handle)
        assert second.session_count == 0
    assert not (tmp_path / "state" / "sessions").exists()


def test_a_persistent_session_continues_after_a_restart(
    spark: SparkSession, tmp_path: Path
) -> None:
    database, source = unique_name("db"), unique_name("gen")
    with service_on(spark, tmp_path, **PERSISTENT) as first:
        handle = first.open_session(
            SessionEnvironment(session_name="kept", config={"opened.with": "this"})
        )
        run(first, handle, "SET 'table.exec.state.ttl' = '1 h'")
        run(first, handle, "SET 'spark.sql.shuffle.partitions' = '3'")
        run(first, handle, f"CREATE DATABASE {database}")
        run(first, handle, f"USE {database}")
        run(
            first,
            handle,
            f"CREATE TEMPORARY TABLE {source} (id BIGINT) WITH ('connector' = 'datagen', "
            "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '5')",
        )
        run(first, handle, f"CREATE TEMPORARY VIEW doubled AS SELECT id * 2 AS d FROM {source}")
        run(first, handle, "CREATE TABLE kept_rows (id INT) USING parquet")
        run(first, handle, "INSERT INTO kept_rows VALUES (7)")
        finished = first.execute_statement(handle, "SELECT 1")
        fetch_all(first, handle, finished)  # a result read, its operation left open
        running = first.execute_statement(
            handle, "SELECT reflect('java.lang.Thread', 'sleep', 3000L)"
        )
        # The read statement ends a moment after its last page (its Spark job lines
        # and settings are put back after the client has the end of stream): the
        # record says so once it has.
        expected = {str(finished): False, str(running): True}
        path = tmp_path / "state" / "sessions" / f"{handle.identifier.hex}.json"
        deadline = time.monotonic() + 10
        record = json.loads(path.read_text())
        while record["operations"] != expected and time.monotonic() < deadline:
            time.sleep(0.05)
            record = json.loads(path.read_text())
        assert record["handle"] == str(handle)
        assert record["operations"] == expected
    with service_on(spark, tmp_path, **PERSISTENT) as second:
        config = second.get_session_config(handle)
        assert config["opened.with"] == "this"
        assert config["table.exec.state.ttl"] == "1 h"
        assert config["spark.sql.shuffle.partitions"] == "3"
        assert run(second, handle, "SELECT current_database()") == [(database,)]
        assert run(second, handle, "SELECT sum(d) FROM doubled") == [(30,)]
        assert run(second, handle, "SELECT id FROM kept_rows") == [(7,)]
        assert run(second, handle, "SET 'spark.sql.shuffle.partitions'") == [
            ("spark.sql.shuffle.partitions", "3")
        ]
        # Its operations: ERROR, saying why.
        for operation, says in (
            (running, "while this statement was running"),
            (finished, "did not keep this statement's result"),
        ):
            info = second.get_operation_info(handle, operation)
            assert info.status is OperationStatus.ERROR
            assert says in str(info.error)
            with pytest.raises(ExecutionError, match="gateway restarted"):
                second.fetch_results(handle, operation, 0, 10)
            second.close_operation(handle, operation)
        # Other sessions of the new gateway are new.
        other = second.open_session(SessionEnvironment(session_name="new"))
        with pytest.raises(ExecutionError):
            run(second, other, "SELECT * FROM doubled")
        second.close_session(other)
        # A restored session still follows its changes.
        run(second, handle, "SET 'after.restart' = 'yes'")
    with service_on(spark, tmp_path, **PERSISTENT) as third:
        assert third.get_session_config(handle)["after.restart"] == "yes"
        third.close_session(handle)
        assert not (tmp_path / "state" / "sessions" / f"{handle.identifier.hex}.json").exists()
    with service_on(spark, tmp_path, **PERSISTENT) as fourth, pytest.raises(SessionNotFoundError):
        fourth.get_session_config(handle)


def test_a_session_whose_state_cannot_be_made_again_is_lost_with_a_reason(
    spark: SparkSession, tmp_path: Path
) -> None:
    database = unique_name("db")
    with service_on(spark, tmp_path, **PERSISTENT) as first:
        handle = first.open_session(SessionEnvironment(session_name="doomed"))
        run(first, handle, f"CREATE DATABASE {database}")
        run(first, handle, f"CREATE TABLE {database}.t (id INT) USING parquet")
        run(first, handle, f"CREATE TEMPORARY VIEW v AS SELECT id FROM {database}.t")
        # Gone behind the session's back: its view cannot be made again.
        spark.sql(f"DROP DATABASE {database} CASCADE")
    with service_on(spark, tmp_path, **PERSISTENT) as second:
        with pytest.raises(SessionNotFoundError, match="was not restored") as info:
            second.get_session_config(handle)
        assert "gateway restarted" in str(info.value)
        assert second.session_count == 0
