"""Jobs as the gateway's contract: status machine, read-only job info, status hooks.

A job is an INSERT (or statement set) that runs on after its statement: a
batch write or a set of streaming queries. Jobs belong to the gateway, not to
a session. ``TRANSITIONS`` is the whole status machine (Flink's JobStatus,
the states a Spark job can be in); only the job manager's ``_transition``
moves a job along it.

:class:`JobStatusHook` is FLIP-218's hook: the job manager calls it when a
job is created and when it ends, whoever submitted the job and whether or
not that session still exists.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from sparkgate.api.errors import IllegalTransitionError

__all__ = [
    "HOOK_ENTRY_POINT_GROUP",
    "JOB_TRANSITIONS",
    "JobInfo",
    "JobStatus",
    "JobStatusHook",
    "NoopJobStatusHook",
    "check_job_transition",
]

# Plug-ins name their JobStatusHook under this entry-point group; the option
# ``sql-gateway.job.status-hooks`` picks the ones a gateway runs.
HOOK_ENTRY_POINT_GROUP = "sparkgate.job_status_hooks"


class JobStatus(enum.Enum):
    """Where a job is (Flink's names; SHOW JOBS prints the value)."""

    CREATED = "CREATED"
    RUNNING = "RUNNING"
    # STOP JOB was asked for: the job ends CANCELED, or FINISHED with a savepoint.
    CANCELLING = "CANCELLING"
    FINISHED = "FINISHED"
    CANCELED = "CANCELED"
    FAILED = "FAILED"

    @property
    def is_terminal(self) -> bool:
        """The job has ended; its status never changes again."""
        return not JOB_TRANSITIONS[self]


_S = JobStatus
JOB_TRANSITIONS: Mapping[JobStatus, frozenset[JobStatus]] = {
    # A job that could not start fails (or is cancelled) before it runs.
    _S.CREATED: frozenset({_S.RUNNING, _S.FAILED, _S.CANCELED}),
    _S.RUNNING: frozenset({_S.FINISHED, _S.FAILED, _S.CANCELLING, _S.CANCELED}),
    # Stop-with-savepoint ends FINISHED (as in Flink); a plain stop CANCELED;
    # a failure while stopping is taken for the stop.
    _S.CANCELLING: frozenset({_S.CANCELED, _S.FINISHED}),
    _S.FINISHED: frozenset(),
    _S.CANCELED: frozenset(),
    _S.FAILED: frozenset(),
}


def check_job_transition(source: JobStatus, target: JobStatus) -> None:
    """Raise :class:`IllegalTransitionError` unless ``source -> target`` is an edge."""
    if target not in JOB_TRANSITIONS[source]:
        raise IllegalTransitionError(
            f"Job status cannot move from {source.value} to {target.value}."
        )


@dataclass(frozen=True)
class JobInfo:
    """A snapshot of one job, as SHOW JOBS / DESCRIBE JOB and hooks see it.

    Times are seconds since the epoch. ``options`` are the session options
    the job was submitted with (its definition, with the statement).
    """

    job_id: str
    name: str
    status: JobStatus
    statement: str
    streaming: bool
    start_time: float
    end_time: float | None = None
    cause: str | None = None
    checkpoint: str | None = None
    savepoint: str | None = None
    restored_from: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    #: Who submitted it (the session's user; None without authentication).
    user: str | None = None


@runtime_checkable
class JobStatusHook(Protocol):
    """Called by the job manager on a job's status changes (FLIP-218).

    ``on_created`` runs once, before the job's work starts; exactly one of
    the other three runs once when the job ends. A hook that raises is
    logged and never breaks the job or the other hooks. Hooks run on the
    thread that moves the job, so a slow hook delays the job's end.
    """

    def on_created(self, job: JobInfo) -> None: ...

    def on_finished(self, job: JobInfo) -> None: ...

    def on_failed(self, job: JobInfo, cause: str) -> None: ...

    def on_canceled(self, job: JobInfo) -> None: ...


class NoopJobStatusHook:
    """A hook that does nothing: subclass it and override what you need."""

    def on_created(self, job: JobInfo) -> None:
        return None

    def on_finished(self, job: JobInfo) -> None:
        return None

    def on_failed(self, job: JobInfo, cause: str) -> None:
        return None

    def on_canceled(self, job: JobInfo) -> None:
        return None
