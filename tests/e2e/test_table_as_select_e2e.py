"""CREATE TABLE AS on a real gateway process (``sparkgate gateway start-foreground``).

CTAS jobs the gateway dies under (SIGKILL of the gateway and of Spark's JVM),
one of each atomicity level, are undone at the next start on the same data
directory: the jobs are FAILED ("gateway restarted"), neither their tables nor
a staging table is left, in the catalog or on disk, and the names can be used
again.

A CTAS into a JDBC catalog on a real PostgreSQL server writes the rows there;
they read back over REST and through beeline (HiveServer2); a CTAS whose
query fails mid-job leaves nothing in PostgreSQL; the password is never shown;
the catalog and its table are back after a restart.
"""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.postgres import PostgresServer, jdbc_driver_jar
from tests.processes import (
    ENV,
    Rest,
    StatementFailed,
    free_port,
    gateway,
    kill_with_spark,
    log_tail,
    wait_for,
)

REPO = Path(__file__).resolve().parents[2]
ATOMIC = "table.rtas-ctas.atomicity-enabled"
# Runs for minutes: 2,000 tasks of ten rows, each row sleeping 20 ms.
ENDLESS = (
    "SELECT id, reflect('java.lang.Thread', 'sleep', CAST(20 AS BIGINT)) AS slept "
    "FROM range(0, 20000, 1, 2000)"
)
# Fails on one row of the last of four partitions, after the others were written.
FAILING = (
    "SELECT id, CASE WHEN id = 3999 THEN raise_error('boom') ELSE id END AS v "
    "FROM range(0, 4000, 1, 4)"
)
STAGING = re.compile(r"__sparkgate_staging_[0-9a-f]{16}")


def leftovers(warehouse: Path) -> list[str]:
    """Entries of the warehouse that belong to the CTAS jobs: their tables', staging tables'."""
    return sorted(
        p.name
        for p in warehouse.iterdir()
        if p.name in ("half", "staged") or p.name.startswith("__sparkgate_")
    )


def test_ctas_jobs_killed_with_their_gateway_are_undone_at_the_next_start(
    tmp_path: Path,
) -> None:
    """Both levels at once: ``half`` (not atomic: the table itself is written) and
    ``staged`` (atomic: a staging table is) run when the gateway is killed."""
    data_dir = tmp_path / "data"
    warehouse = data_dir / "warehouse"
    first, second = tmp_path / "first", tmp_path / "second"
    config = {"table.dml-sync": "false"}
    with gateway(first, data_dir) as (url, process), Rest(url) as rest:
        [[half]] = rest.rows(f"CREATE TABLE half AS {ENDLESS}", {**config, ATOMIC: "false"})
        [[staged]] = rest.rows(f"CREATE TABLE staged AS {ENDLESS}", {**config, ATOMIC: "true"})
        records = [data_dir / "jobs" / f"{job_id}.json" for job_id in (half, staged)]
        seen: dict[str, Any] = {}

        def under_way() -> bool:
            seen["jobs"] = {str(row[0]): row[2] for row in rest.rows("SHOW JOBS")}
            seen["tables"] = rest.tables()
            seen["warehouse"] = sorted(p.name for p in warehouse.iterdir())
            return (
                seen["jobs"].get(half) == seen["jobs"].get(staged) == "RUNNING"
                and any(STAGING.fullmatch(t) for t in seen["tables"])
                and (warehouse / "half").is_dir()
            )

        wait_for(under_way, 300, lambda: f"{seen}\n{log_tail(data_dir, first)}")
        assert [json.loads(r.read_text())["status"] for r in records] == ["RUNNING"] * 2
        # The atomic job's rows go to its staging table; the target appears only at the end.
        assert "staged" not in seen["tables"], seen
        assert [n for n in seen["warehouse"] if STAGING.fullmatch(n)], seen
        kill_with_spark(process)
    assert "half" in leftovers(warehouse), "the killed jobs left nothing to clean up"

    with gateway(second, data_dir) as (url, _), Rest(url) as rest:
        for job_id, record in zip((half, staged), records, strict=True):
            described = rest.record(f"DESCRIBE JOB '{job_id}'")
            assert described["status"] == "FAILED", described
            assert "gateway restarted" in str(described["cause"]), described
            stored = json.loads(record.read_text())
            assert stored["status"] == "FAILED" and stored["interrupted"] is False, stored
        tables = rest.tables()
        assert not {"half", "staged"} & tables, tables
        assert not [t for t in tables if t.startswith("__sparkgate_")], tables
        assert leftovers(warehouse) == [], log_tail(data_dir, second)
        # The names are free again.
        for name in ("half", "staged"):
            [[again]] = rest.rows(
                f"CREATE TABLE {name} AS SELECT 1 AS one", {"table.dml-sync": "true"}
            )
            assert again not in (half, staged)
            assert rest.rows(f"SELECT one FROM {name}") == [[1]]
        assert rest.tables() >= {"half", "staged"}


