"""The job store: SHOW JOBS history and job definitions survive a gateway restart.

A gateway service stopped and a new one started on the same data directory
lists the old jobs again. A streaming job the stop found running is stopped
with a savepoint and started again by the next gateway, from its
checkpoints, writing each row once; a batch job that was still running when
its gateway went away is listed FAILED, saying so.
"""

from __future__ import annotations

import time
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
    # The stopping gateway stopped its streaming job with a savepoint; the next one
    # runs it again (the same job, RUNNING).
    with service_on(spark, tmp_path) as second:
        after = {j.job_id: j for j in second.list_jobs()}
        assert set(after) == set(before)
        for job_id, job in before.items():
            assert without_end(after[job_id]) == without_end(job)
        assert after[finished].status is JobStatus.FINISHED
        assert after[finished].end_time == before[finished].end_time
        [failed] = [j for j in after.values() if j.name == "broken"]
        assert failed.status is JobStatus.FAILED and "boom" in str(failed.cause)
        assert after[stream].status is JobStatus.RUNNING
        assert after[stream].checkpoint == str(tmp_path / "checkpoints" / stream)
        assert after[stream].savepoint is not None
        assert Path(after[stream].savepoint, "0", "offsets").is_dir()
        # The SQL statements see the same, from a session of the new gateway.
        session = open_session(second)
        shown = {r[0]: r[1:3] for r in run(second, session, "SHOW JOBS")}
        assert shown[finished] == ("fill", "FINISHED")
        assert shown[stream] == ("endless", "RUNNING")
        [described] = run(second, session, f"DESCRIBE JOB '{finished}'")
        assert described[:3] == (finished, "fill", "FINISHED")
        run(second, session, f"STOP JOB '{stream}'")
        assert second.describe_job(stream).status is JobStatus.CANCELED
        with pytest.raises(ExecutionError, match="not running"):
            run(second, session, f"STOP JOB '{stream}'")


def test_a_batch_job_cut_off_by_the_end_of_its_gateway_is_listed_failed(
    spark: SparkSession, tmp_path: Path
) -> None:
    sleepy = {"sql-gateway.security.allowed-host-statements": "reflection"}
    with service_on(spark, tmp_path, **sleepy) as crashed:
        session = open_session(crashed)
        target = unique_name("slow")
        run(crashed, session, f"CREATE TABLE {target} (id BIGINT) USING parquet")
        run(crashed, session, "SET 'table.dml-sync' = 'false'")
        run(crashed, session, "SET 'pipeline.name' = 'slow'")
        [(job_id,)] = run(
            crashed,
            session,
            f"INSERT INTO {target} SELECT id FROM range(2) "
            "WHERE reflect('java.lang.Thread', 'sleep', 4000L) IS NULL",
        )
        # A gateway that starts on the data directory while the job is stored
        # RUNNING (as after a crash: nobody ended it) knows it is not running it.
        with service_on(spark, tmp_path) as restarted:
            job = restarted.describe_job(job_id)
            assert job.status is JobStatus.FAILED
            assert job.cause == RESTART_CAUSE and "gateway restarted" in job.cause
            assert job.end_time is not None
            assert job.statement.startswith(f"INSERT INTO {target}")
            session = open_session(restarted)
            shown = {r[0]: r[1:3] for r in run(restarted, session, "SHOW JOBS")}
            assert shown[job_id] == ("slow", "FAILED")
            [described] = run(restarted, session, f"DESCRIBE JOB '{job_id}'")
            assert described[-2] == RESTART_CAUSE
        # The first gateway's job ends as it would have, before that gateway stops.
        deadline = time.monotonic() + 60
        while not crashed.describe_job(job_id).status.is_terminal:
            assert time.monotonic() < deadline
            time.sleep(0.2)


def sequence_into_files(
    service: SparkGatewayService, session: SessionHandle, path: Path, rows: int
) -> tuple[str, str]:
    """A streaming job writing ids 1..rows (40 a second) into json files; its id and
    the files' table."""
    src, sink = unique_name("seq"), unique_name("files")
    run(
        service,
        session,
        f"CREATE TABLE {src} (id BIGINT) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
        f"'fields.id.end' = '{rows}', 'rows-per-second' = '40')",
    )
    run(
        service,
        session,
        f"CREATE TABLE {sink} (id BIGINT) WITH ('connector' = 'filesystem', "
        f"'path' = '{path}', 'format' = 'json')",
    )
    run(service, session, "SET 'execution.runtime-mode' = 'streaming'")
    run(service, session, "SET 'execution.checkpointing.interval' = '500 ms'")
    [(job_id,)] = run(service, session, f"INSERT INTO {sink} SELECT id FROM {src}")
    run(service, session, "SET 'execution.runtime-mode' = 'batch'")
    return str(job_id), sink


