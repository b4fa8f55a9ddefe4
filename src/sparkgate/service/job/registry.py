"""The job manager as the SQL job statements use it (SHOW/DESCRIBE/STOP JOB, INSERT).

``JobRegistry`` keeps the names and signatures those statements were written
against, over a :class:`JobManager`: its ``stop(sc, job_id, ...)`` stops one
job and answers the savepoint's path; ``close()`` stops the manager.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sparkgate.api.jobs import JobStatusHook
from sparkgate.service.job.job import Job, StreamStarter
from sparkgate.service.job.manager import JobManager

if TYPE_CHECKING:
    from pyspark import SparkContext

__all__ = ["JobRegistry"]


class JobRegistry:
    """Every job of the gateway, through its job manager."""

    def __init__(
        self,
        data_dir: Path | JobManager,
        *,
        max_ended: int = 1000,
        ended_ttl_s: float = 3600.0,
    ) -> None:
        if isinstance(data_dir, JobManager):
            self.manager = data_dir
        else:
            self.manager = JobManager(data_dir, max_ended=max_ended, ended_ttl_s=ended_ttl_s)

    @property
    def data_dir(self) -> Path:
        return self.manager.data_dir

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
    ) -> Job:
        return self.manager.run_batch(
            sc, statement, name, action, cancelled=cancelled, options=options, hooks=hooks
        )

    def submit_batch(
        self,
        sc: SparkContext,
        statement: str,
        name: str | None,
        action: Callable[[], None],
        *,
        options: Mapping[str, str] | None = None,
        hooks: Sequence[JobStatusHook] = (),
    ) -> Job:
        return self.manager.submit_batch(sc, statement, name, action, options=options, hooks=hooks)

    def submit_stream(
        self,
        sc: SparkContext,
        statement: str,
        name: str | None,
        starters: Sequence[StreamStarter],
        *,
        savepoint: str | None = None,
        bounded_rows: int | None = None,
        options: Mapping[str, str] | None = None,
        hooks: Sequence[JobStatusHook] = (),
    ) -> Job:
        return self.manager.submit_stream(
            sc,
            statement,
            name,
            starters,
            savepoint=savepoint,
            bounded_rows=bounded_rows,
            options=options,
            hooks=hooks,
        )

    def get(self, job_id: str) -> Job:
        return self.manager.get(job_id)

    def jobs(self) -> list[Job]:
        return self.manager.jobs()

    def stop(
        self, sc: SparkContext, job_id: str, *, savepoint: bool = False, drain: bool = False
    ) -> str | None:
        """Stop a running job; with ``savepoint``, return where its savepoint is."""
        job = self.manager.stop_job(sc, job_id, savepoint=savepoint, drain=drain)
        return job.savepoint if savepoint else None

    def close(self) -> None:
        self.manager.stop()

    def remove_checkpoints(self, job: Job) -> None:
        self.manager.remove_checkpoints(job)
