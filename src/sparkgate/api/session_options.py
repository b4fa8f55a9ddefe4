"""Session options the gateway, its endpoints and the SQL client all read (Flink's keys).

Declared once, here in the contracts layer, because every side needs them: the
service runs statements by them, the HiveServer2 endpoint sets its session
defaults with them, and the SQL client decides whether to wait for a job.
"""

from __future__ import annotations

from sparkgate.api.config import bool_option, choice_option

__all__ = ["DML_SYNC", "RUNTIME_MODE"]

RUNTIME_MODE = choice_option(
    "execution.runtime-mode",
    "batch",
    "'batch' or 'streaming'. In streaming mode, queries over connector tables run as "
    "Structured Streaming queries whose results are changelogs, and INSERTs become "
    "long-running jobs.",
    ("batch", "streaming"),
)

DML_SYNC = bool_option(
    "table.dml-sync",
    True,
    "Whether a batch INSERT waits for its job to finish. False makes it return its job id "
    "at once (Flink's default); streaming INSERTs never wait.",
)