def written(service: SparkGatewayService, session: SessionHandle, sink: str) -> tuple[int, int]:
    [(rows, ids)] = run(service, session, f"SELECT count(*), count(DISTINCT id) FROM {sink}")
    return int(rows), int(ids)


def wait_for_rows(
    service: SparkGatewayService, session: SessionHandle, sink: str, at_least: int
) -> tuple[int, int]:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        counts = written(service, session, sink)
        if counts[0] >= at_least:
            return counts
        time.sleep(0.5)
    raise AssertionError(f"{sink} has {written(service, session, sink)} rows, not {at_least}")


def test_a_streaming_job_is_resumed_by_the_next_gateway_and_writes_each_row_once(
    spark: SparkSession, tmp_path: Path
) -> None:
    rows = 200
    data, files = tmp_path / "data", tmp_path / "files"
    with service_on(spark, data) as first:
        session = open_session(first)
        # Made in the session, so the job's session must be made again: a temporary
        # view over the connector table.
        job_id, sink = sequence_into_files(first, session, files, rows)
        before = wait_for_rows(first, session, sink, 20)
        assert before[0] == before[1]
    with service_on(spark, data) as second:
        job = second.describe_job(job_id)
        assert job.status is JobStatus.RUNNING and job.savepoint is not None
        session = open_session(second)
        # The tables are the catalog's: the new session reads them as they are.
        assert wait_for_rows(second, session, sink, rows) == (rows, rows)
        [(first_id, last_id)] = run(second, session, f"SELECT min(id), max(id) FROM {sink}")
        assert (first_id, last_id) == (1, rows)


def test_a_streaming_job_over_a_temporary_table_resumes_with_its_session_state(
    spark: SparkSession, tmp_path: Path
) -> None:
    rows = 400
    files = tmp_path / "files"
    database = unique_name("db")
    with service_on(spark, tmp_path / "data") as first:
        session = open_session(first)
        src = unique_name("tmpseq")
        run(first, session, f"CREATE DATABASE {database}")
        # Names in the job resolve in the session's database and temporary tables.
        run(first, session, f"USE {database}")
        run(
            first,
            session,
            f"CREATE TEMPORARY TABLE {src} (id BIGINT) WITH ('connector' = 'datagen', "
            "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
            f"'fields.id.end' = '{rows}', 'rows-per-second' = '40')",
        )
        run(
            first,
            session,
            "CREATE TABLE sink (id BIGINT) WITH ('connector' = 'filesystem', "
            f"'path' = '{files}', 'format' = 'json')",
        )
        run(first, session, "SET 'execution.runtime-mode' = 'streaming'")
        [(job_id,)] = run(first, session, f"INSERT INTO sink SELECT id FROM {src} WHERE id % 2 = 0")
        run(first, session, "SET 'execution.runtime-mode' = 'batch'")
        wait_for_rows(first, session, "sink", 5)
    with service_on(spark, tmp_path / "data") as second:
        session = open_session(second)
        assert second.describe_job(str(job_id)).status is JobStatus.RUNNING
        sink = f"{database}.sink"
        assert wait_for_rows(second, session, sink, rows // 2) == (rows // 2, rows // 2)
        # The new gateway's sessions do not see the old session's temporary objects.
        with pytest.raises(ExecutionError):
            run(second, session, f"SELECT * FROM {src}")


def test_checkpoints_and_savepoints_go_where_the_options_say(
    spark: SparkSession, tmp_path: Path
) -> None:
    options = {
        "execution.checkpointing.dir": f"file://{tmp_path / 'shared' / 'checkpoints'}/",
        "execution.checkpointing.savepoint-dir": str(tmp_path / "shared" / "savepoints"),
    }
    with service_on(spark, tmp_path / "data", **options) as service:
        session = open_session(service)
        job_id = streaming_job(service, session)
        checkpoint = service.describe_job(job_id).checkpoint
        assert checkpoint == f"file://{tmp_path / 'shared' / 'checkpoints'}/{job_id}"
        deadline = time.monotonic() + 60
        while not list((tmp_path / "shared" / "checkpoints" / job_id).rglob("commits/0")):
            assert time.monotonic() < deadline, "no checkpoint written"
            time.sleep(0.5)
        [(savepoint,)] = run(service, session, f"STOP JOB '{job_id}' WITH SAVEPOINT")
        assert str(savepoint).startswith(str(tmp_path / "shared" / "savepoints" / "savepoint-"))
        assert Path(str(savepoint)).is_dir()
    assert not (tmp_path / "data" / "checkpoints" / job_id).exists()
