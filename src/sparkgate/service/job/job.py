"""One job and its running parts, and the Spark helpers jobs need.

A job is either a batch job (Spark writes under the job's own job tag, so
STOP JOB cancels exactly its Spark jobs; on a thread of its own, or on the
statement's thread when ``table.dml-sync`` is true) or a streaming job
(one StreamingQuery per INSERT, each checkpointing under
``<data-dir>/checkpoints/<job id>/<n>``).

A savepoint is a copy of a stopped job's checkpoints; a job started with
``execution.savepoint.path`` copies it into its own fresh checkpoint
directory, so Spark resumes from the last committed micro-batch (the file
sink's commit log keeps the output exactly once) and the savepoint stays
reusable.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sparkgate.api.errors import ExecutionError
from sparkgate.api.jobs import JobInfo, JobStatus, JobStatusHook

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql.streaming.query import StreamingQuery

__all__ = [
    "Job",
    "StreamStarter",
    "batch_id",
    "copy_dir",
    "default_name",
    "iso_time",
    "query_caught_up",
    "query_exhausted",
]

# Starts one INSERT's StreamingQuery with the given checkpoint directory.
StreamStarter = Callable[[str], "StreamingQuery"]


@dataclass
class Job:
    """A job's definition, status and (while it runs) its Spark parts.

    Only the job manager changes ``status``, through its ``_transition``.
    """

    id: str
    name: str
    statement: str
    streaming: bool
    start_time: float = field(default_factory=time.time)
    end_time: float | None = None
    status: JobStatus = JobStatus.CREATED
    cause: str | None = None
    checkpoint: str | None = None
    savepoint: str | None = None
    restored_from: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    # A bounded datagen source's row count: the job finishes once it is read.
    bounded_rows: int | None = None
    # Its sources are files read to what they held at the start (availableNow).
    available_now: bool = False
    queries: list[StreamingQuery] = field(default_factory=list)
    # This job's own hooks (a CTAS's, say), after the manager's; the durable ones
    # among them are stored with the job (see service.job.hooks.DurableHook).
    hooks: tuple[JobStatusHook, ...] = ()
    # Set once the job has ended (and its hooks have run).
    done: threading.Event = field(default_factory=threading.Event)
    # How to make the job's queries again on a new engine (they resume from their
    # checkpoints); None: the job ends with its engine. ``owner`` is the session
    # whose state that needs (made again first when it is no longer open).
    restart: Callable[[], Sequence[StreamStarter]] | None = None
    owner: object | None = None
    # What a new gateway process needs to start it again (JSON: the INSERTs, their
    # options and the image of the session they ran in); None: it ends with the process.
    resume: dict[str, Any] | None = None
    # Stops a batch job's work that is not Spark's (a deployed application's process).
    cancel: Callable[[], None] | None = None
    # Its engine died; its queries wait for a new engine (the job stays RUNNING).
    suspended: bool = False
    # Who submitted it: the user of the session (None: nobody was named).
    user: str | None = None
    # A batch job's work has returned or raised (its Spark jobs may still be ending).
    settled: threading.Event = field(default_factory=threading.Event)
    # A batch job is past its writes, in its last step (publishing): too late to cancel.
    publishing: bool = False

    @property
    def tag(self) -> str:
        return f"sparkgate-job-{self.id}"

    def info(self) -> JobInfo:
        return JobInfo(
            job_id=self.id,
            name=self.name,
            status=self.status,
            statement=self.statement,
            streaming=self.streaming,
            start_time=self.start_time,
            end_time=self.end_time,
            cause=self.cause,
            checkpoint=self.checkpoint,
            savepoint=self.savepoint,
            restored_from=self.restored_from,
            options=dict(self.options),
            user=self.user,
        )

    @classmethod
    def from_info(cls, info: JobInfo, bounded_rows: int | None = None) -> Job:
        job = cls(info.job_id, info.name, info.statement, info.streaming, info.start_time)
        job.end_time = info.end_time
        job.status = info.status
        job.cause = info.cause
        job.checkpoint = info.checkpoint
        job.savepoint = info.savepoint
        job.restored_from = info.restored_from
        job.options = dict(info.options)
        job.user = info.user
        job.bounded_rows = bounded_rows
        if info.status.is_terminal:
            job.done.set()
        return job

    def describe(self) -> dict[str, str | None]:
        """DESCRIBE JOB's columns and values."""
        return {
            "job id": self.id,
            "job name": self.name,
            "status": self.status.value,
            "start time": iso_time(self.start_time),
            "end time": None if self.end_time is None else iso_time(self.end_time),
            "checkpoint": self.checkpoint,
            "savepoint": self.savepoint,
            "restored from": self.restored_from,
            "user": self.user,
            "cause": self.cause,
            "statement": self.statement,
        }


def iso_time(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ts)) + f".{int(ts * 1000) % 1000:03d}"


def default_name(statement: str) -> str:
    text = " ".join(statement.split())
    return text if len(text) <= 80 else text[:77] + "..."


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


def query_caught_up(query: StreamingQuery) -> bool:
    """An availableNow query whose last micro-batch read no row has read all that
    its sources held when it started (Spark runs a batch without data only then).
    Spark itself keeps running such empty batches for an operator with
    processing-time timers (transformWithState), so the caller stops it."""
    progress = query.lastProgress
    if not progress:
        return False
    return int(progress.get("numInputRows", -1)) == 0


def batch_id(query: StreamingQuery) -> int:
    """The id of the query's last completed micro-batch (-1 before the first)."""
    progress = query.lastProgress
    return int(progress["batchId"]) if progress else -1


def copy_dir(sc: SparkContext, source: str, target: str) -> None:
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
