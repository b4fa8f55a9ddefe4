"""The job store: SHOW JOBS history and job definitions survive a gateway restart.

A gateway service stopped and a new one started on the same data directory
lists the old jobs again; a job that was still running when its gateway
went away is listed FAILED, saying so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import ExecutionError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.jobs import JobInfo, JobStatus
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.job.store import RESTART_CAUSE

from .conftest import run, service_on, unique_name


def open_session(service: SparkGatewayService) -> SessionHandle:
    return service.open_session(SessionEnvironment(session_name="store"))


def streaming_job(service: SparkGatewayService, session: SessionHandle) -> str:
    src, sink = unique_name("src"), unique_name("hole")
    run(service, session, f"CREATE TABLE {src} (a INT) WITH ('connector' = 'datagen')")
    run(service, session, f"CREATE TABLE {sink} (a INT) WITH ('connector' = 'blackhole')")
    run(service, session, "SET 'execution.runtime-mode' = 'streaming'")
    run(service, session, "SET 'pipeline.name' = 'endless'")
    [(job_id,)] = run(service, session, f"INSERT INTO {sink} SELECT a FROM {src}")
    return str(job_id)


def without_end(job: JobInfo) -> tuple[object, ...]:
    return (job.job_id, job.name, job.statement, job.streaming, job.start_time, job.checkpoint)


def test_a_restarted_gateway_lists_the_jobs_of_the_last_one(
    spark: SparkSession, tmp_path: Path
) -> None:
    target = unique_name("t")
    with service_on(spark, tmp_path) as first:
        session = open_session(first)
        run(first, session, f"CREATE TABLE {target} (id BIGINT) USING parquet")
        run(first, session, "SET 'pipeline.name' = 'fill'")
        [(finished,)] = run(first, session, f"INSERT INTO {target} SELECT id FROM range(3)")
        run(first, session, "SET 'pipeline.name' = 'broken'")
        with pytest.raises(ExecutionError, match="boom"):
            run(first, session, f"INSERT INTO {target} SELECT raise_error('boom') FROM range(1)")
        stream = streaming_job(first, session)
        before = {j.job_id: j for j in first.list_jobs()}
        assert before[stream].status is JobStatus.RUNNING
    # The stopping gateway stopped its streaming job: CANCELED, as stored.
    with service_on(spark, tmp_path) as second:
        after = {j.job_id: j for j in second.list_jobs()}
        assert set(after) == set(before)
        for job_id, job in before.items():
            assert without_end(after[job_id]) == without_end(job)
        assert after[finished].status is JobStatus.FINISHED
        assert after[finished].end_time == before[finished].end_time
        [failed] = [j for j in after.values() if j.name == "broken"]
        assert failed.status is JobStatus.FAILED and "boom" in str(failed.cause)
        assert after[stream].status is JobStatus.CANCELED
        assert after[stream].checkpoint == str(tmp_path / "checkpoints" / stream)
        # The SQL statements see the same, from a session of the new gateway.
        session = open_session(second)
        shown = {r[0]: r[1:3] for r in run(second, session, "SHOW JOBS")}
        assert shown[finished] == ("fill", "FINISHED")
        assert shown[stream] == ("endless", "CANCELED")
        [described] = run(second, session, f"DESCRIBE JOB '{finished}'")
        assert described[:3] == (finished, "fill", "FINISHED")
        with pytest.raises(ExecutionError, match="not running"):
            run(second, session, f"STOP JOB '{stream}'")


def test_a_job_running_when_its_gateway_went_away_is_listed_failed(
    spark: SparkSession, tmp_path: Path
) -> None:
    with service_on(spark, tmp_path) as crashed:
        stream = streaming_job(crashed, open_session(crashed))
        # A gateway that starts on the data directory while the job is stored
        # RUNNING (as after a crash: nobody ended it) knows it is not running it.
        with service_on(spark, tmp_path) as restarted:
            job = restarted.describe_job(stream)
            assert job.status is JobStatus.FAILED
            assert job.cause == RESTART_CAUSE
            assert job.end_time is not None
            assert job.statement.startswith("INSERT INTO hole_")
            session = open_session(restarted)
            shown = {r[0]: r[1:3] for r in run(restarted, session, "SHOW JOBS")}
            assert shown[stream] == ("endless", "FAILED")
            [described] = run(restarted, session, f"DESCRIBE JOB '{stream}'")
            assert described[-2] == RESTART_CAUSE
