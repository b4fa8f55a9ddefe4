"""The job store: one JSON record per job under <data-dir>/jobs/, written atomically,
read back after a restart with unended jobs marked as such; the job store's
expiration and capacity apply to it as to the jobs in memory."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from sparkgate.api.jobs import JobInfo, JobStatus
from sparkgate.service.job.manager import JobManager
from sparkgate.service.job.store import RESTART_CAUSE, JobStore, StoredJob


def info(job_id: str, status: JobStatus, *, ended: float | None = None, **kw: object) -> JobInfo:
    start = kw.pop("start_time", time.time() - 10)
    return JobInfo(
        job_id=job_id,
        name=f"job {job_id}",
        status=status,
        statement=f"INSERT INTO t SELECT {job_id!r}",
        streaming=bool(kw.pop("streaming", False)),
        start_time=float(start),  # type: ignore[arg-type]
        end_time=ended,
        **kw,  # type: ignore[arg-type]
    )


def test_a_record_round_trips_with_its_definition(tmp_path: Path) -> None:
    store = JobStore(tmp_path / "jobs")
    job = info(
        "a1",
        JobStatus.FINISHED,
        ended=time.time(),
        streaming=True,
        checkpoint="/cp/a1",
        savepoint="/sp/x",
        restored_from="/sp/old",
        cause=None,
        options={"execution.runtime-mode": "streaming", "pipeline.name": "copy"},
    )
    store.save(StoredJob(job, bounded_rows=100))
    [loaded] = store.load()
    assert loaded.info == job
    assert loaded.bounded_rows == 100
    # One small file per job, nothing left over from the atomic write.
    assert [p.name for p in (tmp_path / "jobs").iterdir()] == ["a1.json"]


def test_a_rewrite_replaces_the_record(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    store.save(StoredJob(info("b", JobStatus.RUNNING)))
    store.save(StoredJob(info("b", JobStatus.CANCELED, ended=time.time())))
    [loaded] = store.load()
    assert loaded.info.status is JobStatus.CANCELED


@pytest.mark.parametrize("status", [JobStatus.CREATED, JobStatus.RUNNING, JobStatus.CANCELLING])
def test_a_job_unended_at_restart_is_listed_failed(tmp_path: Path, status: JobStatus) -> None:
    store = JobStore(tmp_path)
    store.save(StoredJob(info("c", status, streaming=True, checkpoint="/cp/c")))
    [loaded] = store.load()
    assert loaded.info.status is JobStatus.FAILED
    assert loaded.info.cause == RESTART_CAUSE
    assert loaded.info.end_time is not None
    assert loaded.info.checkpoint == "/cp/c"  # the definition stays for a later resume
    # ... and the store says so from now on.
    assert json.loads((tmp_path / "c.json").read_text())["status"] == "FAILED"


def test_a_streaming_job_that_can_be_resumed_stays_running(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    resume = {"replan": {"texts": ["INSERT INTO t SELECT 1"]}, "session": {"handle": "h"}}
    store.save(StoredJob(info("r", JobStatus.RUNNING, streaming=True), resume=resume))
    store.save(StoredJob(info("s", JobStatus.CANCELLING, streaming=True), resume=resume))
    store.save(StoredJob(info("b", JobStatus.RUNNING), resume=resume))  # batch: not resumed
    loaded = {job.info.job_id: job for job in store.load()}
    assert loaded["r"].info.status is JobStatus.RUNNING and loaded["r"].resumable
    assert loaded["r"].resume == resume
    # Stopped by a user when the process ended: the stop stands.
    assert loaded["s"].info.status is JobStatus.CANCELED and not loaded["s"].resumable
    assert loaded["b"].info.status is JobStatus.FAILED
    assert loaded["b"].info.cause == RESTART_CAUSE
    assert json.loads((tmp_path / "s.json").read_text())["status"] == "CANCELED"


def test_unreadable_records_are_skipped(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    store.save(StoredJob(info("good", JobStatus.FINISHED, ended=time.time())))
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "partial.json").write_text('{"job_id": "x"}')
    assert [j.info.job_id for j in store.load()] == ["good"]


def test_delete_and_a_missing_directory(tmp_path: Path) -> None:
    store = JobStore(tmp_path / "none")
    assert store.load() == []
    store.save(StoredJob(info("d", JobStatus.FINISHED, ended=time.time())))
    store.delete("d")
    store.delete("d")  # twice is fine
    assert store.load() == []


def test_job_ids_cannot_leave_the_directory(tmp_path: Path) -> None:
    store = JobStore(tmp_path / "jobs")
    store.save(StoredJob(info("../evil", JobStatus.FINISHED, ended=time.time())))
    # The id is quoted into a file name inside the directory, and read back as given.
    assert [p.parent for p in tmp_path.rglob("*.json")] == [tmp_path / "jobs"]
    assert [j.info.job_id for j in store.load()] == ["../evil"]


def test_a_started_manager_lists_stored_jobs_within_expiration_and_capacity(
    tmp_path: Path,
) -> None:
    store = JobStore(tmp_path / "jobs")
    now = time.time()
    for n in range(4):  # ended 40, 30, 20, 10 s ago
        ended = now - 40 + n * 10
        store.save(StoredJob(info(f"e{n}", JobStatus.FINISHED, start_time=now - 50, ended=ended)))
    store.save(StoredJob(info("old", JobStatus.FINISHED, start_time=now - 900, ended=now - 800)))
    store.save(StoredJob(info("live", JobStatus.RUNNING, start_time=now - 60)))
    manager = JobManager(tmp_path, max_ended=3, ended_ttl_s=600)
    assert manager.jobs() == []  # nothing is read before start
    manager.start()
    try:
        listed = {j.id: j for j in manager.jobs()}
        # "old" is past the expiration time, e0 beyond the capacity (the oldest goes first);
        # "live" ended at the restart, so it is the newest ended job.
        assert set(listed) == {"e2", "e3", "live"}
        assert listed["live"].status is JobStatus.FAILED
        assert listed["live"].cause == RESTART_CAUSE
        assert listed["live"].done.is_set()
        # Applied to the store too: forgotten jobs' records are gone.
        assert sorted(p.stem for p in (tmp_path / "jobs").glob("*.json")) == ["e2", "e3", "live"]
    finally:
        manager.stop()
        manager.stop()  # idempotent
