"""Spark job control for operations: tags, descriptions, interrupts, progress.

Every Spark job an operation starts carries the operation's job tag (a
thread-local property that PySpark's pinned-thread mode keeps per worker
thread, and that threads the JVM starts for us inherit), so cancel, timeout
and session close stop exactly that operation's jobs.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from sparkgate.api.errors import ExecutionError
from sparkgate.api.service import OperationProgress
from sparkgate.service.spark.jvm_cache import as_json, jvm_constant, scala_context
from sparkgate.service.spark.pools import POOL_PROPERTY
from sparkgate.sql.secrets import mask_secrets, masked_statement

if TYPE_CHECKING:
    from pyspark import SparkContext

__all__ = [
    "cancel_tag",
    "invalid",
    "job_scope",
    "progress_for_tag",
    "tasks_ended",
    "to_execution_error",
]

log = logging.getLogger(__name__)

_DESCRIPTION_LIMIT = 4000
_LISTENER_WAIT_MS = 10_000


@contextlib.contextmanager
def job_scope(
    sc: SparkContext,
    tag: str,
    description: str | None,
    pool: str | None = None,
    user: str | None = None,
) -> Iterator[None]:
    """Tag (and describe, for Spark's UI) the jobs this thread starts, in ``pool``;
    Spark's ``current_user()`` is ``user`` meanwhile (as in Spark's Thrift server)."""
    current_user = _current_user(sc) if user else None
    if current_user is not None:
        current_user.set(user)
    sc.addJobTag(tag)
    if pool is not None:
        sc.setLocalProperty(POOL_PROPERTY, pool)
    if description:
        sc.setJobDescription(masked_statement(description)[:_DESCRIPTION_LIMIT])
    try:
        yield
    finally:
        _log_jobs(sc, tag)
        sc.removeJobTag(tag)
        sc.setJobDescription(None)  # type: ignore[arg-type]
        if pool is not None:
            sc.setLocalProperty(POOL_PROPERTY, None)  # type: ignore[arg-type]
        if current_user is not None:
            current_user.remove()


def _current_user(sc: SparkContext) -> Any:
    """The JVM thread-local ``current_user()`` reads; its value is each JVM thread's
    own, so the one object serves every thread (looked up once: three py4j calls)."""
    return jvm_constant(sc, "current-user", _current_user_context)


def _current_user_context(sc: SparkContext) -> Any:
    try:
        jvm: Any = sc._jvm
        return getattr(jvm, "org.apache.spark.sql.catalyst.CurrentUserContext").CURRENT_USER()
    except Exception:  # another Spark version: current_user() stays the OS user's
        log.debug("No CurrentUserContext in this Spark", exc_info=True)
        return None


def _status(sc: SparkContext) -> tuple[Any, Any]:
    """The context's status tracker and store (fixed for its life)."""
    context = scala_context(sc)
    return context.statusTracker(), context.statusStore()


def _log_jobs(sc: SparkContext, tag: str) -> None:
    """Say what Spark ran for the operation: it lands in the operation's log.

    Read from Spark's status store as JSON, the job ids and then each job's
    record in one round trip each: every py4j call here is made after each
    statement, and a field or an array element would be one call each.
    """
    try:
        jvm = sc._jvm
        tracker, store = jvm_constant(sc, "status", _status)
        for job_id in sorted(as_json(jvm, tracker.getJobIdsForTag(tag))):
            try:
                job = as_json(jvm, store.job(job_id))
            except Exception:  # not (or no longer) in the store
                continue
            log.info(
                "Spark job %s %s: %d stage(s), %d task(s) completed",
                job_id,
                job["status"],
                len(job["stageIds"]),
                job["numCompletedTasks"],
            )
    except Exception:  # the log is best effort; the JVM may be going away
        log.debug("Could not read Spark job status for %s", tag, exc_info=True)


def cancel_tag(sc: SparkContext, tag: str) -> None:
    sc.cancelJobsWithTag(tag)


