"""Resident memory of a server: the sum of RSS over its process tree, or by role
(the root Python process, its engine JVM, the JVM's Python workers)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil

__all__ = [
    "ROLES",
    "PeakSampler",
    "RoleSampler",
    "jvm_max_heap",
    "process_rss",
    "role_cpu",
    "role_rss",
    "tree_rss",
]

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


#: The parts of a gateway's process tree reported apart.
ROLES = ("root", "engine", "workers", "tree")


@dataclass(frozen=True)
class _Tree:
    root: int
    exclude: frozenset[int]


def _excluded(exclude: Iterable[int]) -> frozenset[int]:
    import psutil

    pids: set[int] = set()
    for pid in exclude:
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            pids.add(pid)
            pids.update(child.pid for child in proc.children(recursive=True))
    return frozenset(pids)


def role_rss(root: int, exclude: Iterable[int] = ()) -> dict[str, int]:
    """Bytes of RSS of ``root`` alone, of its engine JVM (the first ``java``
    descendant outside ``exclude``), of the JVM's descendants (PySpark's Python
    workers) and of the whole tree."""
    return _sample(_Tree(root, _excluded(exclude)))


def jvm_max_heap(root: int, exclude: Iterable[int] = ()) -> str | None:
    """The ``-Xmx`` of the engine JVM under ``root`` (its driver memory), if found."""
    import psutil

    jvm = _jvm(_members(_Tree(root, _excluded(exclude))))
    if jvm is None:
        return None
    try:
        args = jvm.cmdline()
    except psutil.Error:
        return None
    return next((a[len("-Xmx") :] for a in reversed(args) if a.startswith("-Xmx")), None)


def _members(tree: _Tree) -> list[psutil.Process]:
    """The descendants of the tree's root, without the excluded trees."""
    import psutil

    try:
        children = psutil.Process(tree.root).children(recursive=True)
    except psutil.Error:
        return []
    return [p for p in children if p.pid not in tree.exclude]


def _jvm(members: list[psutil.Process]) -> psutil.Process | None:
    return next((p for p in members if _name(p) == "java"), None)


def _sample(tree: _Tree) -> dict[str, int]:
    import psutil

    out = dict.fromkeys(ROLES, 0)
    members = _members(tree)
    out["root"] = process_rss(tree.root)
    out["tree"] = out["root"] + sum(_rss(p) for p in members)
    jvm = _jvm(members)
    if jvm is not None:
        out["engine"] = _rss(jvm)
        with contextlib.suppress(psutil.Error):
            out["workers"] = sum(_rss(p) for p in jvm.children(recursive=True))
    return out


#: CPU roles of a fetch: the client, the server's root process, its engine JVM, the
#: JVM's Python workers.
CPU_ROLES = ("client", "root", "engine", "workers")


def role_cpu(root: int, exclude: Iterable[int] = ()) -> dict[str, float]:
    """CPU seconds used so far by ``root`` alone, by its engine JVM (``root`` itself
    when it is one: Spark's Thrift server) and by the JVM's descendants.

    Each process counts the children it reaped, so a Python worker that ended
    between two readings is still found in the daemon that forked it.
    """
    import psutil

    out = dict.fromkeys(CPU_ROLES[1:], 0.0)
    try:
        top = psutil.Process(root)
    except psutil.Error:
        return out
    if _name(top) == "java":
        jvm: psutil.Process | None = top
    else:
        out["root"] = _cpu(top)
        jvm = _jvm(_members(_Tree(root, _excluded(exclude))))
    if jvm is not None:
        out["engine"] = _cpu(jvm)
        with contextlib.suppress(psutil.Error):
            out["workers"] = sum(_cpu(p) for p in jvm.children(recursive=True))
    return out


def _cpu(proc: psutil.Process) -> float:
    import psutil

    try:
        t = proc.cpu_times()
    except psutil.Error:
        return 0.0
    return float(t.user + t.system + t.children_user + t.children_system)


def _rss(proc: psutil.Process) -> int:
    import psutil

    try:
        return int(proc.memory_info().rss)
    except psutil.Error:
        return 0


def _name(proc: psutil.Process) -> str:
    import psutil

    try:
        return str(proc.name())
    except psutil.Error:
        return ""


class RoleSampler:
    """Samples :func:`role_rss` in a thread every ``interval`` s; keeps each role's peak.

    The other servers' trees (``exclude``) are resolved once, at the start: they
    do not change during a measurement, and walking them every 100 ms would
    cost the machine more than the sample itself.
    """

    def __init__(self, root: int, exclude: Iterable[int] = (), interval: float = 0.1) -> None:
        self._tree = _Tree(root, _excluded(exclude))
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-roles", daemon=True)
        self.peak = dict.fromkeys(ROLES, 0)
        self.samples = 0

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for role, value in _sample(self._tree).items():
                    self.peak[role] = max(self.peak[role], value)
                self.samples += 1
            except Exception:
                log.debug("RSS sample failed", exc_info=True)
            self._stop.wait(self._interval)

    def __enter__(self) -> RoleSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
