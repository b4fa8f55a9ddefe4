"""CREATE TABLE AS in streaming mode: the table is created as the job starts, a
long-running job keeps writing it, it stops with a savepoint like any INSERT
job and resumes from it exactly once."""

from __future__ import annotations

from pyspark.sql import SparkSession

from sparkgate.api.handles import SessionHandle
from sparkgate.service.gateway import SparkGatewayService

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
