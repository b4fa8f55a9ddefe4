"""Flink's ``jdbc`` connector on a real PostgreSQL server: scans (partitioned
too), appends, upserts by the primary key (no staging table left behind), a
streaming changelog written by key, the password never shown or logged, and
bad definitions refused with nothing made."""

from __future__ import annotations

import logging
import time

import pytest

from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from tests.postgres import PostgresServer, jdbc_driver_jar

from .conftest import error_text, run, unique_name


def _table(name: str, columns: str, server: PostgresServer, table: str, **extra: str) -> str:
    options = {
        "connector": "jdbc",
        "url": server.jdbc_url,
        "table-name": table,
        "username": server.user,
        "password": server.password,
        **extra,
    }
    body = ", ".join(f"'{key}' = '{value}'" for key, value in options.items())
    return f"CREATE TABLE {name} ({columns}) WITH ({body})"


@pytest.fixture
def jdbc_session(service: SparkGatewayService) -> SessionHandle:
    session = service.open_session(SessionEnvironment(session_name="jdbc"))
    run(service, session, f"ADD JAR '{jdbc_driver_jar()}'")
    yield session  # type: ignore[misc]
    service.close_session(session)


def _staging_tables(server: PostgresServer) -> str:
    return server.psql(
        "SELECT count(*) FROM pg_tables WHERE tablename LIKE '%__sparkgate_%'"
    ).strip()


def test_scan_append_and_upsert(
    service: SparkGatewayService,
    jdbc_session: SessionHandle,
    postgres: PostgresServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="sparkgate")
    session = jdbc_session
    pg = unique_name("people")
    postgres.psql(
        f"CREATE TABLE {pg} (id INT PRIMARY KEY, name TEXT, score DOUBLE PRECISION);"
        f"INSERT INTO {pg} VALUES (1, 'ada', 1.5), (2, 'grace', 2.5)"
    )
    people = unique_name("pg_people")
    columns = "id INT, name STRING, score DOUBLE, PRIMARY KEY (id) NOT ENFORCED"
    run(service, session, _table(people, columns, postgres, pg))
    assert run(service, session, f"SELECT * FROM {people} ORDER BY id") == [
        (1, "ada", 1.5),
        (2, "grace", 2.5),
    ]
    # Upsert: id 1 updated, id 3 added; Flink's sink semantics for a keyed table.
    run(service, session, f"INSERT INTO {people} VALUES (1, 'lovelace', 9.0), (3, 'edsger', 3.0)")
    assert postgres.psql(f"SELECT id, name, score FROM {pg} ORDER BY id") == (
        "1|lovelace|9\n2|grace|2.5\n3|edsger|3\n"
    )
    assert _staging_tables(postgres) == "0"

    # Without a key: appended, rows twice.
    log_table = unique_name("log")
    postgres.psql(f"CREATE TABLE {log_table} (id INT, name TEXT)")
    logged = unique_name("pg_log")
    run(service, session, _table(logged, "id INT, name STRING", postgres, log_table))
    for _ in range(2):
        run(service, session, f"INSERT INTO {logged} SELECT id, name FROM {people}")
    assert postgres.psql(f"SELECT count(*) FROM {log_table}").strip() == "6"

    # A partitioned scan reads the same rows.
    parted = unique_name("pg_parted")
    run(
        service,
        session,
        _table(
            parted,
            columns,
            postgres,
            pg,
            **{
                "scan.partition.column": "id",
                "scan.partition.num": "2",
                "scan.partition.lower-bound": "1",
                "scan.partition.upper-bound": "3",
            },
        ),
    )
    assert run(service, session, f"SELECT count(*), sum(id) FROM {parted}") == [(3, 6)]

    shown = run(service, session, f"SHOW CREATE TABLE {people}")[0][0]
    assert "'password' = '****'" in shown
    assert postgres.password not in shown
    assert postgres.password not in caplog.text
    for table in (people, logged, parted):
        run(service, session, f"DROP TABLE {table}")


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"scan.partition.column": "id"}, "A partitioned jdbc scan needs all of"),
        ({"url": "postgresql://nowhere"}, "'url' must be a JDBC URL"),
        ({"bogus": "1"}, "Unsupported option 'bogus' for connector 'jdbc'"),
    ],
)
def test_bad_definitions_are_refused(
    service: SparkGatewayService,
    jdbc_session: SessionHandle,
    postgres: PostgresServer,
    extra: dict[str, str],
    expected: str,
) -> None:
    name = unique_name("pg_bad")
    text = error_text(service, jdbc_session, _table(name, "id INT", postgres, "t", **extra))
    assert expected in text
    assert run(service, jdbc_session, f"SHOW TABLES LIKE '{name}'") == []


def test_a_wrong_password_fails_clearly_and_leaves_nothing(
    service: SparkGatewayService, jdbc_session: SessionHandle, postgres: PostgresServer
) -> None:
    pg = unique_name("keyed")
    postgres.psql(f"CREATE TABLE {pg} (id INT PRIMARY KEY, v INT)")
    name = unique_name("pg_wrong")
    columns = "id INT, v INT, PRIMARY KEY (id) NOT ENFORCED"
    run(service, jdbc_session, _table(name, columns, postgres, pg, password="not-it"))
    text = error_text(service, jdbc_session, f"INSERT INTO {name} VALUES (1, 1)")
    assert "password authentication failed" in text
    assert "not-it" not in text
    assert _staging_tables(postgres) == "0"
    assert postgres.psql(f"SELECT count(*) FROM {pg}").strip() == "0"
    run(service, jdbc_session, f"DROP TABLE {name}")


def test_a_streaming_changelog_is_written_by_key(
    service: SparkGatewayService,
    jdbc_session: SessionHandle,
    postgres: PostgresServer,
) -> None:
    session = jdbc_session
    pg = unique_name("counts")
    postgres.psql(f"CREATE TABLE {pg} (k INT PRIMARY KEY, n BIGINT)")
    counts = unique_name("pg_counts")
    run(
        service,
        session,
        _table(counts, "k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED", postgres, pg),
    )
    source = unique_name("numbers")
    run(
        service,
        session,
        f"CREATE TABLE {source} (v INT) WITH ('connector' = 'datagen', "
        "'fields.v.kind' = 'sequence', 'fields.v.start' = '1', 'fields.v.end' = '30', "
        "'rows-per-second' = '10')",
    )
    run(service, session, "SET 'execution.runtime-mode' = 'streaming'")
    run(
        service,
        session,
        f"INSERT INTO {counts} SELECT v % 3, count(*) FROM {source} GROUP BY v % 3",
    )
    deadline = time.monotonic() + 180
    while postgres.psql(f"SELECT string_agg(k || ':' || n, ',' ORDER BY k) FROM {pg}").strip() != (
        "0:10,1:10,2:10"
    ):
        assert time.monotonic() < deadline, postgres.psql(f"SELECT * FROM {pg}")
        time.sleep(1)
    assert _staging_tables(postgres) == "0"
    for job_id, _name, status, *_ in run(service, session, "SHOW JOBS"):
        if status == "RUNNING":
            run(service, session, f"STOP JOB '{job_id}'")
    run(service, session, "SET 'execution.runtime-mode' = 'batch'")
    run(service, session, f"DROP TABLE {counts}")
    run(service, session, f"DROP TABLE {source}")
