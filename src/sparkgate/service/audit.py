"""The audit log: who did what, from where, with what outcome.

One JSON object per line in ``<data-dir>/log/audit.log``, rotated by size
(``sql-gateway.audit.*``). Events:

- ``login-refused``: ``user``, ``address``, ``reason`` (never the password);
- ``session-opened`` / ``session-closed``: ``session``, ``user``, ``address``;
- ``statement``: as it is submitted, before it runs: ``session``,
  ``operation``, ``user``, ``address``, ``kind``, ``statement`` (secrets
  masked);
- ``statement-closed``: when its operation is closed (by the client, or with its
  session): ``operation``, ``session``, ``user``, ``outcome`` (the status it
  had: ``FINISHED``, ``ERROR``, ``CANCELED``, ``TIMEOUT``, or ``RUNNING`` when
  closed early), ``error`` (its first line), ``rows`` (handed to the client),
  ``duration_ms`` (from start to end, or to the close).

Every record has ``ts`` (UTC, ISO 8601 with milliseconds) and ``event``. The
log has its own file handler, not the gateway's loggers: its lines go nowhere
else and a logging configuration cannot silence them.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sparkgate.sql.secrets import mask_secrets

__all__ = ["AuditLog"]

log = logging.getLogger(__name__)


class AuditLog:
    """Appends audit records; :meth:`off` makes one that records nothing."""

    def __init__(self, path: Path | None, max_bytes: int = 100 * 1024 * 1024, backups: int = 10):
        self.path = path
        self._handler: logging.Handler | None = None
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._handler = logging.handlers.RotatingFileHandler(
                path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8", delay=True
            )
            self._handler.setFormatter(logging.Formatter("%(message)s"))

    @classmethod
    def off(cls) -> AuditLog:
        return cls(None)

    def record(self, event: str, **fields: Any) -> None:
        """Append one record; ``None`` fields are left out."""
        handler = self._handler
        if handler is None:
            return
        now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        body = {"ts": now, "event": event}
        body.update({k: v for k, v in fields.items() if v is not None})
        line = json.dumps(body, ensure_ascii=False, default=str)
        record = logging.LogRecord("sparkgate.audit", logging.INFO, "", 0, line, None, None)
        try:
            handler.handle(record)
        except Exception:  # never fail the statement being audited
            log.warning("Could not write the audit log %s", self.path, exc_info=True)

    def statement(self, text: str, **fields: Any) -> None:
        self.record("statement", statement=mask_secrets(text), **fields)

    def close(self) -> None:
        handler, self._handler = self._handler, None
        if handler is not None:
            handler.close()
