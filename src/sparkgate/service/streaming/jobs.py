"""Moved to :mod:`sparkgate.service.job`; these names stay importable from here."""

from __future__ import annotations

from sparkgate.api.jobs import JobStatus
from sparkgate.service.job.job import Job, StreamStarter, query_exhausted
from sparkgate.service.job.registry import JobRegistry

__all__ = ["Job", "JobRegistry", "JobStatus", "StreamStarter", "query_exhausted"]
