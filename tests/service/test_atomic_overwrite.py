"""INSERT OVERWRITE of a file table is atomic: readers see the old rows until the
new ones are complete; a failure, a cancel or a crash at any point leaves the old
rows and no staged files (statements/overwrite.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.handles import SessionHandle
from sparkgate.api.jobs import JobStatus
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.statements.overwrite import OverwriteHook

from .conftest import error_text, run, service_on, unique_name

ASYNC = {"table.dml-sync": "false"}
# Fails on one row of the last of four partitions, after the others were written.
FAILING = (
    "SELECT CASE WHEN id = 3999 THEN raise_error('boom at 3999') ELSE id END "
    "FROM range(0, 4000, 1, 4)"
)
# Runs until stopped: 2,000 tasks of 0.2 s each.
ENDLESS = (
    "SELECT id + length(reflect('java.lang.Thread', 'sleep', CAST(200 AS BIGINT))) "
    "FROM range(0, 2000, 1, 2000)"
)


@pytest.fixture
def table(
    service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> Iterator[tuple[str, Path]]:
    """A parquet table of 3 rows, in a database whose directory the test looks into."""
    database = unique_name("overwrite")
    location = tmp_path / "db"
    run(service, session, f"CREATE DATABASE {database} LOCATION '{location}'")
    name = f"{database}.t"
    run(service, session, f"CREATE TABLE {name} (id BIGINT) USING parquet")
    run(service, session, f"INSERT INTO {name} VALUES (1), (2), (3)")
    yield name, location
    run(service, session, f"DROP DATABASE {database} CASCADE")


def leftovers(location: Path) -> list[str]:
    """The gateway's staged or set-aside directories beside the table's."""
    return sorted(p.name for p in location.iterdir() if ".sparkgate-" in p.name)


def rows(service: SparkGatewayService, session: SessionHandle, name: str) -> list[int]:
    return sorted(int(row[0]) for row in run(service, session, f"SELECT id FROM {name}"))


def wait_running(service: SparkGatewayService, job_id: str) -> None:
    sc = service.spark.sparkContext
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        running = service.describe_job(job_id).status is JobStatus.RUNNING
        if running and sc.statusTracker().getActiveJobsIds():
            return
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never ran a Spark job")


def test_an_overwrite_replaces_the_rows_and_leaves_nothing_beside(
    service: SparkGatewayService, session: SessionHandle, table: tuple[str, Path]
) -> None:
    name, location = table
    run(service, session, f"INSERT OVERWRITE TABLE {name} SELECT id * 10 FROM range(1, 5)")
    assert rows(service, session, name) == [10, 20, 30, 40]
    assert leftovers(location) == []


def test_an_overwrite_takes_the_querys_columns_by_position(
    service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    # Both columns of the query are named `id`: Spark inserts by position, so do we.
    name = unique_name("by_position")
    run(service, session, f"CREATE TABLE {name} (id BIGINT, amount DECIMAL(10, 2)) USING parquet")
    try:
        run(
            service,
            session,
            f"INSERT OVERWRITE TABLE {name} SELECT id, CAST(id AS DECIMAL(10, 2)) FROM range(1, 3)",
        )
        got = run(service, session, f"SELECT id, CAST(amount AS STRING) FROM {name} ORDER BY id")
        assert got == [(1, "1.00"), (2, "2.00")]
    finally:
        run(service, session, f"DROP TABLE {name}")


def test_a_failing_overwrite_keeps_the_old_rows(
    service: SparkGatewayService, session: SessionHandle, table: tuple[str, Path]
) -> None:
    name, location = table
    message = error_text(service, session, f"INSERT OVERWRITE TABLE {name} {FAILING}")
    assert "boom at 3999" in message
    assert rows(service, session, name) == [1, 2, 3]
    assert leftovers(location) == []


def test_readers_see_the_old_rows_while_an_overwrite_runs_and_a_cancel_keeps_them(
    service: SparkGatewayService, session: SessionHandle, table: tuple[str, Path]
) -> None:
    name, location = table
    job_id = run(service, session, f"INSERT OVERWRITE TABLE {name} {ENDLESS}", config=ASYNC)[0][0]
    wait_running(service, job_id)
    reader = service.open_session(SessionEnvironment())
    try:
        assert rows(service, reader, name) == [1, 2, 3]
    finally:
        service.close_session(reader)
    service.stop_job(job_id)
    assert service.jobs.wait(job_id, timeout=120).status is JobStatus.CANCELED
    assert rows(service, session, name) == [1, 2, 3]
    assert leftovers(location) == []


@pytest.fixture
def partitioned(
    service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> Iterator[tuple[str, Path]]:
    """A parquet table partitioned by (p INT, d DATE): partitions p=1 and p=2."""
    database = unique_name("overwrite_parts")
    location = tmp_path / "db"
    run(service, session, f"CREATE DATABASE {database} LOCATION '{location}'")
    name = f"{database}.t"
    run(
        service,
        session,
        f"CREATE TABLE {name} (id BIGINT, p INT, d DATE) USING parquet PARTITIONED BY (p, d)",
    )
    run(
        service,
        session,
        f"INSERT INTO {name} VALUES (1, 1, DATE'2024-01-01'), (2, 1, DATE'2024-01-02'), "
        "(3, 2, DATE'2024-01-01')",
    )
    yield name, location / "t"
    run(service, session, f"DROP DATABASE {database} CASCADE")


def contents(
    service: SparkGatewayService, session: SessionHandle, name: str
) -> list[tuple[Any, ...]]:
    """Rows as (id, p, d text), sorted."""
    query = f"SELECT id, p, CAST(d AS STRING) FROM {name} ORDER BY id"
    return [tuple(row) for row in run(service, session, query)]


def partitions(service: SparkGatewayService, session: SessionHandle, name: str) -> list[str]:
    return sorted(str(row[0]) for row in run(service, session, f"SHOW PARTITIONS {name}"))


def staged_anywhere(location: Path) -> list[str]:
    """The gateway's staged or set-aside directories anywhere in or beside the table's."""
    return sorted(str(p) for p in location.parent.rglob("*") if ".sparkgate-" in p.name)


def test_an_overwrite_of_a_partitioned_table_replaces_every_partition(
    service: SparkGatewayService, session: SessionHandle, partitioned: tuple[str, Path]
) -> None:
    name, location = partitioned
    run(
        service,
        session,
        f"INSERT OVERWRITE TABLE {name} SELECT id, CAST(id AS INT) + 1, DATE'2024-02-01' "
        "FROM range(2, 4)",
    )
    assert contents(service, session, name) == [(2, 3, "2024-02-01"), (3, 4, "2024-02-01")]
    assert partitions(service, session, name) == ["p=3/d=2024-02-01", "p=4/d=2024-02-01"]
    assert sorted(p.name for p in location.iterdir() if p.is_dir()) == ["p=3", "p=4"]
    assert staged_anywhere(location) == []


def test_an_overwrite_of_a_static_partition_replaces_only_it(
    service: SparkGatewayService, session: SessionHandle, partitioned: tuple[str, Path]
) -> None:
    name, location = partitioned
    run(
        service,
        session,
        f"INSERT OVERWRITE TABLE {name} PARTITION (p = 1) SELECT 10, DATE'2024-01-05'",
    )
    assert contents(service, session, name) == [(3, 2, "2024-01-01"), (10, 1, "2024-01-05")]
    assert partitions(service, session, name) == ["p=1/d=2024-01-05", "p=2/d=2024-01-01"]
    # Both static: one leaf replaced, its siblings kept; a new one made.
    run(
        service,
        session,
        f"INSERT OVERWRITE TABLE {name} PARTITION (p = '2', d = '2024-01-01') VALUES (20)",
    )
    run(
        service,
        session,
        f"INSERT OVERWRITE TABLE {name} PARTITION (p = 7, d = '2024-03-01') VALUES (70)",
    )
    assert contents(service, session, name) == [
        (10, 1, "2024-01-05"),
        (20, 2, "2024-01-01"),
        (70, 7, "2024-03-01"),
    ]
    assert partitions(service, session, name) == [
        "p=1/d=2024-01-05",
        "p=2/d=2024-01-01",
        "p=7/d=2024-03-01",
    ]
    assert staged_anywhere(location) == []


def test_a_failing_partition_overwrite_keeps_the_old_rows(
    service: SparkGatewayService, session: SessionHandle, partitioned: tuple[str, Path]
) -> None:
    name, location = partitioned
    before = contents(service, session, name)
    message = error_text(
        service,
        session,
        f"INSERT OVERWRITE TABLE {name} PARTITION (p = 1) "
        f"SELECT f.*, DATE'2024-01-01' FROM ({FAILING}) f",
    )
    assert "boom at 3999" in message
    assert contents(service, session, name) == before
    assert partitions(service, session, name) == [
        "p=1/d=2024-01-01",
        "p=1/d=2024-01-02",
        "p=2/d=2024-01-01",
    ]
    assert staged_anywhere(location) == []


def test_readers_see_a_partition_while_it_is_overwritten_and_a_cancel_keeps_it(
    service: SparkGatewayService, session: SessionHandle, partitioned: tuple[str, Path]
) -> None:
    name, location = partitioned
    before = contents(service, session, name)
    statement = (
        f"INSERT OVERWRITE TABLE {name} PARTITION (p = 1) "
        f"SELECT f.*, DATE'2024-01-01' FROM ({ENDLESS}) f"
    )
    job_id = run(service, session, statement, config=ASYNC)[0][0]
    wait_running(service, job_id)
    reader = service.open_session(SessionEnvironment())
    try:
        assert contents(service, reader, name) == before
    finally:
        service.close_session(reader)
    service.stop_job(job_id)
    assert service.jobs.wait(job_id, timeout=120).status is JobStatus.CANCELED
    assert contents(service, session, name) == before
    assert staged_anywhere(location) == []


def test_overwrites_the_gateway_does_not_stage_run_as_spark_runs_them(
    service: SparkGatewayService, session: SessionHandle, partitioned: tuple[str, Path]
) -> None:
    """Spark's dynamic mode replaces only the partitions it writes."""
    name, location = partitioned
    run(
        service,
        session,
        f"INSERT OVERWRITE TABLE {name} SELECT 9, 2, DATE'2024-01-01'",
        config={"spark.sql.sources.partitionOverwriteMode": "dynamic"},
    )
    assert contents(service, session, name) == [
        (1, 1, "2024-01-01"),
        (2, 1, "2024-01-02"),
        (9, 2, "2024-01-01"),
    ]
    assert staged_anywhere(location) == []


