"""Resident memory of a server: the sum of RSS over its process tree."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterable

__all__ = ["PeakSampler", "process_rss", "tree_rss"]

log = logging.getLogger(__name__)

MIB = 1024 * 1024


def tree_rss(roots: Iterable[int], exclude: Iterable[int] = ()) -> int:
    """Bytes of RSS summed over ``roots`` and all their descendants, leaving out
    the trees rooted at ``exclude`` (other servers started by this process)."""
    import psutil

    excluded: set[int] = set()
    for pid in exclude:
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            excluded.add(pid)
            excluded.update(child.pid for child in proc.children(recursive=True))
    seen: set[int] = set()
    total = 0
    for pid in roots:
        try:
            root = psutil.Process(pid)
            members = [root, *root.children(recursive=True)]
        except psutil.Error:
            continue
        for proc in members:
            if proc.pid in seen or proc.pid in excluded:
                continue
            seen.add(proc.pid)
            with contextlib.suppress(psutil.Error):
                total += proc.memory_info().rss
    return total


def process_rss(pid: int) -> int:
    """Bytes of RSS of one process (0 if it is gone)."""
    import psutil

    try:
        return int(psutil.Process(pid).memory_info().rss)
    except psutil.Error:
        return 0


class PeakSampler:
    """Samples :func:`tree_rss` in a thread every ``interval`` s; keeps the peak."""

    def __init__(
        self, roots: list[int], exclude: list[int] | None = None, interval: float = 0.1
    ) -> None:
        self._roots = roots
        self._exclude = exclude or []
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self.peak = 0
        #: Peak RSS of the first root alone (a gateway's Python process, without its JVM).
        self.root_peak = 0
        self.samples = 0

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, tree_rss(self._roots, self._exclude))
                if self._roots:
                    self.root_peak = max(self.root_peak, process_rss(self._roots[0]))
                self.samples += 1
            except Exception:
                log.debug("RSS sample failed", exc_info=True)
            self._stop.wait(self._interval)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
