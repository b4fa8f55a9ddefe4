"""Jobs: the job manager, its store under the data directory, and job status hooks."""

from __future__ import annotations

from sparkgate.service.job.job import Job, StreamStarter, query_exhausted
from sparkgate.service.job.manager import JobManager
from sparkgate.service.job.store import JobStore

__all__ = ["Job", "JobManager", "JobStore", "StreamStarter", "query_exhausted"]