def test_an_overwrite_the_gateway_died_under_is_undone_at_start(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The job store keeps the overwrite's hook: a restart that finds the job unfinished
    puts the old files back, whether the crash came while writing or mid-swap."""
    data_dir = tmp_path / "data"
    database = unique_name("crash")
    location = tmp_path / "db"
    name = f"{database}.t"
    allow = {"sql-gateway.security.allowed-host-statements": "reflection"}
    with service_on(spark, data_dir, **allow) as service:
        handle = service.open_session(SessionEnvironment())
        run(service, handle, f"CREATE DATABASE {database} LOCATION '{location}'")
        run(service, handle, f"CREATE TABLE {name} USING parquet AS SELECT 7 AS id")
        job_id = run(service, handle, f"INSERT OVERWRITE TABLE {name} {ENDLESS}", config=ASYNC)[0][
            0
        ]
        wait_running(service, job_id)
        record = data_dir / "jobs" / f"{job_id}.json"
        stored = json.loads(record.read_text())
        assert stored["status"] == "RUNNING"
        hook = stored["hooks"][0]
        assert hook["kind"] == "insert-overwrite"
        service.stop_job(job_id)
        service.jobs.wait(job_id, timeout=120)
    # As a SIGKILL between the swap's two moves would have left it: the job RUNNING in
    # the store, the table's directory moved aside, the staged one not yet in place.
    record.write_text(json.dumps(stored))
    table_dir = Path(hook["record"]["location"].removeprefix("file:"))
    staged = Path(hook["record"]["staging"].removeprefix("file:"))
    staged.mkdir()
    (staged / "part-half.parquet").write_bytes(b"half")
    table_dir.rename(Path(hook["record"]["backup"].removeprefix("file:")))
    with service_on(spark, data_dir) as restarted:
        assert restarted.describe_job(job_id).status is JobStatus.FAILED
        handle = restarted.open_session(SessionEnvironment())
        assert run(restarted, handle, f"SELECT id FROM {name}") == [(7,)]
        assert leftovers(location) == []
        run(restarted, handle, f"DROP DATABASE {database} CASCADE")


def test_undo_keeps_a_finished_swap(spark: SparkSession, tmp_path: Path) -> None:
    """Cut after the new files were moved in: the new rows stay, the old ones go."""
    location, backup = tmp_path / "t", tmp_path / "old"
    location.mkdir()
    backup.mkdir()
    (location / "new").write_text("new")
    hook = OverwriteHook(
        spark,
        ("spark_catalog", "default", "absent"),
        str(location),
        str(tmp_path / "staged"),
        str(backup),
    )
    hook.undo()
    assert (location / "new").exists() and not backup.exists()
