"""Connector tables and views in a ``generic_in_memory`` catalog, as Flink's hold
them: written and read in batch and streaming mode, shared by every session,
listed in Spark's shapes on sessions that are not Flink's, and gone with the
catalog. (The Flink-protocol forms are golden cases in ``tests/rest/statements/catalogs.q``.)"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import EndpointVersion, SessionEnvironment
from sparkgate.service.catalogs.objects import CatalogObjects
from sparkgate.service.gateway import SparkGatewayService

from .conftest import error_text, run, unique_name

HIVE = EndpointVersion("hiveserver2", "HIVE_CLI_SERVICE_PROTOCOL_V10")


def test_connector_tables_and_views_of_an_in_memory_catalog(
    service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    catalog = unique_name("objs")
    run(service, session, f"CREATE CATALOG {catalog} WITH ('type' = 'generic_in_memory')")
    try:
        run(service, session, f"USE CATALOG {catalog}")
        run(
            service,
            session,
            "CREATE TABLE ids (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '4', "
            "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '4')",
        )
        run(
            service,
            session,
            f"CREATE TABLE copies (id BIGINT) WITH ('connector' = 'filesystem', "
            f"'path' = '{(tmp_path / 'copies').as_posix()}', 'format' = 'parquet')",
        )
        run(service, session, "CREATE VIEW odd AS SELECT id FROM ids WHERE id % 2 = 1")
        # A batch INSERT, then a streaming job, into the catalog's filesystem table.
        run(service, session, "SET 'table.dml-sync' = 'true'")
        run(service, session, "INSERT INTO copies SELECT id * 10 FROM odd")
        run(service, session, "SET 'execution.runtime-mode' = 'streaming'")
        run(service, session, "INSERT INTO copies SELECT id + 100 FROM ids")
        run(service, session, "SET 'execution.runtime-mode' = 'batch'")
        expected = [10, 30, 101, 102, 103, 104]
        assert sorted(r[0] for r in run(service, session, "SELECT id FROM copies")) == expected
        # Every session sees them, by their full names (here a HiveServer2 one).
        other = service.open_session(SessionEnvironment(endpoint_version=HIVE))
        try:
            full = f"{catalog}.`default`"
            assert run(service, other, f"SELECT count(*) FROM {full}.copies") == [(6,)]
            assert run(service, other, f"SELECT sum(id) FROM {full}.odd") == [(4,)]
            # Spark's shapes on a session that is not Flink's: namespace, name, temporary.
            listed = run(service, other, f"SHOW TABLES IN {full}")
            assert sorted(listed) == [
                ("default", "copies", False),
                ("default", "ids", False),
                ("default", "odd", False),
            ]
            assert run(service, other, f"SHOW VIEWS IN {full}") == [("default", "odd", False)]
        finally:
            service.close_session(other)
        assert "already exists" in error_text(service, session, "CREATE VIEW odd AS SELECT 1")
    finally:
        run(service, session, "USE CATALOG spark_catalog")
        run(service, session, f"DROP CATALOG {catalog}")
    # Gone with the catalog: one made again under its name is empty.
    run(service, session, f"CREATE CATALOG {catalog} WITH ('type' = 'generic_in_memory')")
    try:
        assert run(service, session, f"SHOW TABLES IN {catalog}.`default`") == []
    finally:
        run(service, session, f"DROP CATALOG {catalog}")


def test_only_the_gateways_in_memory_catalogs_keep_objects(spark: SparkSession) -> None:
    """A catalog of another kind (a JDBC database, Spark's own) keeps none: a
    connector table or view there is refused with the way out."""
    assert CatalogObjects.of(spark, "spark_catalog") is None
    assert CatalogObjects.of(spark, "nowhere") is None
    spark.conf.set("spark.sql.catalog.pg_like.url", "jdbc:postgresql://127.0.0.1:5432/db")
    try:
        assert CatalogObjects.of(spark, "pg_like") is None
    finally:
        spark.conf.unset("spark.sql.catalog.pg_like.url")


_UPPER = "org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper"
_LOWER = "org.apache.hadoop.hive.ql.udf.generic.GenericUDFLower"


def test_functions_of_an_in_memory_catalog(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    catalog = unique_name("fns")
    run(service, session, f"CREATE CATALOG {catalog} WITH ('type' = 'generic_in_memory')")
    try:
        run(service, session, f"CREATE DATABASE {catalog}.db")
        run(service, session, f"CREATE FUNCTION {catalog}.db.up AS '{_UPPER}' LANGUAGE JAVA")
        again = f"CREATE FUNCTION {catalog}.db.up AS '{_LOWER}'"
        assert f"Function db.up already exists in Catalog {catalog}" in error_text(
            service, session, again
        )
        run(service, session, f"CREATE FUNCTION IF NOT EXISTS {catalog}.db.up AS '{_LOWER}'")
        # Called by its full name from anywhere, by its own name in its database.
        assert run(service, session, f"SELECT {catalog}.db.up('abc')") == [("ABC",)]
        assert run(service, session, f"SHOW USER FUNCTIONS FROM {catalog}.db") == [("up",)]
        assert ("up",) not in run(service, session, "SHOW USER FUNCTIONS")
        run(service, session, f"USE CATALOG {catalog}")
        run(service, session, "USE db")
        assert run(service, session, "SELECT up(s) FROM (VALUES ('hi'), ('yo')) AS t(s)") == [
            ("HI",),
            ("YO",),
        ]
        # A table may share its name; a view calls it by its full name from anywhere.
        run(service, session, "CREATE TABLE up (a INT) WITH ('connector' = 'blackhole')")
        run(service, session, "CREATE VIEW shout AS SELECT up('x') AS u")
        # A built-in function comes first, as in Flink.
        run(service, session, f"CREATE FUNCTION lower AS '{_UPPER}'")
        assert run(service, session, "SELECT lower('ABC')") == [("abc",)]
        run(service, session, f"ALTER FUNCTION up AS '{_LOWER}'")
        assert run(service, session, "SELECT up('ABC')") == [("abc",)]
        run(service, session, "USE CATALOG spark_catalog")
        assert run(service, session, f"SELECT u FROM {catalog}.db.shout") == [("x",)]
        # The temporary functions that stood for it are gone with each statement.
        assert not [r for r in run(service, session, "SHOW USER FUNCTIONS") if "up" in r[0]]
        run(service, session, f"DROP FUNCTION {catalog}.db.up")
        assert "UNRESOLVED_ROUTINE" in error_text(service, session, f"SELECT {catalog}.db.up('a')")
        run(service, session, f"DROP FUNCTION IF EXISTS {catalog}.db.up")
        assert "does not exist" in error_text(service, session, f"DROP FUNCTION {catalog}.db.up")
        assert run(service, session, f"SHOW TABLES IN {catalog}.db") == [("shout",), ("up",)]
    finally:
        run(service, session, "USE CATALOG spark_catalog")
        run(service, session, f"DROP CATALOG {catalog}")