def beeline(hs2_port: int, statement: str) -> subprocess.CompletedProcess[str]:
    """``sparkgate beeline -u jdbc:hive2://... -e STATEMENT``, as a user runs it."""
    return subprocess.run(
        [
            str(REPO / ".venv" / "bin" / "sparkgate"),
            "beeline",
            "-u",
            f"jdbc:hive2://127.0.0.1:{hs2_port}/default",
            "-e",
            statement,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env=ENV,
    )


def test_ctas_into_a_postgres_catalog_over_rest_and_hiveserver2(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    data_dir = tmp_path / "data"
    table, failing = f"ctas_{uuid.uuid4().hex[:10]}", f"ctas_failed_{uuid.uuid4().hex[:10]}"
    hs2_port = free_port()
    options = [
        f"-Dspark.jars={jdbc_driver_jar()}",
        "-Dsql-gateway.endpoint.type=rest,hiveserver2",
        f"-Dsql-gateway.endpoint.hiveserver2.port={hs2_port}",
    ]
    expected = [[i, 2 * i] for i in range(5)]
    read_back = f"SELECT id, twice FROM pg.public.{table} ORDER BY id"
    no_staging = "SELECT count(*) FROM pg_tables WHERE starts_with(tablename, '__sparkgate_')"
    with gateway(tmp_path / "first", data_dir, *options) as (url, _), Rest(url) as rest:
        rest.rows(
            "CREATE CATALOG pg WITH ('type' = 'jdbc', "
            f"'base-url' = 'jdbc:postgresql://127.0.0.1:{postgres.port}', "
            f"'default-database' = '{postgres.database}', 'username' = '{postgres.user}', "
            f"'password' = '{postgres.password}')"
        )
        [[job_id]] = rest.rows(
            f"CREATE TABLE pg.public.{table} AS "
            "SELECT id, CAST(id * 2 AS INT) AS twice FROM range(5)"
        )
        assert re.fullmatch(r"[0-9a-f]{32}", str(job_id)), job_id
        assert postgres.psql(f"SELECT id, twice FROM public.{table} ORDER BY id") == "".join(
            f"{i}|{2 * i}\n" for i in range(5)
        )
        assert rest.rows(read_back) == expected

        done = beeline(hs2_port, f"SELECT count(*) FROM pg.public.{table}")
        assert done.returncode == 0, done.stdout + done.stderr
        assert re.search(r"^\|\s*5\s*\|$", done.stdout, flags=re.MULTILINE), done.stdout

        for atomic in ("false", "true"):
            with pytest.raises(StatementFailed) as failure:
                rest.rows(f"CREATE TABLE pg.public.{failing} AS {FAILING}", {ATOMIC: atomic})
            assert "boom" in str(failure.value), failure.value
            regclass = f"SELECT to_regclass('public.{failing}') IS NULL"
            assert postgres.psql(regclass).strip() == "t", f"atomic={atomic}"
            assert postgres.psql(no_staging).strip() == "0", f"atomic={atomic}"

        [[shown]] = rest.rows("SHOW CREATE CATALOG pg")
        assert "'password' = '****'" in shown, shown
        assert postgres.password not in shown, shown

    with gateway(tmp_path / "second", data_dir, *options) as (url, _), Rest(url) as rest:
        assert "pg" in {str(row[0]) for row in rest.rows("SHOW CATALOGS")}
        assert rest.rows(read_back) == expected
