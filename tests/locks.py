"""A lock between test processes (pytest-xdist workers) for one-time set-up
that writes a shared cache: client virtualenvs, Maven downloads, apt-get."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["cache_dir", "exclusive"]


def cache_dir() -> Path:
    """Where the tests keep what they fetch once (``$XDG_CACHE_HOME/sparkgate-tests``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sparkgate-tests"


@contextlib.contextmanager
def exclusive(name: str) -> Iterator[None]:
    """Hold the machine-wide lock ``name`` (an ``flock`` on a file of the cache dir)."""
    lock_file = cache_dir() / "locks" / f"{name}.lock"
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with lock_file.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
