"""sql-gateway.state.url: the gateway's own state in a real PostgreSQL database.

Jobs, persistent sessions and the catalog store live in the database instead of
files under the data directory; a restarted gateway finds its own there, and a
second gateway on the same database shares the catalogs but not the first's
sessions or jobs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.session import SessionEnvironment
from tests.postgres import PostgresServer

from .conftest import run, service_on, unique_name

pytestmark = pytest.mark.service


@pytest.fixture
def state_url(postgres: PostgresServer) -> Iterator[str]:
    name = unique_name("state")
    postgres.psql(f"CREATE DATABASE {name}", database="postgres")
    yield (
        f"postgresql+psycopg://{postgres.user}:{postgres.password}"
        f"@{postgres.host}:{postgres.port}/{name}"
    )


def _rows(postgres: PostgresServer, url: str) -> list[tuple[str, str]]:
    database = url.rsplit("/", 1)[1]
    listing = postgres.psql(
        "SELECT kind, key FROM sparkgate_records ORDER BY kind, key", database=database
    )
    return [tuple(line.split("|")) for line in listing.splitlines() if line]  # type: ignore[misc]


def test_jobs_sessions_and_catalogs_live_in_the_database(
    spark: SparkSession, postgres: PostgresServer, state_url: str, tmp_path: Path
) -> None:
    options = {"sql-gateway.state.url": state_url, "sql-gateway.session.persistent": "true"}
    catalog, table = unique_name("cat"), unique_name("t")
    with service_on(spark, tmp_path / "a", **options) as first:
        handle = first.open_session(SessionEnvironment(session_name="kept"))
        run(first, handle, "SET 'k' = 'v'")
        run(first, handle, f"CREATE CATALOG {catalog} WITH ('type' = 'generic_in_memory')")
        run(first, handle, f"CREATE TABLE {table} (id INT) USING parquet")
        (job_id,) = run(
            first,
            handle,
            f"INSERT INTO {table} VALUES (1)",
            config={"table.dml-sync": "false"},
        )[0]
        kinds = {kind for kind, _ in _rows(postgres, state_url)}
        assert kinds == {"catalogs", "jobs", "sessions"}
        assert ("sessions", handle.identifier.hex) in _rows(postgres, state_url)
        assert ("catalogs", catalog) in _rows(postgres, state_url)
        assert ("jobs", str(job_id)) in _rows(postgres, state_url)
    # Nothing of it in files of the data directory.
    for directory in ("jobs", "catalogs", "state/sessions"):
        assert not list((tmp_path / "a" / directory).glob("*.json")), directory
    with service_on(spark, tmp_path / "a", **options) as again:
        assert again.get_session_config(handle)["k"] == "v"
        assert catalog in {row[0] for row in run(again, handle, "SHOW CATALOGS")}
        jobs = {row[0]: row for row in run(again, handle, "SHOW JOBS")}
        assert str(job_id) in jobs
    with service_on(spark, tmp_path / "b", **options) as other:
        session = other.open_session(SessionEnvironment(session_name="other"))
        # The catalog store is the service's; sessions and jobs are their gateway's.
        assert catalog in {row[0] for row in run(other, session, "SHOW CATALOGS")}
        assert str(job_id) not in {row[0] for row in run(other, session, "SHOW JOBS")}
        assert other.session_count == 1
