"""CREATE / USE / SHOW / DESCRIBE / ALTER / DROP CATALOG through the service, and
the catalog store that keeps catalogs across a gateway restart (FLIP-295)."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from sparkgate.api.handles import SessionHandle
from sparkgate.service.gateway import SparkGatewayService

from .conftest import error_text, opened_session, run, service_on, unique_name

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _catalogs(service: SparkGatewayService, session: SessionHandle) -> set[str]:
    return {row[0] for row in run(service, session, "SHOW CATALOGS")}


def test_in_memory_catalog_lifecycle(service: SparkGatewayService, session: SessionHandle) -> None:
    name = unique_name("mem")
    run(
        service,
        session,
        f"CREATE CATALOG {name} COMMENT 'scratch' WITH ('type' = 'generic_in_memory')",
    )
    try:
        assert name in _catalogs(service, session)
        assert name in service.list_catalogs(session)
        assert name in service.complete_statement(session, f"USE CATALOG {name[:5]}", 17)
        run(service, session, f"USE CATALOG {name}")
        assert run(service, session, "SHOW CURRENT CATALOG") == [(name,)]
        # Flink's USE CATALOG lands in the catalog's default database.
        assert run(service, session, "SHOW CURRENT DATABASE") == [("default",)]
        run(service, session, "CREATE TABLE people (id INT, name STRING)")
        run(service, session, "INSERT INTO people VALUES (1, 'ada'), (2, 'grace')")
        assert sorted(run(service, session, "SELECT id, name FROM people")) == [
            (1, "ada"),
            (2, "grace"),
        ]
        assert "people" in {
            t.identifier.name for t in service.list_tables(session, name, "default")
        }

        assert run(service, session, f"DESCRIBE CATALOG {name}") == [
            ("name", name),
            ("type", "generic_in_memory"),
            ("comment", "scratch"),
        ]
        run(service, session, f"ALTER CATALOG {name} COMMENT 'renamed'")
        assert ("comment", "renamed") in run(service, session, f"DESCRIBE CATALOG {name}")
        shown = run(service, session, f"SHOW CREATE CATALOG {name}")[0][0]
        assert shown.startswith(f"CREATE CATALOG `{name}`\nCOMMENT 'renamed'\nWITH (")
        assert "'type' = 'generic_in_memory'" in shown

        # Not while it is this session's current catalog; nothing changes.
        message = error_text(service, session, f"DROP CATALOG {name}")
        assert "current catalog" in message
        assert name in _catalogs(service, session)
        run(service, session, "USE CATALOG spark_catalog")
    finally:
        run(service, session, "USE CATALOG spark_catalog")
        run(service, session, f"DROP CATALOG IF EXISTS {name}")
    assert name not in _catalogs(service, session)
    assert "does not exist" in error_text(service, session, f"USE CATALOG {name}")
    assert run(service, session, f"DROP CATALOG IF EXISTS {name}") == [("OK",)]


def test_catalogs_belong_to_the_gateway(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    """A catalog made in one session is in every session, open before or after."""
    name = unique_name("shared")
    with opened_session(service) as earlier:
        run(service, session, f"CREATE CATALOG {name} WITH ('type' = 'generic_in_memory')")
        try:
            run(service, session, f"CREATE TABLE {name}.`default`.t AS SELECT 7 AS x")
            assert run(service, earlier, f"SELECT x FROM {name}.`default`.t") == [(7,)]
            with opened_session(service) as later:
                assert name in _catalogs(service, later)
                assert run(service, later, f"SELECT x FROM {name}.`default`.t") == [(7,)]
        finally:
            run(service, session, f"DROP CATALOG {name}")
        assert name in error_text(service, earlier, f"SELECT x FROM {name}.`default`.t")


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        (
            "CREATE CATALOG {name} WITH ('type' = 'nope')",
            "unknown catalog type 'nope' (known types: ",
        ),
        ("CREATE CATALOG {name} WITH ('a' = 'b')", "the option 'type' is missing (known types: "),
        (
            "CREATE CATALOG {name} WITH ('type' = 'jdbc', 'base-url' = 'jdbc:postgresql://h:1')",
            "missing required option(s) 'default-database', 'username', 'password'",
        ),
        (
            "CREATE CATALOG {name} WITH ('type' = 'generic_in_memory', 'color' = 'red')",
            "unsupported option(s) 'color'",
        ),
        ("CREATE CATALOG {name} WITH ('type' = 'spark')", "missing required option 'class'"),
        (
            "CREATE CATALOG {name} WITH ('type' = 'spark', 'class' = 'no.such.Catalog')",
            "no.such.Catalog",
        ),
        ("CREATE CATALOG spark_catalog WITH ('type' = 'generic_in_memory')", "already exists"),
    ],
)
def test_bad_catalogs_are_refused_and_nothing_is_made(
    service: SparkGatewayService, session: SessionHandle, statement: str, expected: str
) -> None:
    name = unique_name("bad")
    message = error_text(service, session, statement.format(name=name))
    assert expected in message
    if "known types" in expected:
        assert "generic_in_memory" in message and "jdbc" in message
    assert name not in _catalogs(service, session)
    assert name not in service.catalogs


def test_create_twice_and_if_not_exists(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    name = unique_name("twice")
    run(
        service,
        session,
        f"CREATE CATALOG {name} COMMENT 'first' WITH ('type' = 'generic_in_memory')",
    )
    try:
        assert "already exists" in error_text(
            service, session, f"CREATE CATALOG {name} WITH ('type' = 'generic_in_memory')"
        )
        run(
            service,
            session,
            f"CREATE CATALOG IF NOT EXISTS {name} COMMENT 'second' "
            "WITH ('type' = 'generic_in_memory')",
        )
        assert ("comment", "first") in run(service, session, f"DESCRIBE CATALOG {name}")
        message = error_text(service, session, f"ALTER CATALOG {name} SET ('type' = 'jdbc')")
        assert "'type' cannot be changed" in message
        assert "does not exist" in error_text(service, session, f"DESCRIBE CATALOG {name}_missing")
        assert "does not exist" in error_text(service, session, f"DROP CATALOG {name}_missing")
    finally:
        run(service, session, f"DROP CATALOG {name}")


def test_the_file_store_keeps_catalogs_across_a_restart(
    spark: SparkSession, tmp_path: Path
) -> None:
    name = unique_name("kept")
    with service_on(spark, tmp_path) as first, opened_session(first) as session:
        run(
            first,
            session,
            f"CREATE CATALOG {name} COMMENT 'stays' WITH ('type' = 'generic_in_memory')",
        )
    stored = tmp_path / "catalogs" / f"{name}.json"
    assert json.loads(stored.read_text())["options"] == {"type": "generic_in_memory"}
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    with service_on(spark, tmp_path) as second, opened_session(second) as session:
        assert name in _catalogs(second, session)
        assert ("comment", "stays") in run(second, session, f"DESCRIBE CATALOG {name}")
        run(second, session, f"USE CATALOG {name}")
        assert run(second, session, "SHOW CURRENT DATABASE") == [("default",)]
        run(second, session, "USE CATALOG spark_catalog")
        run(second, session, f"DROP CATALOG {name}")
    assert not stored.exists()
    with service_on(spark, tmp_path) as third, opened_session(third) as session:
        assert name not in _catalogs(third, session)


def test_the_in_memory_store_forgets_at_stop(spark: SparkSession, tmp_path: Path) -> None:
    name = unique_name("gone")
    options = {
        "sql-gateway.data-dir": str(tmp_path),
        "table.catalog-store.kind": "generic_in_memory",
    }
    from .conftest import make_service

    first = make_service(spark, **options)
    try:
        with opened_session(first) as session:
            run(first, session, f"CREATE CATALOG {name} WITH ('type' = 'generic_in_memory')")
            assert name in _catalogs(first, session)
    finally:
        first.stop()
    assert not (tmp_path / "catalogs").exists()
    second = make_service(spark, **options)
    try:
        with opened_session(second) as session:
            assert name not in _catalogs(second, session)
    finally:
        second.stop()


def test_drop_refuses_the_built_in_catalog_and_catalogs_in_use(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    for statement in ("DROP CATALOG spark_catalog", "DROP CATALOG IF EXISTS spark_catalog"):
        assert "Spark's built-in catalog" in error_text(service, session, statement)
    name = unique_name("busy")
    run(service, session, f"CREATE CATALOG {name} WITH ('type' = 'generic_in_memory')")
    with opened_session(service) as other:
        run(service, other, f"USE CATALOG {name}")
        # Another session works in it: dropping it under that session is refused.
        message = error_text(service, session, f"DROP CATALOG {name}")
        assert "current catalog of 1 other session(s)" in message
        assert run(service, other, "SHOW CURRENT CATALOG") == [(name,)]
        run(service, other, "USE CATALOG spark_catalog")
        run(service, session, f"DROP CATALOG {name}")
    assert name not in _catalogs(service, session)
