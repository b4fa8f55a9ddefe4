"""Is the machine quiet? CPU taken by processes that are not the benchmark's.

Every timing of a run assumes the machine does nothing else. A
:class:`MachineMonitor` samples, every second in a thread, the CPU times of
every process (``psutil``), and splits the CPU used over the run between

- *ours*: the benchmark's process and all its descendants (the servers under
  test, their JVMs and Python workers, the JDBC clients, ``javac``), including
  those that outlived their parent;
- *kernel*: kernel threads (children of ``kthreadd``, pid 2), e.g. the
  softirq threads that carry loopback traffic for our own processes;
- *others*: everything else; the figure the quiet-machine check uses.

A process's CPU time is ``user + system`` plus the times of the children it
reaped (``children_user/system``), minus what was already counted for those
children while they were alive, so the CPU of short-lived processes (a
compiler under ``make``, a test's subprocess) is found in their parent when it
reaps them. Only a process that both starts and ends unseen between two
samples *and* whose parent is not seen either escapes; the machine-wide busy
CPU (``psutil.cpu_times()``) is recorded beside, so the part nobody accounts
for shows as ``unattributed_cpu_s``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "NOISY_CORE_SHARE",
    "MachineMonitor",
    "Mark",
    "is_noisy",
    "load_avg",
    "noisy_sources",
    "quiet_summary",
]

log = logging.getLogger(__name__)

#: A run is noisy when other processes took more than this share of one core,
#: averaged over the run (``--noisy-threshold``).
NOISY_CORE_SHARE = 0.10
#: Seconds between two samples of every process.
INTERVAL_S = 1.0
#: Offenders (by process name) kept in the JSON.
TOP = 5

_KTHREADD = 2
#: A process: (pid, create_time), so a reused pid is another process.
_Key = tuple[int, float]


def load_avg() -> float:
    """The 1-minute load average, rounded (0.0 where the OS has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return 0.0


@dataclass(frozen=True)
class Mark:
    """Cumulative counters at one moment, for figures over part of the run."""

    at: float
    others_s: float
    ours_s: float
    load: float


@dataclass
class _Proc:
    pid: int
    name: str
    ppid: int
    total: float  # user + system + children_user + children_system, last seen
    group: str  # "ours", "kernel" or "others"


@dataclass
class _Totals:
    ours: float = 0.0
    kernel: float = 0.0
    others: float = 0.0
    by_name: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    names_seen: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))


