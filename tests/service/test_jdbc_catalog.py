"""CREATE CATALOG ... WITH ('type' = 'jdbc') on a real PostgreSQL server: the
driver added with ADD JAR, tables made and read through the catalog, secrets
never shown, bad connections refused with nothing stored, and the catalog
back after a restart."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.postgres import PostgresServer, jdbc_driver_jar

from .conftest import error_text, opened_session, run, service_on, unique_name

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _create(name: str, server: PostgresServer, **overrides: str) -> str:
    options = {
        "type": "jdbc",
        "base-url": f"jdbc:postgresql://{server.host}:{server.port}",
        "default-database": server.database,
        "username": server.user,
        "password": server.password,
        **overrides,
    }
    body = ", ".join(f"'{key}' = '{value}'" for key, value in options.items())
    return f"CREATE CATALOG {name} WITH ({body})"


def test_postgres_catalog_round_trip_and_restart(
    spark: SparkSession,
    postgres: PostgresServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="sparkgate")
    name, table = unique_name("pg"), unique_name("people")
    jar = jdbc_driver_jar()
    with service_on(spark, tmp_path) as service, opened_session(service) as session:
        run(service, session, f"ADD JAR '{jar}'")
        run(service, session, _create(name, postgres))
        run(service, session, f"USE CATALOG {name}")
        assert run(service, session, "SHOW CURRENT DATABASE") == [("public",)]
        run(service, session, f"CREATE TABLE {table} (id INT, name STRING)")
        run(service, session, f"INSERT INTO {table} VALUES (1, 'ada'), (2, 'grace')")
        assert postgres.psql(f"SELECT id, name FROM public.{table} ORDER BY id") == (
            "1|ada\n2|grace\n"
        )
        assert "public" in service.list_databases(session, name)
        assert table in {t.identifier.name for t in service.list_tables(session, name, "public")}

        shown = run(service, session, f"SHOW CREATE CATALOG {name}")[0][0]
        described = run(service, session, f"DESCRIBE CATALOG EXTENDED {name}")
        assert "'password' = '****'" in shown
        assert ("option:password", "******") in described
        assert ("option:username", postgres.user) in described
        run(service, session, "USE CATALOG spark_catalog")
    assert postgres.password not in shown + repr(described)
    assert postgres.password not in caplog.text

    # Back after a restart, with its tables; the driver is in the JVM already.
    with service_on(spark, tmp_path) as service, opened_session(service) as session:
        assert run(service, session, f"SELECT name FROM {name}.public.{table} WHERE id = 2") == [
            ("grace",)
        ]
        run(service, session, f"DROP TABLE {name}.public.{table}")
        run(service, session, f"DROP CATALOG {name}")
    assert postgres.psql(f"SELECT to_regclass('public.{table}') IS NULL").strip() == "t"


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"password": "wrong-password"}, "password authentication failed"),
        ({"base-url": "jdbc:postgresql://127.0.0.1:1"}, "Connection refused"),
        ({"default-database": "no_such_db"}, 'database "no_such_db" does not exist'),
        ({"base-url": "postgresql://127.0.0.1:1"}, "'base-url' must be a JDBC URL"),
    ],
)
def test_a_catalog_that_cannot_connect_is_not_made(
    spark: SparkSession,
    postgres: PostgresServer,
    tmp_path: Path,
    overrides: dict[str, str],
    expected: str,
) -> None:
    name = unique_name("pgbad")
    with service_on(spark, tmp_path) as service, opened_session(service) as session:
        run(service, session, f"ADD JAR '{jdbc_driver_jar()}'")
        message = error_text(service, session, _create(name, postgres, **overrides))
        assert expected in message
        assert message.startswith(f"Could not create catalog '{name}'")
        assert postgres.password not in message
        assert name not in service.catalogs
        assert name not in {row[0] for row in run(service, session, "SHOW CATALOGS")}
    assert not (tmp_path / "catalogs" / f"{name}.json").exists()


def _pg_tables(server: PostgresServer, prefix: str) -> list[str]:
    listed = server.psql(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
    )
    return [t for t in listed.split() if t.startswith((prefix, "__sparkgate_"))]


@pytest.mark.parametrize("atomic", ["false", "true"])
def test_ctas_into_a_postgres_catalog(
    spark: SparkSession, postgres: PostgresServer, tmp_path: Path, atomic: str
) -> None:
    name, table = unique_name("pgctas"), unique_name("ctas")
    failing = (
        "SELECT id, CASE WHEN id = 3999 THEN raise_error('boom at 3999') ELSE id END AS v "
        "FROM range(0, 4000, 1, 4)"
    )
    config = {"table.rtas-ctas.atomicity-enabled": atomic}
    with service_on(spark, tmp_path) as service, opened_session(service) as session:
        run(service, session, f"ADD JAR '{jdbc_driver_jar()}'")
        run(service, session, _create(name, postgres))
        try:
            target = f"{name}.public.{table}"
            run(
                service, session, f"CREATE TABLE {target} AS SELECT id FROM range(3)", config=config
            )
            assert postgres.psql(f"SELECT sum(id) FROM public.{table}").strip() == "3"
            assert _pg_tables(postgres, table) == [table]

            half = f"{table}_half"
            message = error_text(
                service, session, f"CREATE TABLE {name}.public.{half} AS {failing}"
            )
            assert "boom at 3999" in message
            assert _pg_tables(postgres, table) == [table]

            # A failed REPLACE leaves the old rows; one that works swaps them.
            assert "boom at 3999" in error_text(
                service, session, f"REPLACE TABLE {target} AS {failing}"
            )
            assert postgres.psql(f"SELECT sum(id) FROM public.{table}").strip() == "3"
            run(service, session, f"REPLACE TABLE {target} AS SELECT 'new' AS tag", config=config)
            assert postgres.psql(f"SELECT tag FROM public.{table}").strip() == "new"
            assert _pg_tables(postgres, table) == [table]
            run(service, session, f"DROP TABLE {target}")
        finally:
            run(service, session, f"DROP CATALOG {name}")
