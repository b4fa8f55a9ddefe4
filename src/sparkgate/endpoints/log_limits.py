"""At most one log line per kind of connection failure per interval.

A client that fails its connections in a loop (a port scanner, a health check
speaking the wrong protocol, a flood of resets) made one log line or more per
connection: ~20k refused REST sockets wrote 67k lines. A
:class:`RateLimitFilter` on each logger that reports connection-level failures
lets the first record of a kind through, counts the ones that follow, and
when :data:`INTERVAL_S` has passed logs one line for them: the last one's
message with ``(and N more in the last 60 s)``. A kind of *expected* failure
(the client's doing: a reset, a bad request, a refused handshake) goes out at
WARNING at most and without a traceback; an unexpected one keeps its level,
and its first record keeps its traceback.

Both endpoints use it for their own loggers (and the REST endpoint for
uvicorn's and asyncio's); the filters are one per logger and process, as the
loggers are.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["INTERVAL_S", "Kind", "RateLimitFilter", "flush_all", "limit"]

INTERVAL_S = 60.0
"""The interval: at most one line per kind in it."""

# Marks the summary record the filter logs itself, so it lets it pass.
_SUMMARY = "_sparkgate_rate_limit_summary"


@dataclass(frozen=True)
class Kind:
    """The records of a logger whose message template starts with ``prefix``.

    ``expected``: the client's doing, not the gateway's fault; its records go
    out at WARNING at most, without traceback.
    """

    prefix: str
    expected: bool = True


@dataclass
class _Window:
    opened: float
    ends: float
    suppressed: int = 0
    last: logging.LogRecord | None = None
    timer: threading.Timer | None = None


def _one_line(record: logging.LogRecord) -> str:
    """The record's message on one line, with its exception's, instead of a traceback."""
    lines = record.getMessage().splitlines()
    text = lines[0] if lines else ""
    exc = record.exc_info[1] if record.exc_info else None
    if exc is not None:
        text = f"{text}: {type(exc).__name__}: {exc}"
    return text


def _tame(record: logging.LogRecord) -> None:
    """An expected failure: WARNING at most, one line, no traceback."""
    if record.levelno > logging.WARNING:
        record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
    record.msg, record.args = _one_line(record), None
    record.exc_info = record.exc_text = None


class RateLimitFilter(logging.Filter):
    """Lets one record per :class:`Kind` through per ``interval_s``; see the module."""

    def __init__(self, kinds: Iterable[Kind] = (), interval_s: float = INTERVAL_S) -> None:
        super().__init__()
        self.interval_s = interval_s
        self._kinds: dict[str, Kind] = {}
        self._windows: dict[str, _Window] = {}
        self._lock = threading.Lock()
        self.add(kinds)

    def add(self, kinds: Iterable[Kind]) -> None:
        with self._lock:
            self._kinds.update((kind.prefix, kind) for kind in kinds)

    def _kind(self, record: logging.LogRecord) -> Kind | None:
        template = str(record.msg)
        return next((k for k in self._kinds.values() if template.startswith(k.prefix)), None)

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, _SUMMARY, False):
            return True
        kind = self._kind(record)
        if kind is None:
            return True
        if kind.expected:
            _tame(record)
        now = time.monotonic()
        with self._lock:
            window = self._windows.get(kind.prefix)
            if window is not None and now < window.ends:
                window.suppressed += 1
                window.last = record
                if window.timer is None:
                    window.timer = threading.Timer(
                        window.ends - now, self._summarize, (kind.prefix, window)
                    )
                    window.timer.daemon = True
                    window.timer.start()
                return False
            # A new window; this record also stands for what the last one held back
            # when it comes before that window's timer.
            self._windows[kind.prefix] = _Window(now, now + self.interval_s)
            if window is not None and window.timer is not None:
                window.timer.cancel()
        if window is not None and window.suppressed:
            record.msg, record.args = record.getMessage(), None
            record.msg += _more(window.suppressed, now - window.opened)
        return True

    def _summarize(self, prefix: str, window: _Window, *, reset: bool = False) -> None:
        """Log the line for the records ``window`` held back; it opens the next window
        (``reset``: no next window, the next record goes out at once)."""
        now = time.monotonic()
        with self._lock:
            if self._windows.get(prefix) is not window:
                return  # a record after the window's end logged the count already
            del self._windows[prefix]
            if window.timer is not None:
                window.timer.cancel()
            if window.last is None:
                return
            if not reset:
                self._windows[prefix] = _Window(now, now + self.interval_s)
        record = window.last
        summary = logging.makeLogRecord(record.__dict__)
        summary.msg, summary.args = _one_line(record), None
        summary.exc_info = summary.exc_text = None
        if window.suppressed > 1:
            summary.msg += _more(window.suppressed - 1, now - window.opened)
        setattr(summary, _SUMMARY, True)
        logging.getLogger(record.name).handle(summary)

    def flush(self) -> None:
        """Log what is held back now and start afresh (an endpoint stopping)."""
        with self._lock:
            windows = list(self._windows.items())
        for prefix, window in windows:
            self._summarize(prefix, window, reset=True)


def _more(count: int, seconds: float) -> str:
    return f" (and {count} more in the last {max(1, round(seconds))} s)"


_filters: dict[str, RateLimitFilter] = {}
_filters_lock = threading.Lock()


def limit(logger_name: str, kinds: Iterable[Kind]) -> RateLimitFilter:
    """Rate-limit ``kinds`` of records on the logger ``logger_name``: its one filter,
    installed on first use and kept for the process."""
    with _filters_lock:
        found = _filters.get(logger_name)
        if found is None:
            found = _filters[logger_name] = RateLimitFilter()
            logging.getLogger(logger_name).addFilter(found)
        found.add(kinds)
        return found


def flush_all(logger_names: Iterable[str]) -> None:
    """:meth:`RateLimitFilter.flush` of the filters on ``logger_names``."""
    with _filters_lock:
        found = [_filters[name] for name in logger_names if name in _filters]
    for rate_filter in found:
        rate_filter.flush()
