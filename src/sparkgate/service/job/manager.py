"""The job manager: every job of the gateway, its status machine, store and hooks.

Jobs belong to the gateway, not to a session: SHOW JOBS, DESCRIBE JOB and
STOP JOB work from any session, and a job outlives the session that
submitted it. A job moves only through :meth:`JobManager._transition`,
along ``api.jobs.JOB_TRANSITIONS``: it validates the move under the lock,
stores the job, runs the job status hooks (FLIP-218) and wakes waiters.

Ended jobs stay listed for ``jobstore.expiration-time`` and at most
``jobstore.max-capacity`` of them (Flink's job store), in memory and in the
store under ``<data-dir>/jobs/``; after a restart they are listed again.
Streaming jobs that keep what starting them again needs (their INSERTs and
their session's image) are resumed from their checkpoints by the next
process (:meth:`JobManager.take_resumable`); a shutdown stops them with a
savepoint first. Other jobs running when the process ended are FAILED.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkgate.api.errors import ExecutionError
from sparkgate.api.jobs import JobInfo, JobStatus, JobStatusHook, check_job_transition
from sparkgate.service.job.hooks import DurableHook, DurableHookFactory, load_hooks, run_hooks
from sparkgate.service.job.job import (
    Job,
    StreamStarter,
    batch_id,
    copy_dir,
    default_name,
    query_caught_up,
    query_exhausted,
)
from sparkgate.service.job.store import RESTART_CAUSE, SHUTDOWN_CAUSE, JobStore, StoredJob
from sparkgate.service.spark.jobs import tasks_ended, to_execution_error
from sparkgate.service.state import Records
from sparkgate.sql.secrets import masked_statement

if TYPE_CHECKING:
    from pyspark import SparkContext

__all__ = ["JobManager"]

log = logging.getLogger(__name__)

_MONITOR_INTERVAL_S = 0.25
_GRACE_S = 5.0
_COMMIT_POLL_S = 0.01
# How long a cancelled or failed batch job waits for its Spark tasks to stop
# before its hooks undo what it wrote.
_TASKS_END_S = 60.0
_CANCEL_AGAIN_S = 0.25
_S = JobStatus
_LIVE = frozenset({_S.CREATED, _S.RUNNING})


class JobManager:
    """Submits, watches, stops and remembers the gateway's jobs.

    ``hook_names`` name hooks of the entry-point group
    ``sparkgate.job_status_hooks`` (an unknown name raises
    ``ConfigurationError`` here). Works before :meth:`start` too (then
    without the stored history or the configured hooks); :meth:`start`
    enables both, :meth:`stop` stops the monitor and the running streaming
    jobs, and disables the configured hooks.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        max_ended: int = 1000,
        ended_ttl_s: float = 3600.0,
        hook_names: Sequence[str] = (),
        records: Records | None = None,
        checkpoint_dir: str = "",
        savepoint_dir: str = "",
    ) -> None:
        self.data_dir = data_dir.expanduser()
        # Paths or Hadoop URIs: each job's checkpoints, and new savepoints, go under them.
        self._checkpoints = checkpoint_dir.rstrip("/") or str(self.data_dir / "checkpoints")
        self._savepoints = savepoint_dir.rstrip("/") or str(self.data_dir / "savepoints")
        # The job records: files under the data directory unless given (a state database).
        self.store = JobStore(records or self.data_dir / "jobs")
        self.store.on_taken = self._let_go
        self._max_ended = max_ended
        self._ended_ttl_s = ended_ttl_s
        # Resolved now, so an unknown hook name fails before anything starts.
        self._hooks_configured = load_hooks(hook_names)
        self._configured: list[JobStatusHook] = []
        self._registered: list[JobStatusHook] = []
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._store_lock = threading.Lock()
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None
        self._started = False
        self._durable_kinds: dict[str, DurableHookFactory] = {}
        # Streaming jobs a past process ran, to be started again (take_resumable).
        self._resumable: list[Job] = []
        # The gateway is stopping: what fails now was cut off by the stop.
        self._closing = False
        #: Whether the engine lives (the gateway's engine watch answers).
        self.engine_alive: Callable[[], bool] = lambda: True

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> None:
        """Enable the configured hooks, then load the stored jobs."""
        if self._started:
            return
        self._closing = False
        self._configured = list(self._hooks_configured)
        stored = self.store.load()
        self._admit(stored)
        if stored:
            log.info("Loaded %d jobs from %s", len(stored), self.store.records.location)
        self._started = True

    def adopt(self, records: list[tuple[str, bytes]]) -> None:
        """Take on the jobs of another gateway that ended (its records, now this
        gateway's): as after a restart, its resumable streaming jobs wait for
        :meth:`take_resumable`, its other unended jobs end FAILED with their hooks run."""
        stored = self.store.recover(records)
        self._admit(stored)
        if stored:
            log.info("Took over %d jobs of a gateway that ended", len(stored))

    def _admit(self, stored: list[StoredJob]) -> None:
        with self._lock:
            for record in stored:
                job = Job.from_info(record.info, record.bounded_rows)
                job.resume = record.resume
                if record.resumable and record.info.job_id not in self._jobs:
                    job.suspended = True  # RUNNING, its queries wait for take_resumable
                    self._resumable.append(job)
                self._jobs.setdefault(record.info.job_id, job)
            evicted = self._evict()
        self._forget(evicted)
        for record in stored:
            if record.interrupted:
                self._recover(record)

    def register_durable_hook(self, kind: str, factory: DurableHookFactory) -> None:
        """How to remake durable hooks of ``kind`` from their records (before :meth:`start`)."""
        self._durable_kinds[kind] = factory

    def _recover(self, record: StoredJob) -> None:
        """Tell a job's durable hooks that it failed with the process that ran it."""
        hooks = []
        for spec in record.hooks:
            factory = self._durable_kinds.get(str(spec.get("kind")))
            if factory is None:
                log.error(
                    "Job %s: no durable hook of kind %r", record.info.job_id, spec.get("kind")
                )
                continue
            try:
                hooks.append(factory(spec.get("record") or {}))
            except Exception:
                log.exception("Job %s: its %s hook could not be made", record.info.job_id, spec)
        log.info("Job %s ended with the gateway: cleaning up after it", record.info.job_id)
        run_hooks(hooks, record.info)
        record.interrupted = False
        with self._store_lock:
            self.store.save(record)

    def take_resumable(self) -> list[Job]:
        """The streaming jobs a past process ran, RUNNING and suspended: the caller
        starts each again (:meth:`resume_stream`) in a session made from its record."""
        with self._lock:
            jobs, self._resumable = self._resumable, []
        return jobs

    def begin_stop(self) -> None:
        """The gateway is stopping: a job failing from now on was cut off by it."""
        self._closing = True

    def stop(self, sc: SparkContext | None = None) -> None:
        """Stop watching and the running jobs; drop the configured hooks.

        A streaming job the next process can start again is stopped with a
        savepoint (given ``sc``) and stays RUNNING in the store; the other
        streaming jobs are CANCELED. Batch jobs are cut off: FAILED with the
        cause ``RESTART_CAUSE``, their hooks undoing what they wrote.
        """
        self._closing = True
        self._stop.set()
        monitor = self._monitor
        if monitor is not None and monitor is not threading.current_thread():
            monitor.join(_MONITOR_INTERVAL_S * 8)
        for job in self.jobs():
            if job.status not in _LIVE:
                continue
            if not job.streaming:
                self._cut_off(sc, job)
            elif job.resume is not None and job.status is _S.RUNNING and not job.suspended:
                self._pause(sc, job)
            elif job.resume is None or job.status is not _S.RUNNING:
                self._stop_queries(job)
                self._transition(job, _S.CANCELED, expect=_LIVE, cause=SHUTDOWN_CAUSE)
        self._configured = []
        self._started = False

    def _cut_off(self, sc: SparkContext | None, job: Job) -> None:
        """End a running batch job with the gateway: its Spark jobs cancelled, then
        FAILED (its hooks undo its writes once its tasks have stopped)."""
        self._cancel_work(job)
        if sc is not None:
            with contextlib.suppress(Exception):
                sc.cancelJobsWithTag(job.tag)
                job.settled.wait(_GRACE_S)
                tasks_ended(sc, job.tag, _GRACE_S)
        if self._transition(job, _S.FAILED, expect=_LIVE, cause=RESTART_CAUSE):
            log.info("Job %s was cut off by the gateway's stop", job.id)

    def _new_savepoint(self, job: Job) -> str:
        """Where a savepoint of ``job`` goes: a new directory under the savepoint dir."""
        return f"{self._savepoints}/savepoint-{job.id[:6]}-{uuid.uuid4().hex[:12]}"

    @staticmethod
    def _cancel_work(job: Job) -> None:
        if job.cancel is not None:
            try:
                job.cancel()
            except Exception:
                log.warning("Could not stop the work of job %s", job.id, exc_info=True)

    def _pause(self, sc: SparkContext | None, job: Job) -> None:
        """Stop a job at a shutdown so that the next process resumes it: after the
        micro-batch in flight, with a savepoint of where it stopped."""
        self._quiesce(job, _GRACE_S)
        self._stop_queries(job)
        job.queries = []
        job.suspended = True
        if sc is not None and job.checkpoint is not None:
            target = self._new_savepoint(job)
            try:
                copy_dir(sc, job.checkpoint, target)
                job.savepoint = target
            except Exception:
                log.warning("Job %s: no savepoint at the shutdown", job.id, exc_info=True)
        self._save(job)
        log.info("Job %s stopped with the gateway; the next start resumes it", job.id)

    # -- hooks ---------------------------------------------------------------------
    def add_hook(self, hook: JobStatusHook) -> None:
        """Run ``hook`` for every job created from now on (and those running now)."""
        with self._lock:
            self._registered.append(hook)

    def remove_hook(self, hook: JobStatusHook) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._registered.remove(hook)

    def _shared_hooks(self) -> list[JobStatusHook]:
        """The configured and registered hooks: every job's."""
        with self._lock:
            return [*self._configured, *self._registered]

    def _hooks_of(self, job: Job) -> list[JobStatusHook]:
        return [*self._shared_hooks(), *job.hooks]

    # -- the status machine --------------------------------------------------------
    def _transition(
        self,
        job: Job,
        target: JobStatus,
        *,
        expect: Iterable[JobStatus] | None = None,
        cause: str | None = None,
    ) -> bool:
        """Move ``job`` to ``target``; False (no move) when it is not in ``expect``.

        Validated against the transition table under the lock; then the job is
        stored, its hooks run (outside the lock) and, once it has ended, the
        waiters on its ``done`` event wake.
        """
        with self._lock:
            source = job.status
            if expect is not None and source not in frozenset(expect):
                return False
            check_job_transition(source, target)
            job.status = target
            if cause is not None:
                job.cause = cause
            if target.is_terminal:
                job.end_time = time.time()
                job.restart = job.owner = None  # nothing to resume: let its session go
        log.info("Job %s (%s): %s -> %s", job.id, job.name, source.value, target.value)
        self._save(job)
        if target is not _S.RUNNING and target is not _S.CANCELLING:
            run_hooks(self._hooks_of(job), job.info())
        if target.is_terminal:
            job.done.set()
        return True

    def _save(self, job: Job) -> None:
        # The snapshot is taken inside the store lock, so the last write of a
        # job always holds its latest state, whichever thread moved it.
        with self._store_lock:
            durable = [
                {"kind": hook.kind, "record": hook.record()}
                for hook in job.hooks
                if isinstance(hook, DurableHook)
            ]
            self.store.save(StoredJob(job.info(), job.bounded_rows, durable, job.resume))

    def wait(self, job_id: str, timeout: float | None = None) -> JobInfo:
        """Wait until the job has ended (and its hooks ran), or ``timeout``."""
        job = self.get(job_id)
        job.done.wait(timeout)
        return job.info()

    # -- submitting ------------------------------------------------------------------
    def _new(
        self,
        name: str | None,
        statement: str,
        streaming: bool,
        options: Mapping[str, str] | None,
        hooks: Sequence[JobStatusHook],
        user: str | None = None,
        resume: dict[str, Any] | None = None,
        job_id: str | None = None,
    ) -> Job:
        statement = masked_statement(statement)  # SHOW JOBS, the store, Spark's UI
        job = Job(job_id or uuid.uuid4().hex, name or default_name(statement), statement, streaming)
        job.options = dict(options or {})
        job.user = user
        job.resume = resume
        job.hooks = tuple(hooks)
        with self._lock:
            # Only a given id can be taken; a stream's checkpoints are kept by its id.
            if job.id in self._jobs or (job_id and Path(self._checkpoints, job.id).exists()):
                raise ExecutionError(
                    f"Job {job.id} already exists: set another $internal.pipeline.job-id, "
                    "or reset it",
                    causes=(f"DuplicateJobSubmissionException: Job {job.id} already exists",),
                )
            evicted = self._evict()
            self._jobs[job.id] = job
        self._forget(evicted)
        if streaming:
            job.checkpoint = f"{self._checkpoints}/{job.id}"
        log.info("Job %s (%s) CREATED", job.id, job.name)
        self._save(job)
        run_hooks(self._shared_hooks(), job.info())
        try:
            for hook in job.hooks:  # the job's own: strict, their failure is the job's
                hook.on_created(job.info())
        except BaseException as exc:
            error = to_execution_error(exc)
            self._transition(job, _S.FAILED, expect=_LIVE, cause=error.root_cause)
            raise error from exc
        if job.hooks:
            self._save(job)  # what on_created made is in the store before the work starts
        return job

    def _evict(self) -> list[str]:
        """Forget ended jobs past their time or beyond capacity (lock held)."""
        ended = sorted(
            (j for j in self._jobs.values() if j.end_time is not None),
            key=lambda j: j.end_time or 0.0,
        )
        horizon = time.time() - self._ended_ttl_s
        excess = len(ended) - self._max_ended
        gone = []
        for index, job in enumerate(ended):
            if index < excess or (job.end_time or 0.0) < horizon:
                del self._jobs[job.id]
                gone.append(job.id)
        return gone

    def _forget(self, job_ids: Iterable[str]) -> None:
        for job_id in job_ids:
            self.store.delete(job_id)

    def _run_tagged(
        self,
        sc: SparkContext,
        job: Job,
        action: Callable[[], None],
        last_step: Callable[[], None] | None,
    ) -> None:
        try:
            sc.addJobTag(job.tag)
            try:
                action()
            finally:
                sc.removeJobTag(job.tag)
            if last_step is not None:
                with self._lock:
                    if job.status is not _S.RUNNING:
                        raise ExecutionError(f"Job {job.id} was stopped before it published")
                    job.publishing = True  # a stop now comes too late
                last_step()
            # A stop that came while it published waits for it to finish.
            self._transition(
                job,
                _S.FINISHED,
                expect={_S.RUNNING, _S.CANCELLING} if job.publishing else {_S.RUNNING},
            )
        finally:
            job.settled.set()

    def _after_tasks(self, sc: SparkContext, job: Job) -> None:
        """Wait for the Spark tasks of a failed or cancelled batch job to stop: its
        hooks then undo its writes after the last file was written."""
        tasks_ended(sc, job.tag, _TASKS_END_S)

    def run_batch(
        self,
        sc: SparkContext,
        statement: str,
        name: str | None,
        action: Callable[[], None],
        *,
        cancelled: Callable[[], bool],
        options: Mapping[str, str] | None = None,
        hooks: Sequence[JobStatusHook] = (),
        last_step: Callable[[], None] | None = None,
        user: str | None = None,
        job_id: str | None = None,
    ) -> Job:
        """Run ``action`` on the calling thread as a listed job (synchronous DML).

        Its errors propagate to the caller; ``cancelled`` tells a cancelled
        statement from a failed one. ``last_step`` runs after ``action``
        unless the job was stopped (publishing what it wrote). The job's hooks
        have run when it returns.
        """
        job = self._new(name, statement, False, options, hooks, user, job_id=job_id)
        self._transition(job, _S.RUNNING)
        try:
            self._run_tagged(sc, job, action, last_step)
        except BaseException as exc:
            self._after_tasks(sc, job)
            if cancelled() and not self._closing:
                self._transition(job, _S.CANCELED, expect=_LIVE)
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
        *,
        options: Mapping[str, str] | None = None,
        hooks: Sequence[JobStatusHook] = (),
        last_step: Callable[[], None] | None = None,
        user: str | None = None,
        cancel: Callable[[], None] | None = None,
        job_id: str | None = None,
    ) -> Job:
        """Run ``action``, then ``last_step`` (see :meth:`run_batch`), on its own
        thread, tagged with the job's tag. ``cancel`` stops what ``action`` runs
        besides Spark jobs (STOP JOB, the gateway's stop)."""
        job = self._new(name, statement, False, options, hooks, user, job_id=job_id)
        job.cancel = cancel
        self._transition(job, _S.RUNNING)

        def run() -> None:
            sc.setJobDescription(f"{job.name} ({job.id})")
            try:
                self._run_tagged(sc, job, action, last_step)
            except BaseException as exc:
                if job.status in _LIVE:  # a stop waits for the tasks itself
                    self._after_tasks(sc, job)
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
        available_now: bool = False,
        options: Mapping[str, str] | None = None,
        hooks: Sequence[JobStatusHook] = (),
        restart: Callable[[], Sequence[StreamStarter]] | None = None,
        owner: object | None = None,
        user: str | None = None,
        resume: dict[str, Any] | None = None,
        job_id: str | None = None,
    ) -> Job:
        """Start one StreamingQuery per starter, as one job.

        The queries are started without the calling operation's job tags, so
        closing or cancelling the submitting operation or session leaves them
        running; they carry the job's tag instead. A job that cannot start
        fails (its hooks hear so) and is not listed. ``restart`` makes the
        starters again on a new engine (see :meth:`suspend_streams`); ``resume``
        (JSON) is what a new gateway process needs to do the same.
        """
        job = self._new(name, statement, True, options, hooks, user, resume, job_id)
        job.bounded_rows = bounded_rows
        job.available_now = available_now
        job.restart, job.owner = restart, owner
        assert job.checkpoint is not None
        try:
            if savepoint:
                copy_dir(sc, savepoint, job.checkpoint)
                job.restored_from = savepoint
            self._start_queries(sc, job, starters)
        except BaseException as exc:
            self._stop_queries(job)
            error = to_execution_error(exc)
            self._transition(job, _S.FAILED, expect=_LIVE, cause=error.root_cause)
            with self._lock:
                self._jobs.pop(job.id, None)
            self.store.delete(job.id)
            raise error from exc
        self._transition(job, _S.RUNNING)
        self._ensure_monitor()
        self._watch_end(job)
        log.info(
            "Started streaming job %s (%s), checkpoints in %s", job.id, job.name, job.checkpoint
        )
        return job

    def _start_queries(self, sc: SparkContext, job: Job, starters: Sequence[StreamStarter]) -> None:
        """Start the job's queries on its checkpoints, tagged with the job's tag only."""
        saved_tags = sorted(sc.getJobTags())
        for tag in saved_tags:
            sc.removeJobTag(tag)
        sc.addJobTag(job.tag)
        try:
            for index, start in enumerate(starters):
                job.queries.append(start(f"{job.checkpoint}/{index}"))
        finally:
            sc.removeJobTag(job.tag)
            for tag in saved_tags:
                sc.addJobTag(tag)

    # -- an engine's death ---------------------------------------------------------
    def suspend_streams(self) -> list[Job]:
        """The engine died: running streaming jobs that can restart wait for a new one
        (still RUNNING); the others end as at a shutdown. Returns the waiting ones."""
        waiting = []
        for job in self.jobs():
            if not job.streaming or job.status is not _S.RUNNING:
                continue
            job.queries = []  # the dead engine's
            if job.restart is not None:
                job.suspended = True
                waiting.append(job)
            else:
                self._transition(job, _S.CANCELED, expect={_S.RUNNING}, cause=SHUTDOWN_CAUSE)
        return waiting

    def resume_stream(
        self,
        sc: SparkContext,
        job: Job,
        failure: str | None = None,
        *,
        where: str = "on a new engine",
    ) -> None:
        """Start a suspended job's queries again (``where``: on a new engine, after a
        restart), from its checkpoints; it fails instead when ``failure`` says why it
        cannot, or the start fails."""
        try:
            if failure is not None:
                raise ExecutionError(failure)
            assert job.restart is not None
            self._start_queries(sc, job, job.restart())
        except BaseException as exc:
            self._stop_queries(job)
            cause = f"could not resume {where}: {to_execution_error(exc).root_cause}"
            job.suspended = False
            if self._transition(job, _S.FAILED, expect={_S.RUNNING}, cause=cause):
                log.warning("Streaming job %s %s", job.id, cause)
            return
        job.suspended = False
        self._ensure_monitor()
        self._watch_end(job)
        log.info("Streaming job %s resumed from its checkpoints %s", job.id, where)

    # -- looking up ------------------------------------------------------------------
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

    # -- stopping --------------------------------------------------------------------
    def stop_job(
        self, sc: SparkContext, job_id: str, *, savepoint: bool = False, drain: bool = False
    ) -> Job:
        """Stop a running job; with ``savepoint``, the job's ``savepoint`` says where.

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
        if not self._transition(job, _S.CANCELLING, expect={_S.RUNNING}):
            status = job.status.value
            raise ExecutionError(
                f"Job {job_id} is not running (status {status})",
                causes=(f"IllegalStateException: job {job_id} is {status}",),
            )
        if job.streaming:
            # Let the micro-batch in flight commit (drain waits longer for it).
            self._quiesce(job, _GRACE_S * (4 if drain else 1))
            self._stop_queries(job)
        else:
            # Again until its work returns: a Spark job it had not started yet when
            # first cancelled (still planning) starts later, and runs to its end.
            deadline = time.monotonic() + _TASKS_END_S
            self._cancel_work(job)
            sc.cancelJobsWithTag(job.tag)
            while not job.settled.wait(_CANCEL_AGAIN_S) and time.monotonic() < deadline:
                sc.cancelJobsWithTag(job.tag)
            # Its hooks undo its writes once nothing of it writes any more.
            self._after_tasks(sc, job)
        if not savepoint:
            # A batch job already publishing when stopped ends as its last step does.
            self._transition(job, _S.CANCELED, expect={_S.CANCELLING})
            return job
        assert job.checkpoint is not None
        target = self._new_savepoint(job)
        try:
            copy_dir(sc, job.checkpoint, target)
        except BaseException:
            self._transition(job, _S.CANCELED)
            raise
        job.savepoint = target
        log.info("Job %s stopped with savepoint %s", job.id, target)
        self._transition(job, _S.FINISHED)
        return job

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
                running = batch_id(query) + 1
            except Exception:
                continue
            while time.monotonic() < deadline:
                try:
                    if not query.isActive or batch_id(query) >= running:
                        break
                    if not query.status.get("isTriggerActive"):
                        break
                except Exception:
                    break
                time.sleep(_COMMIT_POLL_S)

    def _let_go(self, job_id: str) -> None:
        """Another gateway of the service took the job over (this one was silent past
        its lease): stop running it here, writing nothing more of it."""

        def let_go() -> None:  # not under the lock of the save that found it out
            with self._lock:
                job = self._jobs.pop(job_id, None)
            if job is not None:
                self._stop_queries(job)
                log.warning("Job %s is another gateway's now: stopped here", job_id)

        threading.Thread(target=let_go, name=f"sparkgate-let-go-{job_id}", daemon=True).start()

    def _stop_queries(self, job: Job) -> None:
        for query in job.queries:
            with contextlib.suppress(Exception):
                query.stop()

    def _fail(self, job: Job, exc: BaseException) -> None:
        # A job failing as it is stopped (CANCELLING) ends as the stop says.
        if job.status not in _LIVE:
            return
        if self._closing:  # cut off by the gateway's stop, not a failure of its own
            self._stop_queries(job)
            if self._transition(job, _S.FAILED, expect=_LIVE, cause=RESTART_CAUSE):
                log.info("Job %s was cut off by the gateway's stop", job.id)
            return
        cause = to_execution_error(exc).root_cause
        self._stop_queries(job)
        if self._transition(job, _S.FAILED, expect=_LIVE, cause=cause):
            log.error("Job %s failed: %s", job.id, cause)

    # -- watching --------------------------------------------------------------------
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
                if job.status is _S.RUNNING and job.streaming and not job.suspended:
                    self._check(job)

    def _watch_end(self, job: Job) -> None:
        """A job whose queries end by themselves (availableNow: its sources read to
        what they held) is FINISHED as they end, not at the monitor's next look."""
        if not job.available_now:
            return
        queries = list(job.queries)

        def wait() -> None:
            try:
                for query in queries:
                    query.awaitTermination()
            except Exception:  # failed, or the engine went: _check tells which
                log.debug("Streaming job %s ended with an error", job.id, exc_info=True)
            # Not when the gateway stopped them to resume them after its restart.
            if self._closing or job.suspended or job.queries != queries:
                return
            if job.status is _S.RUNNING:
                self._check(job)

        threading.Thread(target=wait, name=f"sparkgate-job-end-{job.id[:8]}", daemon=True).start()

    def _check(self, job: Job) -> None:
        try:
            for query in job.queries:
                error: Any = query.exception()
                if error is not None:
                    if job.status is _S.RUNNING and not self._dying_engine(job):
                        self._fail(job, error)
                    return
            if (
                job.bounded_rows is not None
                and all(query_exhausted(q, job.bounded_rows) for q in job.queries)
            ) or (job.available_now and all(query_caught_up(q) for q in job.queries)):
                if job.status is _S.RUNNING:
                    self._stop_queries(job)
                    self._transition(job, _S.FINISHED, expect={_S.RUNNING})
            elif not any(q.isActive for q in job.queries) and not self._dying_engine(job):
                # availableNow sources ran dry (a stop moved the job off RUNNING first)
                self._transition(job, _S.FINISHED, expect={_S.RUNNING})
        except Exception:
            log.debug("Could not check job %s", job.id, exc_info=True)

    def _dying_engine(self, job: Job) -> bool:
        """A resumable job's queries ended with their engine: the engine's recovery,
        not the monitor, decides what becomes of the job."""
        return job.restart is not None and not self.engine_alive()

    def remove_checkpoints(self, job: Job) -> None:
        if job.checkpoint and Path(job.checkpoint).exists():
            shutil.rmtree(job.checkpoint, ignore_errors=True)