def tasks_ended(sc: SparkContext, tag: str, timeout_s: float) -> bool:
    """Wait until no task of a Spark job tagged ``tag`` runs (or ``timeout_s``).

    A cancelled job's action returns before its tasks have stopped: a task
    still running may write a file after whoever cleans up has looked.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            # The tracker reads what Spark's listener bus delivered, which lags: a job
            # just started, or a task just killed, may not show yet.
            scala_context(sc).listenerBus().waitUntilEmpty(_LISTENER_WAIT_MS)
        except Exception:
            log.debug("Spark's listener bus did not drain in time", exc_info=True)
        try:
            tracker = scala_context(sc).statusTracker()
            active = 0
            for job_id in tracker.getJobIdsForTag(tag):
                info = tracker.getJobInfo(job_id)
                if not info.isDefined():
                    continue
                for stage_id in info.get().stageIds():
                    stage = tracker.getStageInfo(stage_id)
                    if stage.isDefined():
                        active += stage.get().numActiveTasks()
        except Exception:  # the engine is gone: nothing runs
            return True
        if active == 0:
            return True
        if time.monotonic() >= deadline:
            log.warning("%d task(s) of %s still running after %.0f s", active, tag, timeout_s)
            return False
        time.sleep(0.1)


def progress_for_tag(sc: SparkContext, tag: str, started: float | None) -> OperationProgress:
    """Sum the stages and tasks of the tag's jobs from Spark's status tracker."""
    tracker = scala_context(sc).statusTracker()
    jobs = jobs_done = stages = stages_done = tasks = tasks_done = tasks_running = 0
    for job_id in tracker.getJobIdsForTag(tag):
        job = tracker.getJobInfo(job_id)
        if job.isEmpty():
            continue
        info = job.get()
        jobs += 1
        job_over = str(info.status().toString()) in ("SUCCEEDED", "FAILED")
        jobs_done += job_over
        for stage_id in info.stageIds():
            stage = tracker.getStageInfo(stage_id)
            if stage.isEmpty():
                continue
            s = stage.get()
            n, done, running = s.numTasks(), s.numCompletedTasks(), s.numActiveTasks()
            if job_over and done < n and running == 0:
                continue  # skipped (reused shuffle output): Spark's UI leaves it out too
            stages += 1
            tasks += n
            tasks_done += done
            tasks_running += running
            if done >= n:
                stages_done += 1
    elapsed = time.time() - started if started else 0.0
    return OperationProgress(
        jobs, jobs_done, stages, stages_done, tasks, tasks_done, tasks_running, elapsed
    )


def invalid(
    message: str,
    *,
    kind: str = "ValidationException",
    error_class: str | None = None,
    sql_state: str | None = None,
) -> ExecutionError:
    """A statement refused before it runs, with the cause line Flink's clients print
    (``ValidationException: <message>``) and Spark's error class and state if any."""
    return ExecutionError(
        message, causes=(f"{kind}: {message}",), error_class=error_class, sql_state=sql_state
    )


def to_execution_error(exc: BaseException) -> ExecutionError:
    """Turn what Spark raised into an :class:`ExecutionError` with the whole chain.

    The chain comes from the JVM exception when there is one (outermost first,
    ``class: message`` as Java prints it), else from Python's ``__cause__``.
    Secret values in them (Spark's messages quote the statement) are masked.
    """
    if isinstance(exc, ExecutionError):
        return exc
    causes: list[str] = []
    origin: Any = getattr(exc, "_origin", None) or getattr(exc, "java_exception", None)
    error_class = sql_state = None
    try:
        error_class = exc.getCondition()  # type: ignore[attr-defined]
        sql_state = exc.getSqlState()  # type: ignore[attr-defined]
    except Exception:  # not a Spark exception, or the JVM is gone
        pass
    if error_class is None and origin is not None:
        # A Java exception py4j did not convert (a call outside SQL) may still
        # be a SparkThrowable with its error condition.
        try:
            error_class = origin.getCondition()
            sql_state = origin.getSqlState()
        except Exception:
            pass
    seen = 0
    while origin is not None and seen < 20:
        try:
            name = origin.getClass().getName()
            message = origin.getMessage()
            causes.append(f"{name}: {message}" if message is not None else str(name))
            origin = origin.getCause()
        except Exception:
            break
        seen += 1
    if not causes:
        current: BaseException | None = exc
        while current is not None and seen < 20:
            causes.append(f"{type(current).__name__}: {_python_message(current)}")
            current = current.__cause__ or current.__context__
            seen += 1
    return ExecutionError(
        mask_secrets(_python_message(exc)),
        causes=tuple(mask_secrets(cause) for cause in causes),
        error_class=error_class,
        sql_state=sql_state,
    )


def _python_message(exc: BaseException) -> str:
    desc = getattr(exc, "_desc", None)
    if isinstance(desc, str) and desc.strip():
        return desc.strip()  # a ParseException's starts with a line break
    java = getattr(exc, "java_exception", None)
    if java is not None:
        # py4j's own "An error occurred while calling o31.sql." says nothing: the
        # Java exception's message is the error.
        with contextlib.suppress(Exception):
            message = java.getMessage()
            if message:
                return str(message).strip()
    return str(exc).split("\n\nJVM stacktrace:")[0]
