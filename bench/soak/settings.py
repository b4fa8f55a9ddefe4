"""What a soak run does and for how long: the full run and ``--quick``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_OUTPUT",
    "QUICK_OUTPUT",
    "SoakSettings",
    "gateway_session_defaults",
    "parse_duration",
]

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUTPUT = REPO / "bench" / "results" / "soak.json"
# The quick run writes elsewhere so it never replaces the 30-minute figures.
QUICK_OUTPUT = REPO / "bench" / "results" / "soak-quick.json"

_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h)?\s*$")


def parse_duration(text: str) -> float:
    """``30m``, ``90s``, ``1.5h`` or plain seconds, in seconds."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"not a duration: {text!r} (examples: 30m, 90s, 1h)")
    return float(match.group(1)) * _UNITS[match.group(2) or ""]


def gateway_session_defaults() -> tuple[float, float]:
    """The gateway's default idle timeout and expiry check interval, in seconds.

    Read from sparkgate's own option declarations so the expiry checks follow
    a change of the defaults.
    """
    from sparkgate.service import options

    return (
        options.SESSION_IDLE_TIMEOUT.default.total_seconds(),
        options.SESSION_CHECK_INTERVAL.default.total_seconds(),
    )


@dataclass(frozen=True)
class SoakSettings:
    """Every knob of a run; :meth:`full` and :meth:`quick` are the two presets."""

    quick: bool
    duration_s: float
    out: Path
    spark_master: str = "local[2]"
    json_readers: int = 2
    arrow_readers: int = 1
    hs2_clients: int = 2
    think_s: float = 1.0  # a reader's pause between statements
    sample_every_s: float = 5.0
    progress_every_s: float = 60.0
    # A full collection of the engine's heap, then its size: the live heap, whose
    # slope says whether anything accumulates (RSS alone also grows with the heap).
    heap_every_s: float = 60.0
    hostile_every_s: float = 60.0
    big_first_after_s: float = 120.0
    big_every_s: float = 300.0  # math.inf: once
    big_rows: int = 50_000_000
    churn_every_s: float = 10.0
    stream_check_every_s: float = 10.0
    stream_rows_per_second: int = 100
    # None: the gateway's default (not passed on its command line).
    idle_timeout_s: float | None = None
    check_interval_s: float | None = None
    # How long in-flight work (a 50 M-row read) may take to finish after the duration.
    drain_s: float = 600.0
    start_timeout_s: float = 600.0
    # When (seconds into the run) the soak SIGKILLs the engine JVM once, as a crash
    # would, for the gateway to heal (not while a big SELECT runs: it waits for its
    # end); None: never. How long the engine may take to serve again.
    kill_engine_at_s: float | None = None
    engine_back_timeout_s: float = 300.0

    @classmethod
    def full(cls, duration_s: float, out: Path | None) -> SoakSettings:
        """The engine is killed a third of the way in: late enough that the first
        sessions left to expire have (a session moved onto a new engine counts as
        used then), early enough that the second half, over which the memory
        slopes are taken, runs on the new engine only."""
        return cls(
            quick=False,
            duration_s=duration_s,
            out=out or DEFAULT_OUTPUT,
            kill_engine_at_s=duration_s / 3,
        )

    @classmethod
    def quick_run(cls, duration_s: float, out: Path | None) -> SoakSettings:
        """A few minutes: the same clients, the big SELECT once, sessions that expire.

        The default idle timeout (5 min) is longer than the run, so sessions
        would never expire in it: the quick run alone shortens it, to 90 s (a
        session must also outlive its longest single call: a HiveServer2
        FetchResults waits for the first row without touching the session). The
        engine is killed two thirds of the way in (2 min): after the big SELECT
        and after the first sessions left to expire have expired (those still
        open then are moved onto the new engine, which counts as a use, and
        would not expire within the run), with a minute left for the clients
        and the streaming job on the new engine.
        """
        return cls(
            quick=True,
            duration_s=duration_s,
            out=out or QUICK_OUTPUT,
            hostile_every_s=20.0,
            heap_every_s=60.0,
            big_first_after_s=min(60.0, duration_s / 3),
            big_every_s=math.inf,
            churn_every_s=5.0,
            idle_timeout_s=90.0,
            check_interval_s=5.0,
            drain_s=420.0,
            kill_engine_at_s=duration_s * 2 / 3,
        )

    def session_expiry(self) -> tuple[float, float]:
        """The idle timeout and check interval the gateway runs with, in seconds."""
        idle, check = gateway_session_defaults()
        return (
            idle if self.idle_timeout_s is None else self.idle_timeout_s,
            check if self.check_interval_s is None else self.check_interval_s,
        )

    def gateway_options(self) -> dict[str, str]:
        """Options beyond ports, data dir and endpoints: as few as possible."""
        options = {"spark.master": self.spark_master}
        if self.idle_timeout_s is not None:
            options["sql-gateway.session.idle-timeout"] = f"{self.idle_timeout_s:g} s"
        if self.check_interval_s is not None:
            options["sql-gateway.session.check-interval"] = f"{self.check_interval_s:g} s"
        return options
