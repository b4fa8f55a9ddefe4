"""The client's output: everything the user sees goes through one :class:`Terminal`.

It writes to a text stream (the real terminal, or a ``StringIO`` in tests),
colours ``[INFO]``/``[ERROR]`` only on an interactive terminal, and keeps a
transient status line (progress) that is erased before real output.
"""

from __future__ import annotations

import shutil
import sys
import threading
from typing import TextIO

from prompt_toolkit.utils import get_cwidth

__all__ = ["Terminal", "display_width"]

_BOLD_BLUE = "\x1b[1;34m"
_BOLD_RED = "\x1b[1;31m"
_BOLD_YELLOW = "\x1b[1;33m"
_DIM = "\x1b[2m"
_RESET = "\x1b[0m"
_ERASE_LINE = "\r\x1b[2K"


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes (wide East Asian characters count twice)."""
    if text.isascii():
        return len(text)
    return sum(get_cwidth(ch) for ch in text)


class Terminal:
    """Where the client writes. ``interactive`` means a human is watching a TTY."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        interactive: bool | None = None,
        color: bool | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stdout
        is_tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interactive = is_tty if interactive is None else interactive
        self.color = self.interactive if color is None else color
        self._status_shown = False
        self._lock = threading.Lock()

    # -- plain output ---------------------------------------------------------------
    def write(self, text: str) -> None:
        with self._lock:
            self._erase_status()
            self.stream.write(text)

    def line(self, text: str = "") -> None:
        self.write(text + "\n")

    def flush(self) -> None:
        self.stream.flush()

    @property
    def width(self) -> int:
        return shutil.get_terminal_size((100, 24)).columns

    # -- messages ---------------------------------------------------------------
    def _styled(self, style: str, text: str) -> str:
        return f"{style}{text}{_RESET}" if self.color else text

    def info(self, message: str) -> None:
        self.line(self._styled(_BOLD_BLUE, "[INFO] " + message))

    def warning(self, message: str) -> None:
        self.line(self._styled(_BOLD_YELLOW, "[WARNING] " + message))

    def error(self, message: str, detail: str | None = None) -> None:
        self.line(self._styled(_BOLD_RED, "[ERROR] " + message))
        if detail:
            self.line(detail)

    def dim(self, text: str) -> str:
        return self._styled(_DIM, text)

    def clear_screen(self) -> None:
        if self.interactive:
            self.write("\x1b[2J\x1b[H")
            self.flush()

    # -- the status line ----------------------------------------------------------
    def status(self, text: str) -> None:
        """Show ``text`` on a line that the next output replaces (TTY only)."""
        if not self.interactive:
            return
        with self._lock:
            width = max(self.width - 1, 10)
            if display_width(text) > width:
                text = text[:width]
            self.stream.write(_ERASE_LINE + self._styled(_DIM, text))
            self.stream.flush()
            self._status_shown = True

    def clear_status(self) -> None:
        with self._lock:
            self._erase_status()
            self.stream.flush()

    def _erase_status(self) -> None:
        if self._status_shown:
            self.stream.write(_ERASE_LINE)
            self._status_shown = False
