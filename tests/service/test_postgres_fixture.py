"""The PostgreSQL test server (tests/postgres.py) is real: it answers over TCP on
loopback, runs as a non-root user, Spark reads and writes it through the JDBC
driver loaded at run time, and it is gone after its context ends."""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.postgres import JDBC_DRIVER_CLASS, PostgresServer, load_jdbc_driver, start_postgres

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# It starts a PostgreSQL server (and part of it the shared Spark session).
pytestmark = pytest.mark.service

_JDBC_CATALOG = "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog"


def _server_uid(server: PostgresServer) -> int:
    pid = int((server.data_dir / "postmaster.pid").read_text().split()[0])
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])


def test_server_answers_as_the_test_account(postgres: PostgresServer) -> None:
    answer = postgres.psql("SELECT current_user, current_database(), inet_server_port()")
    assert answer.strip() == f"{postgres.user}|{postgres.database}|{postgres.port}"
    assert postgres.host == "127.0.0.1"
    assert postgres.jdbc_url == f"jdbc:postgresql://127.0.0.1:{postgres.port}/{postgres.database}"


def test_server_does_not_run_as_root(postgres: PostgresServer) -> None:
    assert _server_uid(postgres) != 0


def test_password_is_required(postgres: PostgresServer) -> None:
    wrong = PostgresServer(
        postgres.host,
        postgres.port,
        postgres.user,
        "not-the-password",
        postgres.database,
        postgres.bin_dir,
        postgres.data_dir,
    )
    with pytest.raises(AssertionError, match="password authentication failed"):
        wrong.psql("SELECT 1")


def test_spark_reads_and_writes_through_jdbc(spark: SparkSession, postgres: PostgresServer) -> None:
    load_jdbc_driver(spark)
    postgres.psql(
        "DROP TABLE IF EXISTS fixture_people;"
        "CREATE TABLE fixture_people (id int, name text);"
        "INSERT INTO fixture_people VALUES (1, 'ada'), (2, 'grace')"
    )
    props = {"user": postgres.user, "password": postgres.password, "driver": JDBC_DRIVER_CLASS}
    rows = spark.read.jdbc(postgres.jdbc_url, "fixture_people", properties=props).collect()
    assert sorted((r.id, r.name) for r in rows) == [(1, "ada"), (2, "grace")]

    spark.range(3).selectExpr("id", "id * 10 AS tens").write.jdbc(
        postgres.jdbc_url, "fixture_written", mode="overwrite", properties=props
    )
    assert postgres.psql("SELECT sum(tens) FROM fixture_written").strip() == "30"


def test_jdbc_catalog_works_from_any_thread(spark: SparkSession, postgres: PostgresServer) -> None:
    """The driver loaded at run time serves statements on other threads too, as
    the gateway runs them (``ADD JAR`` alone would not)."""
    load_jdbc_driver(spark)
    session = spark.newSession()
    session.conf.set("spark.sql.catalog.fixture_pg", _JDBC_CATALOG)
    for key, value in postgres.jdbc_options.items():
        session.conf.set(f"spark.sql.catalog.fixture_pg.{key}", value)
    results: dict[str, object] = {}

    def create() -> None:
        try:
            session.sql("DROP TABLE IF EXISTS fixture_pg.public.fixture_ctas")
            session.sql("CREATE TABLE fixture_pg.public.fixture_ctas AS SELECT id FROM range(4)")
            results["count"] = session.sql(
                "SELECT count(*) FROM fixture_pg.public.fixture_ctas"
            ).first()
        except Exception as exc:  # reported below, on the test's thread
            results["error"] = exc

    worker = threading.Thread(target=create)
    worker.start()
    worker.join()
    assert "error" not in results, results.get("error")
    assert results["count"] is not None and results["count"][0] == 4  # type: ignore[index]
    assert postgres.psql("SELECT count(*) FROM public.fixture_ctas").strip() == "4"


def test_server_and_files_are_gone_after_the_context() -> None:
    with start_postgres(database="fixture_scratch") as server:
        assert server.psql("SELECT 1").strip() == "1"
        root = server.data_dir.parent
        assert root.is_dir()
    assert not root.exists()
    with socket.socket() as sock:
        assert sock.connect_ex((server.host, server.port)) != 0