class MachineMonitor:
    """Samples every process's CPU time in a thread; :meth:`summary` at the end."""

    def __init__(self, interval_s: float = INTERVAL_S, root_pid: int | None = None) -> None:
        self._interval = interval_s
        self._root = root_pid or os.getpid()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="machine-monitor", daemon=True)
        self._procs: dict[_Key, _Proc] = {}
        self._ours: set[_Key] = set()
        self._totals = _Totals()
        self._started = 0.0
        self._ended: float | None = None
        self._cpu_start: Any = None
        self._cpu_end: Any = None
        self._samples = 0
        self.error: str | None = None

    # ------------------------------------------------------------------ life cycle

    def start(self) -> MachineMonitor:
        try:
            import psutil

            self._cpu_start = psutil.cpu_times()
            self._started = time.monotonic()
            self._sample(first=True)
        except Exception as exc:  # psutil missing or /proc unreadable: no guard
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("Cannot watch the machine's other processes: %s", self.error)
            return self
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._ended is not None:
            return
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        if self.error is None:
            with contextlib.suppress(Exception):
                import psutil

                self._sample(first=False)
                self._cpu_end = psutil.cpu_times()
        self._ended = time.monotonic()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._sample(first=False)
            except Exception:
                log.debug("Process sample failed", exc_info=True)

    # ------------------------------------------------------------------ sampling

    def _sample(self, *, first: bool) -> None:
        import psutil

        seen: dict[_Key, tuple[str, int, float]] = {}
        for proc in psutil.process_iter(["pid", "ppid", "name", "create_time", "cpu_times"]):
            info = proc.info
            times = info.get("cpu_times")
            if times is None or info.get("create_time") is None:
                continue  # vanished or not readable
            total = times.user + times.system
            total += getattr(times, "children_user", 0.0) + getattr(times, "children_system", 0.0)
            key = (int(info["pid"]), float(info["create_time"]))
            seen[key] = (str(info.get("name") or "?"), int(info.get("ppid") or 0), total)
        with self._lock:
            self._account(seen, first=first)
            self._samples += 1

    def _account(self, seen: dict[_Key, tuple[str, int, float]], *, first: bool) -> None:
        by_pid = {key[0]: key for key in seen}
        # Kernel threads are children of kthreadd (pid 2 outside a PID namespace).
        kthreadd = by_pid.get(_KTHREADD)
        kernel_root = _KTHREADD if kthreadd and seen[kthreadd][0] == "kthreadd" else None
        # Ours: descendants of the benchmark's process (and whatever once was).
        children: dict[int, list[int]] = defaultdict(list)
        for (pid, _ct), (_name, ppid, _total) in seen.items():
            children[ppid].append(pid)
        todo = [self._root]
        while todo:
            pid = todo.pop()
            key = by_pid.get(pid)
            if key is not None:
                self._ours.add(key)
            todo.extend(children.get(pid, ()))

        # Processes gone since the last sample: their parent's children_* times
        # take in their whole life when it reaps them; what was counted while
        # they lived is taken off the parent's next delta. A chain that ended
        # at once (a JVM under its launcher script) lands, summed, on the first
        # ancestor still alive.
        gone = {key: proc for key, proc in self._procs.items() if key not in seen}
        gone_pids = {key[0] for key in gone}
        gone_children: dict[int, list[_Proc]] = defaultdict(list)
        for proc in gone.values():
            gone_children[proc.ppid].append(proc)
        reaped: dict[int, float] = defaultdict(float)
        for top in gone.values():
            if top.ppid in gone_pids:
                continue  # counted with its gone parent
            credit, chain = 0.0, [top]
            while chain:
                ended = chain.pop()
                credit += ended.total
                chain.extend(gone_children.get(ended.pid, ()))
            reaped[top.ppid] += credit
        for key in gone:
            del self._procs[key]
            self._ours.discard(key)

        for key, (name, ppid, total) in seen.items():
            pid = key[0]
            if key in self._ours:
                group = "ours"
            elif kernel_root is not None and kernel_root in (pid, ppid):
                group = "kernel"
            else:
                group = "others"
            old = self._procs.get(key)
            if first:
                delta = 0.0  # the baseline
            elif old is None:
                delta = total  # started since the last sample: all its CPU is new
            else:
                delta = total - old.total
            delta = max(0.0, delta - reaped.pop(pid, 0.0))
            self._procs[key] = _Proc(pid, name, ppid, total, group)
            if delta <= 0.0:
                continue
            if group == "ours":
                self._totals.ours += delta
            elif group == "kernel":
                self._totals.kernel += delta
            else:
                self._totals.others += delta
                self._totals.by_name[name] += delta
                self._totals.names_seen[name].add(pid)

    # ------------------------------------------------------------------ figures

    def mark(self) -> Mark:
        with self._lock:
            return Mark(time.monotonic(), self._totals.others, self._totals.ours, load_avg())

    def since(self, mark: Mark) -> dict[str, Any]:
        """Load average before and after, and the other processes' CPU since ``mark``."""
        now = self.mark()
        wall = max(now.at - mark.at, 1e-9)
        out: dict[str, Any] = {"load_avg_start": mark.load, "load_avg_end": now.load}
        if self.error is None:
            other = now.others_s - mark.others_s
            out["other_cpu_s"] = round(other, 2)
            out["other_core_share"] = round(other / wall, 3)
        return out

    def summary(self, threshold: float = NOISY_CORE_SHARE) -> dict[str, Any]:
        """What the run's JSON keeps under ``quiet`` (call after :meth:`stop`)."""
        if self.error is not None:
            return {"error": self.error, "noisy": None, "threshold_core_share": threshold}
        end = self._ended if self._ended is not None else time.monotonic()
        wall = max(end - self._started, 1e-9)
        cores = os.cpu_count() or 1
        with self._lock:
            totals = self._totals
            top = sorted(totals.by_name.items(), key=lambda kv: kv[1], reverse=True)[:TOP]
            out: dict[str, Any] = {
                "wall_s": round(wall, 1),
                "cores": cores,
                "samples": self._samples,
                "interval_s": self._interval,
                "other_cpu_s": round(totals.others, 1),
                "other_core_share": round(totals.others / wall, 3),
                "other_machine_share": round(totals.others / (wall * cores), 3),
                "own_cpu_s": round(totals.ours, 1),
                "kernel_threads_cpu_s": round(totals.kernel, 1),
                "top": [
                    {
                        "name": name,
                        "cpu_s": round(cpu, 1),
                        "processes": len(totals.names_seen[name]),
                    }
                    for name, cpu in top
                    if cpu >= 0.05
                ],
                "threshold_core_share": threshold,
            }
        if self._cpu_start is not None and self._cpu_end is not None:
            a, b = self._cpu_start, self._cpu_end

            def delta(attr: str) -> float:
                return float(getattr(b, attr, 0.0) - getattr(a, attr, 0.0))

            busy = delta("user") + delta("nice") + delta("system")
            out["machine_busy_cpu_s"] = round(busy, 1)
            out["irq_cpu_s"] = round(delta("irq") + delta("softirq"), 1)
            out["steal_cpu_s"] = round(delta("steal"), 1)
            out["unattributed_cpu_s"] = round(busy - totals.ours - totals.others - totals.kernel, 1)
        out["noisy"] = out["other_core_share"] > threshold
        return out


def is_noisy(doc: dict[str, Any]) -> bool:
    """Whether the run (or any run merged into it) was marked noisy."""
    return bool(noisy_sources(doc))


def noisy_sources(doc: dict[str, Any]) -> list[str]:
    """One line per noisy run in ``doc`` (itself and the runs merged into it)."""
    lines: list[str] = []
    quiet = doc.get("quiet") or {}
    if quiet.get("noisy"):
        lines.append(f"the run of {doc.get('started_at', '?')}: {quiet_summary(quiet)}")
    for m in doc.get("merged", []):
        q = m.get("quiet") or {}
        if q.get("noisy"):
            which = ", ".join(m.get("workloads", []))
            lines.append(f"the run of {m.get('started_at', '?')} ({which}): {quiet_summary(q)}")
    return lines


def quiet_summary(quiet: dict[str, Any]) -> str:
    """Other processes' CPU in one phrase, with the top offenders."""
    if not quiet:
        return "not recorded"
    if quiet.get("error"):
        return f"not measured ({quiet['error']})"
    share = quiet.get("other_core_share", 0.0)
    text = (
        f"other processes took {quiet.get('other_cpu_s', 0):,.1f} CPU-s, "
        f"{share:.0%} of one core over {quiet.get('wall_s', 0):,.0f} s"
    )
    top = quiet.get("top") or []
    if top:
        named = ", ".join(
            f"{t['name']} {t['cpu_s']:,.1f} s"
            + (f" ({t['processes']} processes)" if t.get("processes", 1) > 1 else "")
            for t in top
        )
        text += f" (top: {named})"
    return text
