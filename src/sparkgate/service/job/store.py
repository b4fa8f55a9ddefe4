"""The job store: one small JSON record per job, a file under ``<data-dir>/jobs/``
or a row of the state database (``sql-gateway.state.url``).

Each record is a job's definition (statement, name, options, checkpoint,
savepoint) and its last status, rewritten atomically (a temporary file
renamed over the old one) on every change, so SHOW JOBS history survives a
gateway restart. Streaming jobs that can be started again (their record
keeps what that needs: ``resume``) come back RUNNING, to be resumed from
their checkpoints; other jobs that were not ended when the process died are
given back as FAILED: the process that ran them is gone.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from sparkgate.api.jobs import JobInfo, JobStatus
from sparkgate.service.state import FileRecords, Records, RecordTakenError

__all__ = ["RESTART_CAUSE", "SHUTDOWN_CAUSE", "JobStore", "StoredJob"]

log = logging.getLogger(__name__)

RESTART_CAUSE = "gateway restarted: the job was running when the gateway process ended"
SHUTDOWN_CAUSE = "gateway stopped: the job was running when the gateway shut down"
_VERSION = 1


class StoredJob:
    """A job record: its info plus what resuming it would need."""

    __slots__ = ("bounded_rows", "hooks", "info", "interrupted", "resume")

    def __init__(
        self,
        info: JobInfo,
        bounded_rows: int | None = None,
        hooks: list[dict[str, Any]] | None = None,
        resume: dict[str, Any] | None = None,
    ) -> None:
        self.info = info
        self.bounded_rows = bounded_rows
        # A streaming job's INSERTs and session, to start it again (service.job.job.Job).
        self.resume = resume
        # The job's durable hooks: {"kind": ..., "record": {...}} each.
        self.hooks = list(hooks or [])
        # Ended by a restart, its durable hooks not yet told: the process that ran
        # it is gone. Stored, so a crash during the clean-up repeats it.
        self.interrupted = False

    @property
    def resumable(self) -> bool:
        """A RUNNING streaming job that keeps what starting it again needs."""
        return (
            self.info.streaming
            and self.resume is not None
            and self.info.status is JobStatus.RUNNING
        )

    def to_json(self) -> dict[str, Any]:
        record = asdict(self.info)
        record["status"] = self.info.status.value
        record["options"] = dict(self.info.options)
        record["bounded_rows"] = self.bounded_rows
        record["hooks"] = self.hooks
        record["interrupted"] = self.interrupted
        record["resume"] = self.resume
        record["version"] = _VERSION
        return record

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> StoredJob:
        info = JobInfo(
            job_id=str(record["job_id"]),
            name=str(record["name"]),
            status=JobStatus(record["status"]),
            statement=str(record["statement"]),
            streaming=bool(record["streaming"]),
            start_time=float(record["start_time"]),
            end_time=None if record.get("end_time") is None else float(record["end_time"]),
            cause=record.get("cause"),
            checkpoint=record.get("checkpoint"),
            savepoint=record.get("savepoint"),
            restored_from=record.get("restored_from"),
            options={str(k): str(v) for k, v in (record.get("options") or {}).items()},
            user=record.get("user"),
        )
        rows = record.get("bounded_rows")
        hooks = [dict(h) for h in record.get("hooks") or () if isinstance(h, dict)]
        resume = record.get("resume")
        job = cls(
            info,
            None if rows is None else int(rows),
            hooks,
            dict(resume) if isinstance(resume, dict) else None,
        )
        job.interrupted = bool(record.get("interrupted"))
        return job


class JobStore:
    """Job records: one ``<job id>.json`` each in a directory, or rows of the state
    database (:mod:`sparkgate.service.state`)."""

    def __init__(self, records: Path | Records) -> None:
        self.records: Records = FileRecords(records) if isinstance(records, Path) else records
        #: Called with a job's id when another gateway of the service has taken it over.
        self.on_taken: Callable[[str], None] = lambda job_id: None

    def save(self, job: StoredJob) -> None:
        """Write one record atomically; a failure is logged, never raised to the job."""
        try:
            self.records.put(job.info.job_id, job.to_json())
        except RecordTakenError as exc:
            log.warning("Job %s: %s", job.info.job_id, exc)
            self.on_taken(job.info.job_id)
        except OSError as exc:
            log.warning("Could not store job %s: %s", job.info.job_id, exc)

    def delete(self, job_id: str) -> None:
        try:
            self.records.delete(job_id)
        except OSError as exc:
            log.warning("Could not remove job %s: %s", job_id, exc)

    def load(self) -> list[StoredJob]:
        """Every readable record; jobs found unended come back FAILED (and are saved
        so), but for streaming jobs that can be resumed: those stay RUNNING."""
        try:
            records = self.records.load()
        except OSError as exc:
            log.error("Could not read the job store: %s", exc)
            return []
        return self.recover(records)

    def recover(self, records: list[tuple[str, bytes]]) -> list[StoredJob]:
        """The jobs of ``records`` (this store's, or a dead gateway's just taken over),
        those left unended by the process that ran them ended as :meth:`load` says."""
        found = []
        now = time.time()
        for key, text in records:
            try:
                job = StoredJob.from_json(json.loads(text))
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("Skipping unreadable job record %s: %s", self.records.where(key), exc)
                continue
            if job.resume is not None and job.info.status is JobStatus.CANCELLING:
                # A stop the process died in: it ends as a stop without a savepoint.
                job.info = replace(job.info, status=JobStatus.CANCELED, end_time=now)
                self.save(job)
            elif not job.info.status.is_terminal and not job.resumable:
                job.info = replace(
                    job.info, status=JobStatus.FAILED, end_time=now, cause=RESTART_CAUSE
                )
                log.info("Job %s was running when the gateway ended: FAILED", job.info.job_id)
                job.interrupted = bool(job.hooks)
                self.save(job)
            found.append(job)
        return found
