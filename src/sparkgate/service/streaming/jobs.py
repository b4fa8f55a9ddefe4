"""The gateway-wide registry of jobs: INSERTs that run on after their statement.

A job is either a batch job (Spark writes under the job's own job tag, so
STOP JOB cancels exactly its Spark jobs; on a thread of its own, or on the
statement's thread when ``table.dml-sync`` is true) or a streaming job
(one StreamingQuery per INSERT, each checkpointing under
``<data-dir>/checkpoints/<job id>/<n>``). Jobs belong to the gateway, not to
a session: SHOW JOBS, DESCRIBE JOB and STOP JOB work from any session and a
job outlives the session that submitted it.

A savepoint is a copy of a stopped job's checkpoints; a job started with
``execution.savepoint.path`` copies it into its own fresh checkpoint
directory, so Spark resumes from the last committed micro-batch (the file
sink's commit log keeps the output exactly once) and the savepoint stays
reusable.
"""

from __future__ import annotations

import contextlib
import enum
import json
import logging
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkgate.api.errors import ExecutionError
from sparkgate.service.spark.jobs import to_execution_error

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql.streaming.query import StreamingQuery

__all__ = ["Job", "JobRegistry", "JobStatus", "StreamStarter", "query_exhausted"]

log = logging.getLogger(__name__)

_MONITOR_INTERVAL_S = 0.25
_GRACE_S = 5.0
_COMMIT_POLL_S = 0.01

# Starts one INSERT's StreamingQuery with the given checkpoint directory.
StreamStarter = Callable[[str], "StreamingQuery"]


class JobStatus(enum.Enum):
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    CANCELED = "CANCELED"
    FAILED = "FAILED"


@dataclass
class Job:
    id: str
    name: str
    statement: str
    streaming: bool
    start_time: float = field(default_factory=time.time)
    end_time: float | None = None
    status: JobStatus = JobStatus.RUNNING
    cause: str | None = None
    checkpoint: str | None = None
    savepoint: str | None = None
    restored_from: str | None = None
    # A bounded datagen source's row count: the job finishes once it is read.
    bounded_rows: int | None = None
    queries: list[StreamingQuery] = field(default_factory=list)
    # Set once every query has started: the monitor leaves the job alone before.
    started: bool = False
    # Set by STOP JOB: the monitor must not take the queries' end for a finish.
    stopping: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def tag(self) -> str:
        return f"sparkgate-job-{self.id}"

    def describe(self) -> dict[str, str | None]:
        return {
            "job id": self.id,
            "job name": self.name,
            "status": self.status.value,
            "start time": _iso(self.start_time),
            "end time": None if self.end_time is None else _iso(self.end_time),
            "checkpoint": self.checkpoint,
            "savepoint": self.savepoint,
            "restored from": self.restored_from,
            "cause": self.cause,
            "statement": self.statement,
        }


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ts)) + f".{int(ts * 1000) % 1000:03d}"


def query_exhausted(query: StreamingQuery, rows: int) -> bool:
    """Whether every rate source of ``query`` has produced ``rows`` values."""
    progress = query.lastProgress
    if not progress:
        return False
    offsets = []
    for source in progress.get("sources", ()):
        if not str(source.get("description", "")).startswith("RatePerMicroBatchStream"):
            continue
        try:
            offsets.append(int(json.loads(source["endOffset"])["offset"]))
        except (TypeError, ValueError, KeyError):
            return False
    return bool(offsets) and min(offsets) >= rows


def _batch_id(query: StreamingQuery) -> int:
    """The id of the query's last completed micro-batch (-1 before the first)."""
    progress = query.lastProgress
    return int(progress["batchId"]) if progress else -1


def _copy_dir(sc: SparkContext, source: str, target: str) -> None:
    """Copy a checkpoint tree with Hadoop's FileSystem, so any Spark file system works."""
    jvm = sc._jvm
    assert jvm is not None
    conf = sc._jsc.hadoopConfiguration()
    src = jvm.org.apache.hadoop.fs.Path(source)
    dst = jvm.org.apache.hadoop.fs.Path(target)
    src_fs = src.getFileSystem(conf)
    if not src_fs.exists(src):
        raise ExecutionError(
            f"Savepoint {source} does not exist",
            causes=(f"FileNotFoundException: savepoint {source} does not exist",),
        )
    if not jvm.org.apache.hadoop.fs.FileUtil.copy(
        src_fs, src, dst.getFileSystem(conf), dst, False, conf
    ):
        raise ExecutionError(f"Could not copy {source} to {target}")


