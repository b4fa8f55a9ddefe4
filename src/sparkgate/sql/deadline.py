"""A time limit on parsing one statement, checked by the parser's loops.

The gateway's parser is plain Python running on the caller's thread: nothing
can stop it from outside, so its loops call :func:`check_deadline` now and
then (every :data:`CHECK_EVERY` tokens) and it raises once the time is up.
The deadline is a context variable set around one parse with
:func:`parse_deadline`, so it needs no parameter threaded through every
function of the lexer, the splitter and the parsers; without one a check
costs one lookup.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from sparkgate.api.errors import StatementError

__all__ = ["CHECK_EVERY", "ParseTimeoutError", "check_deadline", "parse_deadline"]

CHECK_EVERY = 4096
"""Loop steps between two checks: a check is ~100 ns, a step ~1 µs."""


class ParseTimeoutError(StatementError):
    """Parsing a statement ran past its time limit; the message names the option
    that sets the limit.

    A :class:`~sparkgate.api.errors.StatementError` (REST 400 where the
    statement is refused up front), deliberately not a ``SqlParseError``:
    callers that catch parse errors to try another reading, or to report an
    incomplete statement, must not take a timeout for one.
    """


@dataclass(frozen=True, slots=True)
class _Deadline:
    at: float  # time.monotonic()
    message: str


_current: ContextVar[_Deadline | None] = ContextVar("sparkgate_parse_deadline", default=None)


@contextmanager
def parse_deadline(seconds: float | None, message: str) -> Iterator[None]:
    """Parsing in the block must end within ``seconds`` (None or <= 0: no limit),
    else :func:`check_deadline` raises :class:`ParseTimeoutError` with ``message``.

    An enclosing deadline that is earlier stays in force.
    """
    outer = _current.get()
    if seconds is None or seconds <= 0:
        yield
        return
    deadline = _Deadline(time.monotonic() + seconds, message)
    if outer is not None and outer.at <= deadline.at:
        deadline = outer
    token = _current.set(deadline)
    try:
        yield
    finally:
        _current.reset(token)


def check_deadline() -> None:
    """Raise :class:`ParseTimeoutError` when the current parse is past its deadline."""
    deadline = _current.get()
    if deadline is not None and time.monotonic() > deadline.at:
        raise ParseTimeoutError(deadline.message)
