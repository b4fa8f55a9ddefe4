"""Live progress of a running statement: Spark stages and tasks, and the time taken.

The SQL client shows it on a status line while it waits for rows;
:class:`InterruptGuard` turns Ctrl-C during that wait into a flag the
waiting loop checks, so the operation is cancelled cleanly (its Spark jobs
stop through their job tag) instead of unwinding through a library call.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any

from sparkgate.api.service import OperationProgress

__all__ = ["InterruptGuard", "format_elapsed", "format_progress"]

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def format_elapsed(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    minutes, s = divmod(seconds, 60)
    hours, m = divmod(minutes, 60)
    return f"{hours}:{m:02d}:{s:02d}" if hours else f"{m:02d}:{s:02d}"


def format_progress(progress: OperationProgress | None, elapsed: float, tick: int = 0) -> str:
    """``⠙ Stages 1/3 · Tasks 120/200 (4 running) · 00:07 · Ctrl-C cancels``."""
    parts = [_SPINNER[tick % len(_SPINNER)] + " Running"]
    if progress is not None and progress.stages_total:
        parts = [
            _SPINNER[tick % len(_SPINNER)]
            + f" Stages {progress.stages_done}/{progress.stages_total}",
            f"Tasks {progress.tasks_done}/{progress.tasks_total}"
            + (f" ({progress.tasks_running} running)" if progress.tasks_running else ""),
        ]
        if progress.tasks_total:
            share = progress.tasks_done / progress.tasks_total
            filled = int(share * 20)
            parts.append("[" + "#" * filled + "." * (20 - filled) + f"] {share:4.0%}")
    parts.append(format_elapsed(elapsed))
    parts.append("Ctrl-C cancels")
    return " · ".join(parts)


class InterruptGuard:
    """While active, SIGINT sets :attr:`interrupted` instead of raising ``KeyboardInterrupt``.

    Only the main thread can own signal handlers; elsewhere the guard does
    nothing (and Ctrl-C keeps its default behaviour).
    """

    def __init__(self) -> None:
        self.interrupted = threading.Event()
        self._previous: Any = None
        self._installed = False

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        self.interrupted.set()

    def __enter__(self) -> InterruptGuard:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False
