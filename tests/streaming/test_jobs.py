"""Jobs: streaming and async INSERTs, SHOW/DESCRIBE/STOP JOB from any session,
savepoints that resume exactly once, failures, and statement sets."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import ConfigurationError, ExecutionError, UnsupportedStatementError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.jobs import JobStatus
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.job.manager import JobManager

from .conftest import job_status, name, run, sink_ids, wait_for


def ids_into_files(
    service: SparkGatewayService, session: SessionHandle, path: Path, first: int, last: int
) -> tuple[str, str]:
    """A datagen table of the ids ``first`` to ``last`` (10 a second), and a
    parquet filesystem table at ``path``: their names."""
    src, sink = name("src"), name("sink")
    run(
        service,
        session,
        f"CREATE TABLE {src} (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
        f"'sequence', 'fields.id.start' = '{first}', 'fields.id.end' = '{last}', "
        "'rows-per-second' = '10')",
    )
    run(
        service,
        session,
        f"CREATE TABLE {sink} (id BIGINT) WITH ('connector' = 'filesystem', "
        f"'path' = '{path}', 'format' = 'parquet')",
    )
    return src, sink


def test_stop_with_savepoint_and_resume_is_exactly_once(
    spark: SparkSession,
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
) -> None:
    rows = 100
    path = tmp_path / "sink"
    src, sink = ids_into_files(stream_service, session, path, 0, rows - 1)
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    run(stream_service, session, "SET 'pipeline.name' = 'copy-ids'")
    [(job_id,)] = run(stream_service, session, f"INSERT INTO {sink} SELECT id FROM {src}")
    # Jobs are the gateway's: another session sees and stops it.
    other = stream_service.open_session(SessionEnvironment())
    try:
        assert wait_for(lambda: len(sink_ids(spark, path)) >= 10, 60)
        jobs = {r[0]: r for r in run(stream_service, other, "SHOW JOBS")}
        assert jobs[job_id][1:3] == ("copy-ids", "RUNNING")
        [(savepoint,)] = run(stream_service, other, f"STOP JOB '{job_id}' WITH SAVEPOINT")
        # Flink reports a job stopped with a savepoint as FINISHED (a plain
        # STOP JOB, a cancel, leaves it CANCELED), in SHOW JOBS and DESCRIBE JOB.
        assert job_status(stream_service, other, job_id) == "FINISHED"
        [stopped] = run(stream_service, other, f"DESCRIBE JOB '{job_id}'")
        assert (stopped[2], stopped[6]) == ("FINISHED", savepoint)
        before = sink_ids(spark, path)
        assert before == list(range(len(before))) and len(before) < rows
        run(stream_service, session, f"SET 'execution.savepoint.path' = '{savepoint}'")
        [(resumed,)] = run(stream_service, session, f"INSERT INTO {sink} SELECT id FROM {src}")
        assert wait_for(lambda: job_status(stream_service, other, resumed) == "FINISHED", 90)
        assert sink_ids(spark, path) == list(range(rows))
        described = dict(
            zip(
                [
                    c.name
                    for c in stream_service.get_operation_result_schema(
                        session,
                        stream_service.execute_statement(session, f"DESCRIBE JOB '{resumed}'"),
                    ).columns
                ],
                run(stream_service, other, f"DESCRIBE JOB '{resumed}'")[0],
                strict=True,
            )
        )
        assert described["restored from"] == savepoint
        assert described["status"] == "FINISHED"
    finally:
        stream_service.close_session(other)


def test_a_streaming_job_outlives_its_session(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    src = name("src")
    run(stream_service, session, f"CREATE TABLE {src} (a INT) WITH ('connector' = 'datagen')")
    sink = name("hole")
    run(stream_service, session, f"CREATE TABLE {sink} (a INT) WITH ('connector' = 'blackhole')")
    submitter = stream_service.open_session(SessionEnvironment())
    run(stream_service, submitter, "SET 'execution.runtime-mode' = 'streaming'")
    [(job_id,)] = run(stream_service, submitter, f"INSERT INTO {sink} SELECT a FROM {src}")
    stream_service.close_session(submitter)
    assert job_status(stream_service, session, job_id) == "RUNNING"
    assert run(stream_service, session, f"STOP JOB '{job_id}'") == [("OK",)]
    assert job_status(stream_service, session, job_id) == "CANCELED"
    with pytest.raises(ExecutionError, match="not running"):
        run(stream_service, session, f"STOP JOB '{job_id}'")


@pytest.mark.parametrize("sink_kind", ["blackhole", "filesystem"])
def test_a_failing_job_shows_failed_with_its_cause(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path, sink_kind: str
) -> None:
    """A failing micro-batch fails the job, whatever the sink (a filesystem
    table's batch writer tells a failure from a stop's cut)."""
    src, sink = name("src"), name("hole")
    run(stream_service, session, f"CREATE TABLE {src} (a INT) WITH ('connector' = 'datagen')")
    options = "'connector' = 'blackhole'"
    if sink_kind == "filesystem":
        options = f"'connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'json'"
    run(stream_service, session, f"CREATE TABLE {sink} (a INT) WITH ({options})")
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    [(job_id,)] = run(
        stream_service,
        session,
        f"INSERT INTO {sink} SELECT CASE WHEN a IS NOT NULL THEN raise_error('boom') END "
        f"FROM {src}",
    )
    assert wait_for(lambda: job_status(stream_service, session, job_id) == "FAILED", 60)
    [info] = run(stream_service, session, f"DESCRIBE JOB '{job_id}'")
    assert "boom" in str(info[-2])
    assert run(stream_service, session, "SELECT 1") == [(1,)]


def test_async_batch_insert_returns_a_job_id_at_once(
    spark: SparkSession, stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    target = name("t")
    run(stream_service, session, f"CREATE TABLE {target} (id BIGINT) USING parquet")
    run(stream_service, session, "SET 'table.dml-sync' = 'false'")
    [(job_id,)] = run(stream_service, session, f"INSERT INTO {target} SELECT id FROM range(5)")
    assert wait_for(lambda: job_status(stream_service, session, job_id) == "FINISHED", 60)
    assert run(stream_service, session, f"SELECT count(*) FROM {target}") == [(5,)]


def test_synchronous_dml_is_listed_as_a_job(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    target = name("t")
    run(stream_service, session, f"CREATE TABLE {target} (id BIGINT) USING parquet")
    run(stream_service, session, "SET 'pipeline.name' = 'fill'")
    [(job_id,)] = run(stream_service, session, f"INSERT INTO {target} SELECT id FROM range(3)")
    # Synchronous: the rows are there when the statement returns, and the job is listed.
    assert run(stream_service, session, f"SELECT count(*) FROM {target}") == [(3,)]
    other = stream_service.open_session(SessionEnvironment())
    try:
        jobs = {r[0]: r for r in run(stream_service, other, "SHOW JOBS")}
        assert jobs[job_id][1:3] == ("fill", "FINISHED")
        with pytest.raises(ExecutionError, match="boom"):
            run(
                stream_service,
                session,
                f"INSERT INTO {target} SELECT raise_error('boom') FROM range(1)",
            )
        failed = [r for r in run(stream_service, other, "SHOW JOBS") if r[0] not in jobs]
        assert [r[1:3] for r in failed] == [("fill", "FAILED")]
        [info] = run(stream_service, other, f"DESCRIBE JOB '{failed[0][0]}'")
        assert "boom" in str(info[-2])
    finally:
        stream_service.close_session(other)


def test_ended_jobs_make_room_beyond_the_job_store_capacity(
    spark: SparkSession, tmp_path: Path
) -> None:
    manager = JobManager(tmp_path, max_ended=2)
    sc = spark.sparkContext
    ids = [
        manager.run_batch(sc, f"INSERT {i}", None, lambda: None, cancelled=lambda: False).id
        for i in range(4)
    ]
    gate = threading.Event()
    running = manager.submit_batch(sc, "INSERT slow", None, gate.wait)
    try:
        assert [j.id for j in manager.jobs()] == [*ids[-2:], running.id]
        assert manager.get(ids[-1]).status is JobStatus.FINISHED
        assert manager.get(running.id).status is JobStatus.RUNNING
    finally:
        gate.set()
    assert running.done.wait(10) and running.status is JobStatus.FINISHED


def test_unknown_job_is_a_clear_error(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    with pytest.raises(ExecutionError, match="Could not find job 'nope'"):
        run(stream_service, session, "DESCRIBE JOB 'nope'")


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("form", ["begin-end", "execute"])
def test_statement_sets_run_their_inserts_as_one_job(
    spark: SparkSession,
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
    mode: str,
    form: str,
) -> None:
    src, a, b = name("src"), name("a"), name("b")
    run(
        stream_service,
        session,
        f"CREATE TABLE {src} (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
        "'sequence', 'fields.id.start' = '1', 'fields.id.end' = '12', 'rows-per-second' = '20')",
    )
    for sink in (a, b):
        run(
            stream_service,
            session,
            f"CREATE TABLE {sink} (id BIGINT) WITH ('connector' = 'filesystem', "
            f"'path' = '{tmp_path / sink}', 'format' = 'parquet')",
        )
    run(stream_service, session, f"SET 'execution.runtime-mode' = '{mode}'")
    inserts = [
        f"INSERT INTO {a} SELECT id FROM {src} WHERE id % 2 = 0",
        f"INSERT INTO {b} SELECT id FROM {src} WHERE id % 2 = 1",
    ]
    if form == "begin-end":
        run(stream_service, session, "BEGIN STATEMENT SET")
        for statement in inserts:
            assert run(stream_service, session, statement) == [("OK",)]
        [(job_id,)] = run(stream_service, session, "END")
    else:
        body = "; ".join(inserts)
        [(job_id,)] = run(stream_service, session, f"EXECUTE STATEMENT SET BEGIN {body}; END")
    if mode == "streaming":
        assert wait_for(lambda: job_status(stream_service, session, job_id) == "FINISHED", 90)
    assert sink_ids(spark, tmp_path / a) == [2, 4, 6, 8, 10, 12]
    assert sink_ids(spark, tmp_path / b) == [1, 3, 5, 7, 9, 11]


def test_only_inserts_enter_a_statement_set(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    run(stream_service, session, "BEGIN STATEMENT SET")
    with pytest.raises(UnsupportedStatementError, match="Only INSERT statements"):
        run(stream_service, session, "SELECT 1")
    assert run(stream_service, session, "END") == [("OK",)]  # empty: no job, as Flink
    with pytest.raises(UnsupportedStatementError, match="END without BEGIN"):
        run(stream_service, session, "END")


def test_a_malformed_job_id_is_refused_as_it_is_set(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    """``$internal.pipeline.job-id`` takes Flink's job ids (32 hexadecimal digits);
    jobs.q shows a given id used, and an id in use refused."""
    with pytest.raises(ConfigurationError, match="a job id is 32 hexadecimal digits"):
        run(stream_service, session, "SET '$internal.pipeline.job-id' = 'job-1'")


@pytest.mark.parametrize("source", ["datagen", "values"])
def test_dml_sync_set_true_in_streaming_mode_waits_for_a_job_whose_sources_end(
    spark: SparkSession,
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
    source: str,
) -> None:
    path = tmp_path / "sink"
    src, sink = ids_into_files(stream_service, session, path, 1, 30)
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    query = f"SELECT id FROM {src}" if source == "datagen" else "VALUES (7), (8)"
    expected = list(range(1, 31)) if source == "datagen" else [7, 8]
    # Unset in streaming mode (Flink's default, false): the running job comes back.
    if source == "datagen":
        [(running,)] = run(stream_service, session, f"INSERT INTO {sink} {query}")
        assert job_status(stream_service, session, running) == "RUNNING"
        run(stream_service, session, f"STOP JOB '{running}'")
        shutil.rmtree(path, ignore_errors=True)
    run(stream_service, session, "SET 'table.dml-sync' = 'true'")
    [(job_id,)] = run(stream_service, session, f"INSERT INTO {sink} {query}")
    # Set true, as in Flink: the INSERT answers when its job has ended.
    assert job_status(stream_service, session, job_id) == "FINISHED"
    assert sink_ids(spark, path) == expected


def test_streaming_jobs_into_one_filesystem_table_each_land_every_row(
    spark: SparkSession,
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
) -> None:
    """One job after another into the same files, and a batch INSERT between them:
    every row lands and every reader sees it. (Spark's file sink keeps one query's
    log in the table's directory: a second job's first batches were skipped as
    committed, and a reader of the log missed a batch INSERT's files.)"""
    path = tmp_path / "shared"
    src, sink = ids_into_files(stream_service, session, path, 1, 5)
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    run(stream_service, session, "SET 'table.dml-sync' = 'true'")
    run(stream_service, session, f"INSERT INTO {sink} SELECT id FROM {src}")
    run(stream_service, session, f"INSERT INTO {sink} SELECT id + 10 FROM {src}")
    run(stream_service, session, "SET 'execution.runtime-mode' = 'batch'")
    run(stream_service, session, f"INSERT INTO {sink} VALUES (100)")
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    run(stream_service, session, f"INSERT INTO {sink} SELECT id + 20 FROM {src}")
    expected = [*range(1, 6), *range(11, 16), *range(21, 26), 100]
    assert sink_ids(spark, path) == expected
    run(stream_service, session, "SET 'execution.runtime-mode' = 'batch'")
    assert sorted(r[0] for r in run(stream_service, session, f"SELECT id FROM {sink}")) == expected
    left = [p.name for p in path.iterdir() if p.name.startswith(("_staging", "_spark"))]
    assert left == []  # no file sink's log, no batch's staging left behind


def test_a_batch_written_again_replaces_its_own_files(spark: SparkSession, tmp_path: Path) -> None:
    """How a micro-batch run again after a restart lands: its files replace the
    ones it wrote before, other batches' stay."""
    from sparkgate.service.spark.files import Files

    files, target = Files(spark), tmp_path / "t"
    for batch, ids in ((0, [1, 2]), (1, [3]), (1, [3])):
        staging = str(target / f"_staging-q-{batch}")
        spark.range(ids[0], ids[-1] + 1).write.mode("overwrite").parquet(staging)
        assert files.publish(staging, str(target), f"part-q-{batch:08d}-") >= 1
    assert sink_ids(spark, target) == [1, 2, 3]
    assert not [p for p in target.iterdir() if p.name.startswith("_staging")]


def test_a_micro_batch_cut_by_a_stop_runs_again_on_resume(
    spark: SparkSession,
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """STOP JOB WITH SAVEPOINT while a micro-batch is being written into files:
    the batch's Spark jobs are cancelled, nothing is raised back into Spark's
    stream thread, and resuming from the savepoint writes that batch again,
    every row exactly once."""
    from sparkgate.service.job import manager

    monkeypatch.setattr(manager, "_GRACE_S", 0.2)  # stop without waiting the batch out
    caplog.set_level("INFO", logger="sparkgate.service.streaming.connectors")
    path = tmp_path / "cut"
    src, sink = ids_into_files(stream_service, session, path, 0, 19)
    # The row 12 computes for seconds in its task (a nested fold the optimizer
    # cannot see through): its micro-batch (rows 10 to 14) is in flight for long.
    slow = (
        "CASE WHEN id = 12 THEN aggregate(sequence(1, 100000 + id % 2), 0L, (a, x) -> a + "
        "aggregate(sequence(1, 2000 + x % 2), 0L, (b, y) -> b + y)) ELSE 0 END"
    )
    insert = f"INSERT INTO {sink} SELECT id FROM {src} WHERE {slow} >= 0"
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    [(job_id,)] = run(stream_service, session, insert)
    assert wait_for(lambda: len(sink_ids(spark, path)) >= 10, 60)
    # The micro-batch of the slow row is running.
    assert wait_for(lambda: bool(spark.sparkContext.statusTracker().getActiveStageIds()), 60)
    [(savepoint,)] = run(stream_service, session, f"STOP JOB '{job_id}' WITH SAVEPOINT")
    assert any("cut by a stop" in r.getMessage() for r in caplog.records), caplog.text
    assert sink_ids(spark, path) == list(range(10))
    run(stream_service, session, f"SET 'execution.savepoint.path' = '{savepoint}'")
    [(resumed,)] = run(stream_service, session, insert)
    run(stream_service, session, "RESET 'execution.savepoint.path'")
    assert wait_for(lambda: job_status(stream_service, session, resumed) == "FINISHED", 120)
    assert sink_ids(spark, path) == list(range(20))
    assert not [p for p in path.iterdir() if p.name.startswith("_")]