class JobRegistry:
    """Every job of the gateway; a monitor thread notices streams that end."""

    def __init__(
        self, data_dir: Path, *, max_ended: int = 1000, ended_ttl_s: float = 3600.0
    ) -> None:
        self.data_dir = data_dir.expanduser()
        # Ended jobs stay listed for a while (Flink's job store), then make room.
        self._max_ended = max_ended
        self._ended_ttl_s = ended_ttl_s
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None

    # -- submitting ------------------------------------------------------------
    def _new(self, name: str | None, statement: str, streaming: bool) -> Job:
        job_id = uuid.uuid4().hex
        job = Job(job_id, name or _default_name(statement), statement, streaming)
        with self._lock:
            self._evict()
            self._jobs[job_id] = job
        return job

    def _evict(self) -> None:
        """Forget ended jobs past their time or beyond capacity (lock held)."""
        ended = sorted(
            (j for j in self._jobs.values() if j.end_time is not None),
            key=lambda j: j.end_time or 0.0,
        )
        horizon = time.time() - self._ended_ttl_s
        excess = len(ended) - self._max_ended
        for index, job in enumerate(ended):
            if index < excess or (job.end_time or 0.0) < horizon:
                del self._jobs[job.id]

    def _run_tagged(self, sc: SparkContext, job: Job, action: Callable[[], None]) -> None:
        sc.addJobTag(job.tag)
        try:
            action()
        finally:
            sc.removeJobTag(job.tag)
        self._end(job, JobStatus.FINISHED)

    def run_batch(
        self,
        sc: SparkContext,
        statement: str,
        name: str | None,
        action: Callable[[], None],
        *,
        cancelled: Callable[[], bool],
    ) -> Job:
        """Run ``action`` on the calling thread as a listed job (synchronous DML).

        Its errors propagate to the caller; ``cancelled`` tells a cancelled
        statement from a failed one.
        """
        job = self._new(name, statement, streaming=False)
        try:
            self._run_tagged(sc, job, action)
        except BaseException as exc:
            if cancelled():
                self._end(job, JobStatus.CANCELED)
            else:
                self._fail(job, exc)
            raise
        return job

    def submit_batch(
        self,
        sc: SparkContext,
        statement: str,
        name: str | None,
        action: Callable[[], None],
    ) -> Job:
        """Run ``action`` on its own thread, tagged with the job's tag."""
        job = self._new(name, statement, streaming=False)

        def run() -> None:
            sc.setJobDescription(f"{job.name} ({job.id})")
            try:
                self._run_tagged(sc, job, action)
            except BaseException as exc:
                self._fail(job, exc)

        threading.Thread(target=run, name=f"sparkgate-job-{job.id[:8]}", daemon=True).start()
        log.info("Submitted batch job %s (%s)", job.id, job.name)
        return job

    def submit_stream(
        self,
        sc: SparkContext,
        statement: str,
        name: str | None,
        starters: Sequence[StreamStarter],
        *,
        savepoint: str | None = None,
        bounded_rows: int | None = None,
    ) -> Job:
        """Start one StreamingQuery per starter, as one job.

        The queries are started without the calling operation's job tags, so
        closing or cancelling the submitting operation or session leaves them
        running; they carry the job's tag instead.
        """
        job = self._new(name, statement, streaming=True)
        job.bounded_rows = bounded_rows
        job.checkpoint = str(self.data_dir / "checkpoints" / job.id)
        try:
            if savepoint:
                _copy_dir(sc, savepoint, job.checkpoint)
                job.restored_from = savepoint
            saved_tags = sorted(sc.getJobTags())
            for tag in saved_tags:
                sc.removeJobTag(tag)
            sc.addJobTag(job.tag)
            try:
                for index, start in enumerate(starters):
                    query = start(f"{job.checkpoint}/{index}")
                    job.queries.append(query)
            finally:
                sc.removeJobTag(job.tag)
                for tag in saved_tags:
                    sc.addJobTag(tag)
        except BaseException as exc:
            self._stop_queries(job)
            with self._lock:
                self._jobs.pop(job.id, None)
            raise to_execution_error(exc) from exc
        job.started = True
        self._ensure_monitor()
        log.info(
            "Started streaming job %s (%s), checkpoints in %s", job.id, job.name, job.checkpoint
        )
        return job

    # -- looking up ------------------------------------------------------------
    def get(self, job_id: str) -> Job:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise ExecutionError(
                f"Could not find job '{job_id}'",
                causes=(f"JobNotFoundException: could not find job '{job_id}'",),
            )
        return job

    def jobs(self) -> list[Job]:
        with self._lock:
            return sorted(self._jobs.values(), key=lambda j: j.start_time)

    # -- stopping --------------------------------------------------------------
    def stop(
        self, sc: SparkContext, job_id: str, *, savepoint: bool = False, drain: bool = False
    ) -> str | None:
        """Stop a running job; with ``savepoint``, return where its savepoint is.

        As in Flink, a job stopped with a savepoint ends FINISHED (Flink's
        stop-with-savepoint); a plain stop is a cancel and ends CANCELED, as
        does a stop whose savepoint could not be written.
        """
        job = self.get(job_id)
        if savepoint and not job.streaming:
            raise ExecutionError(
                "Only streaming jobs take savepoints",
                causes=("IllegalStateException: a batch job has no checkpoints",),
            )
        with self._lock:
            if job.status is not JobStatus.RUNNING or job.stopping:
                status = "STOPPING" if job.status is JobStatus.RUNNING else job.status.value
                raise ExecutionError(
                    f"Job {job_id} is not running (status {status})",
                    causes=(f"IllegalStateException: job {job_id} is {status}",),
                )
            job.stopping = True
        if job.streaming:
            # Let the micro-batch in flight commit (drain waits longer for it).
            self._quiesce(job, _GRACE_S * (4 if drain else 1))
            self._stop_queries(job)
        else:
            sc.cancelJobsWithTag(job.tag)
        if not savepoint:
            self._end(job, JobStatus.CANCELED)
            return None
        assert job.checkpoint is not None
        target = self.data_dir / "savepoints" / f"savepoint-{job.id[:6]}-{uuid.uuid4().hex[:12]}"
        try:
            _copy_dir(sc, job.checkpoint, str(target))
        except BaseException:
            self._end(job, JobStatus.CANCELED)
            raise
        job.savepoint = str(target)
        log.info("Job %s stopped with savepoint %s", job.id, target)
        self._end(job, JobStatus.FINISHED)
        return job.savepoint

    def _quiesce(self, job: Job, timeout: float) -> None:
        """Wait until the micro-batch running now has committed (or ``timeout``).

        Only that one: micro-batches may follow each other without a pause, so
        waiting for the trigger to go idle could last until the timeout. The
        stop should follow the commit closely: the next micro-batch then
        plans, and interrupting a batch's write is noisier in Spark's log.
        """
        deadline = time.monotonic() + timeout
        for query in job.queries:
            try:
                if not query.isActive or not query.status.get("isTriggerActive"):
                    continue
                running = _batch_id(query) + 1
            except Exception:
                continue
            while time.monotonic() < deadline:
                try:
                    if not query.isActive or _batch_id(query) >= running:
                        break
                    if not query.status.get("isTriggerActive"):
                        break
                except Exception:
                    break
                time.sleep(_COMMIT_POLL_S)

    def _stop_queries(self, job: Job) -> None:
        for query in job.queries:
            with contextlib.suppress(Exception):
                query.stop()

    def _end(self, job: Job, status: JobStatus) -> None:
        with self._lock:
            if job.status is not JobStatus.RUNNING:
                return
            job.status = status
            job.end_time = time.time()
        job.done.set()
        log.info("Job %s %s", job.id, status.value)

    def _fail(self, job: Job, exc: BaseException) -> None:
        error = to_execution_error(exc)
        with self._lock:
            if job.status is not JobStatus.RUNNING or job.stopping:
                return  # a cancelled job fails as it stops: the cancel is the story
            job.cause = error.causes[-1] if error.causes else error.message
        log.error("Job %s failed: %s", job.id, job.cause)
        self._stop_queries(job)
        self._end(job, JobStatus.FAILED)

    # -- watching --------------------------------------------------------------
    def _ensure_monitor(self) -> None:
        with self._lock:
            if self._monitor is not None and self._monitor.is_alive():
                return
            self._stop.clear()
            self._monitor = threading.Thread(
                target=self._watch, name="sparkgate-job-monitor", daemon=True
            )
            self._monitor.start()

    def _watch(self) -> None:
        while not self._stop.wait(_MONITOR_INTERVAL_S):
            for job in self.jobs():
                if job.status is JobStatus.RUNNING and job.streaming:
                    self._check(job)

    def _check(self, job: Job) -> None:
        if not job.started or job.stopping:
            return
        try:
            for query in job.queries:
                error: Any = query.exception()
                if error is not None:
                    self._fail(job, error)
                    return
            if job.bounded_rows is not None and all(
                query_exhausted(q, job.bounded_rows) for q in job.queries
            ):
                self._stop_queries(job)
                self._end(job, JobStatus.FINISHED)
            elif not any(q.isActive for q in job.queries):
                self._end(job, JobStatus.FINISHED)  # availableNow sources ran dry
        except Exception:
            log.debug("Could not check job %s", job.id, exc_info=True)

    def close(self) -> None:
        """Stop watching and stop the running streaming queries (the gateway stops)."""
        self._stop.set()
        for job in self.jobs():
            if job.status is JobStatus.RUNNING and job.streaming:
                self._stop_queries(job)
                self._end(job, JobStatus.CANCELED)

    def remove_checkpoints(self, job: Job) -> None:
        if job.checkpoint and Path(job.checkpoint).exists():
            shutil.rmtree(job.checkpoint, ignore_errors=True)


def _default_name(statement: str) -> str:
    text = " ".join(statement.split())
    return text if len(text) <= 80 else text[:77] + "..."
