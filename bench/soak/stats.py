"""Everything the clients and the sampler count, behind one lock."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any

from bench.soak.errors import Failure

__all__ = ["BigRead", "EngineKill", "Recorder", "Sample"]

log = logging.getLogger(__name__)

_DETAILS_KEPT = 50  # the first problems of each sort, with their text
_LOGGED_PER_KIND = 3  # unexpected failures logged as they happen, per kind
# After the engine serves again, answers to what was cut off at its death still come
# in (a reader fetching the rest of a result, a retry after Retry-After).
RESTART_GRACE_S = 30.0


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {"count": len(ordered), "p50": at(0.5), "p95": at(0.95), "max": round(ordered[-1], 2)}


@dataclass(frozen=True)
class Sample:
    """One look at the gateway: memory (MB) and health, ``t_s`` seconds into the run."""

    t_s: float
    gateway_mb: float | None
    engine_mb: float | None
    workers_mb: float | None
    engine_pids: tuple[int, ...]
    ready: str  # UP, DOWN, RESTARTING, STARTING, or unreachable
    restarts: int | None
    # The engine JVM's heap in use just after a full collection (only some samples).
    engine_heap_mb: float | None = None


@dataclass(frozen=True)
class BigRead:
    """One 50 M-row SELECT read to the end (or not)."""

    t_s: float
    rows: int
    seconds: float
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class EngineKill:
    """The soak's planned SIGKILL of the engine JVM, and the engine that replaced it."""

    t_s: float  # seconds into the run
    pid: int
    restarts_before: int | None
    back_after_s: float | None = None  # None: not serving again in time
    new_pid: int | None = None


@dataclass
class _Counts:
    served: Counter[str] = field(default_factory=Counter)
    verified: Counter[str] = field(default_factory=Counter)
    rows_verified: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    # The documented answers of a restarting engine, while it restarts.
    expected_during_restart: Counter[str] = field(default_factory=Counter)
    unexpected_5xx: Counter[str] = field(default_factory=Counter)
    unexpected_hs2: Counter[str] = field(default_factory=Counter)
    unexpected_other: Counter[str] = field(default_factory=Counter)
    events: Counter[str] = field(default_factory=Counter)


class Recorder:
    """Thread-safe counters, problem lists and samples of one run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = _Counts()
        self._problems: dict[str, list[str]] = {}
        self._latencies: dict[str, list[float]] = {}
        self.samples: list[Sample] = []
        self.big_reads: list[BigRead] = []
        self.engine_kills: list[EngineKill] = []
        # Planned engine restarts as [killed, serving again] (monotonic; None: not yet).
        self._restarts: list[list[float | None]] = []

    def served(self, kind: str, count: int = 1, seconds: float | None = None) -> None:
        """``count`` statements of a ``kind`` of client answered as they should be.

        ``seconds``: how long one took from submit to the end of its result.
        """
        with self._lock:
            self._counts.served[kind] += count
            if seconds is not None:
                self._latencies.setdefault(kind, []).append(seconds)

    def verified(self, kind: str, rows: int) -> None:
        """A result read to the end whose rows all matched."""
        with self._lock:
            self._counts.verified[kind] += 1
            self._counts.rows_verified[kind] += rows

    def event(self, name: str, count: int = 1) -> None:
        """Anything else worth a count (sessions expired, job checks, refusals, ...)."""
        with self._lock:
            self._counts.events[name] += count

    def problem(self, sort: str, detail: str) -> None:
        """A failed check: ``lost`` results, ``harmful`` statements that ran, ..."""
        with self._lock:
            details = self._problems.setdefault(sort, [])
            self._counts.events[f"problem:{sort}"] += 1
            if len(details) < _DETAILS_KEPT:
                details.append(detail)

    def restart_began(self) -> None:
        """The soak killed the engine: its documented answers are expected from now."""
        with self._lock:
            self._restarts.append([time.monotonic(), None])

    def restart_ended(self) -> None:
        """The engine serves again: its answers stay expected for ``RESTART_GRACE_S``."""
        with self._lock:
            if self._restarts and self._restarts[-1][1] is None:
                self._restarts[-1][1] = time.monotonic()

    def engine_kill(self, kill: EngineKill) -> None:
        with self._lock:
            self.engine_kills.append(kill)

    def _expected(self, failure: Failure, now: float) -> bool:
        """Whether ``failure`` is what a client is promised during a planned restart:
        the 503 (REST, with Retry-After) or error status (HiveServer2) saying the engine
        is down, restarting or stopped under the statement, from the kill until a grace
        after the engine serves again; a session lost with the killed engine, any time
        after the kill. The same answers at other times are unexpected."""
        if failure.session_lost:
            return any(start is not None and start <= now for start, _ in self._restarts)
        if not failure.engine_unavailable:
            return False
        return any(
            start is not None
            and start <= now <= (math.inf if end is None else end + RESTART_GRACE_S)
            for start, end in self._restarts
        )

    def failure(self, client: str, failure: Failure) -> None:
        """A request that failed; documented engine-restart answers during a planned
        restart are expected, every other failure is not."""
        now = time.monotonic()
        with self._lock:
            self._counts.errors[failure.kind] += 1
            seen = self._counts.errors[failure.kind]
            expected = self._expected(failure, now)
            if expected:
                self._counts.expected_during_restart[failure.kind] += 1
            elif failure.channel == "REST" and failure.server_error:
                self._counts.unexpected_5xx[failure.kind] += 1
            elif failure.channel == "HS2":
                self._counts.unexpected_hs2[failure.kind] += 1
            else:
                self._counts.unexpected_other[failure.kind] += 1
        if not expected:
            self.problem("unexpected error", f"{client}: {failure}"[:2000])
            if seen <= _LOGGED_PER_KIND:
                log.warning("%s: %s", client, str(failure)[:1000])

    def sample(self, sample: Sample) -> None:
        with self._lock:
            self.samples.append(sample)

    def big_read(self, read: BigRead) -> None:
        with self._lock:
            self.big_reads.append(read)

    def count(self, name: str) -> int:
        with self._lock:
            return self._counts.events[name]

    def totals(self) -> dict[str, int]:
        """The figures of the progress line."""
        with self._lock:
            c = self._counts
            return {
                "served": sum(c.served.values()),
                "verified": sum(c.verified.values()),
                "lost": c.events["problem:lost"],
                "errors": sum(c.errors.values()),
                "unexpected_5xx": sum(c.unexpected_5xx.values()),
                "unexpected_hs2": sum(c.unexpected_hs2.values()),
            }

    def snapshot(self) -> dict[str, Any]:
        """Every count and problem, as plain data for the report."""
        with self._lock:
            # Not dataclasses.asdict: it rebuilds a Counter from its items, counting them.
            counts = {
                f.name: dict(sorted(getattr(self._counts, f.name).items()))
                for f in fields(self._counts)
            }
            return {
                **counts,
                "problems": {k: list(v) for k, v in self._problems.items()},
                "latency_s": {k: _percentiles(v) for k, v in sorted(self._latencies.items())},
                "samples": list(self.samples),
                "big_reads": list(self.big_reads),
                "engine_kills": list(self.engine_kills),
            }
