"""CREATE TABLE AS in streaming mode: the table is created as the job starts, a
long-running job keeps writing it, it stops with a savepoint like any INSERT
job and resumes from it exactly once."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from sparkgate.api.handles import SessionHandle
from sparkgate.service.gateway import SparkGatewayService
from tests.service.conftest import error_text

from .conftest import job_status, name, run, wait_for


def _ids(spark: SparkSession, table: str) -> list[int]:
    spark.sql(f"REFRESH TABLE {table}")  # Spark caches a file table's listing
    return sorted(int(row[0]) for row in spark.sql(f"SELECT id FROM {table}").collect())


def test_streaming_ctas_keeps_writing_until_stopped_and_resumes(
    spark: SparkSession, stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    rows = 60
    src, copy = name("src"), name("copy")
    run(
        stream_service,
        session,
        f"CREATE TABLE {src} (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
        f"'sequence', 'fields.id.start' = '0', 'fields.id.end' = '{rows - 1}', "
        "'rows-per-second' = '10')",
    )
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    [(job_id,)] = run(stream_service, session, f"CREATE TABLE {copy} AS SELECT id FROM {src}")
    try:
        # The table exists from the job's start; rows arrive per micro-batch.
        assert spark.catalog.tableExists(copy)
        assert wait_for(lambda: len(_ids(spark, copy)) >= 10, 60)
        jobs = {r[0]: r for r in run(stream_service, session, "SHOW JOBS")}
        assert jobs[job_id][2] == "RUNNING"
        [(savepoint,)] = run(stream_service, session, f"STOP JOB '{job_id}' WITH SAVEPOINT")
        assert job_status(stream_service, session, job_id) == "FINISHED"
        before = _ids(spark, copy)
        assert before == list(range(len(before))) and len(before) < rows
        # A stopped streaming CTAS keeps its table: the job did not fail.
        assert spark.catalog.tableExists(copy)
        run(stream_service, session, f"SET 'execution.savepoint.path' = '{savepoint}'")
        [(resumed,)] = run(stream_service, session, f"INSERT INTO {copy} SELECT id FROM {src}")
        assert wait_for(lambda: job_status(stream_service, session, resumed) == "FINISHED", 90)
        assert _ids(spark, copy) == list(range(rows))
    finally:
        run(stream_service, session, "RESET 'execution.savepoint.path'")
        run(stream_service, session, "SET 'execution.runtime-mode' = 'batch'")
        run(stream_service, session, f"DROP TABLE IF EXISTS {copy}")
        run(stream_service, session, f"DROP TABLE IF EXISTS {src}")


def test_streaming_replace_swaps_the_table_as_the_job_starts(
    spark: SparkSession,
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
) -> None:
    """A streaming REPLACE cannot publish at an end: the old table goes when the new
    job runs, which then keeps writing the new one. One that cannot start keeps the
    old table and its files."""
    src, target = name("src"), name("target")
    out = tmp_path / "out"
    options = f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'json'"
    run(
        stream_service,
        session,
        f"CREATE TABLE {src} (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
        "'sequence', 'fields.id.start' = '100', 'fields.id.end' = '119', "
        "'rows-per-second' = '10')",
    )
    run(stream_service, session, f"CREATE TABLE {target} WITH ({options}) AS SELECT 1 AS id")
    old_files = sorted(p.name for p in out.iterdir())
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    try:
        # Sorting a stream is refused by Spark when the query starts.
        message = error_text(
            stream_service,
            session,
            f"REPLACE TABLE {target} WITH ({options}) AS SELECT id FROM {src} ORDER BY id",
        )
        assert "Sorting is not supported" in message
        assert sorted(p.name for p in out.iterdir()) == old_files
        assert _ids(spark, target) == [1]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
        [(job_id,)] = run(
            stream_service,
            session,
            f"REPLACE TABLE {target} WITH ({options}) AS SELECT id FROM {src}",
        )
        assert wait_for(lambda: job_status(stream_service, session, job_id) == "FINISHED", 90)
        assert _ids(spark, target) == list(range(100, 120))
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
        assert not [t for t in spark.catalog.listTables() if "sparkgate" in t.name]
    finally:
        run(stream_service, session, "SET 'execution.runtime-mode' = 'batch'")
        run(stream_service, session, f"DROP TABLE IF EXISTS {target}")
        run(stream_service, session, f"DROP TABLE IF EXISTS {src}")
