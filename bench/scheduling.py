"""The ``fair_sharing`` workload: short queries of one session while another
session's long scan holds the cores.

Under Spark's FIFO scheduler a job waits until every task of the jobs before
it has started, so a short query queues behind the scan; the gateway's
default is FAIR with a pool per session, where it waits only for one running
task of the scan to end. Measured on the run's REST gateway (FAIR, the
default), on a second gateway started with ``spark.scheduler.mode=FIFO``, on
sparkgate's HiveServer2 endpoint (FAIR) and on Spark's Thrift server (FIFO, its
default). In-process PySpark is left out: it is one application with no
sessions of a server, so there is nothing to share between.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.machine import load_avg
from bench.stats import summarise
from bench.targets.base import Background, BenchError, Session, Target, launched
from bench.targets.rest import RestTarget

if TYPE_CHECKING:
    from bench.workloads import Context

__all__ = ["SHORT_QUERY", "run_fair_sharing", "scan_query"]

log = logging.getLogger(__name__)

Result = dict[str, Any]

#: The short query: two small Spark jobs' worth of tasks, one row back.
SHORT_QUERY = "SELECT count(*) FROM range(1000)"

#: Scheduler of each target as the benchmark starts it (their defaults).
SCHEDULERS = {"rest": "FAIR", "hs2": "FAIR", "thrift": "FIFO"}


def scan_query(rows: int, partitions: int) -> str:
    """A CPU-bound scan: ``rows / partitions`` rows per task, one row back."""
    return f"SELECT sum(id % 7) AS s FROM range(0, {rows}, 1, {partitions})"


@dataclass
class _Scan:
    """The long scan, read to its end in a thread of its own."""

    background: Background
    started: float = field(default_factory=time.perf_counter)
    ended: float | None = None
    error: str | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def watch(self) -> None:
        try:
            self.background.wait()
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.ended = time.perf_counter()
            self.done.set()


def _timed(session: Session) -> float:
    start = time.perf_counter()
    got = session.execute(SHORT_QUERY)
    elapsed = time.perf_counter() - start
    if got != 1:
        raise BenchError(f"expected 1 row, got {got}")
    return elapsed


def _during_scan(ctx: Context, scan_session: Session, short: Session) -> tuple[list[float], Result]:
    """Short-query round trips while the scan runs, and how the scan went."""
    s = ctx.settings
    submit: Callable[[str], Background] | None = getattr(scan_session, "submit", None)
    if submit is None:
        raise BenchError("this target's sessions cannot leave a statement running")
    scan = _Scan(submit(scan_query(s.fair_scan_rows, s.fair_scan_partitions)))
    thread = threading.Thread(target=scan.watch, name="bench-scan", daemon=True)
    thread.start()
    latencies: list[float] = []
    cancelled = False
    try:
        # Let the scan's tasks take the cores first, as a running scan would have.
        scan.done.wait(s.fair_settle_s)
        window_end = scan.started + s.fair_window_s
        # Only queries that start while the scan runs count.
        while not scan.done.is_set() and time.perf_counter() < window_end:
            latencies.append(_timed(short))
    finally:
        if not scan.done.is_set():
            cancelled = True
            with contextlib.suppress(Exception):
                scan.background.cancel()
        thread.join(timeout=s.statement_timeout_s)
        with contextlib.suppress(Exception):
            scan.background.close()
    ended = scan.ended or time.perf_counter()
    info: Result = {"scan_s": round(ended - scan.started, 1), "scan_cancelled": cancelled}
    if scan.error and not cancelled:
        info["scan_error"] = scan.error
    if not latencies:
        info["error"] = scan.error or "the scan ended before the first short query"
    return latencies, info


def _measure(ctx: Context, target: Target, scheduler: str) -> Result:
    s = ctx.settings
    entry: Result = _head(target, scheduler)
    scan_session = target.open_session()
    try:
        short = target.open_session()
        try:
            # Warm both sessions up (their pools, the query's code generation). The
            # scan too: its first tasks run the new code interpreted, seconds each,
            # which a short query would wait for under any scheduler.
            scan_session.execute(SHORT_QUERY)
            scan_session.execute(scan_query(2 * s.fair_scan_rows // s.fair_scan_partitions, 2))
            for _ in range(s.warmup):
                _timed(short)
            idle = [_timed(short) for _ in range(s.fair_idle_queries)]
            latencies, info = _during_scan(ctx, scan_session, short)
        finally:
            with contextlib.suppress(Exception):
                short.close()
    finally:
        with contextlib.suppress(Exception):
            scan_session.close()
    entry["idle_ms"] = summarise(idle, "ms")
    entry["during_scan_ms"] = summarise(latencies, "ms")
    entry.update(info)
    lat = entry["during_scan_ms"]
    log.info(
        "fair_sharing on %s (%s): %d short queries during a %.1f s scan, p50 %.0f ms, p99 %.0f ms",
        target.label,
        scheduler,
        lat["n"],
        info["scan_s"],
        lat.get("median", math.nan),
        lat.get("p99", math.nan),
    )
    return entry


def _head(target: Target, scheduler: str) -> Result:
    return {
        "target": target.name,
        "label": target.label,
        "scheduler": scheduler,
        # The FIFO gateway is the one target whose scheduler the benchmark sets.
        "scheduler_default": SCHEDULERS.get(target.name) == scheduler,
        "load_avg_before": load_avg(),
    }


def _guarded(ctx: Context, target: Target, scheduler: str) -> Result:
    try:
        return _measure(ctx, target, scheduler)
    except Exception as exc:
        log.error("fair_sharing on %s (%s) failed: %s", target.label, scheduler, exc)
        log.debug("fair_sharing failure", exc_info=True)
        return {**_head(target, scheduler), "error": f"{type(exc).__name__}: {exc}"}


def _fifo_gateway(ctx: Context, rest: RestTarget) -> Result:
    """The same measurement on a second gateway started with Spark's FIFO scheduler."""
    gateway = rest.sibling("gateway-fifo", rest.label, options={"spark.scheduler.mode": "FIFO"})
    log.info("fair_sharing: starting a second gateway with spark.scheduler.mode=FIFO")
    try:
        with launched(gateway):
            entry = _guarded(ctx, gateway, "FIFO")
            entry["startup_s"] = round(gateway.startup_s or 0.0, 1)
            return entry
    except Exception as exc:
        log.error("The FIFO gateway failed: %s\n%s", exc, gateway.log_tail())
        return {**_head(gateway, "FIFO"), "error": f"{type(exc).__name__}: {exc}"}


def run_fair_sharing(ctx: Context) -> Result:
    s = ctx.settings
    result: Result = {
        "_scan": scan_query(s.fair_scan_rows, s.fair_scan_partitions),
        "_short": SHORT_QUERY,
    }
    for target in ctx.targets:
        if target.name not in SCHEDULERS:
            result[target.name] = {
                "target": target.name,
                "label": target.label,
                "skipped": "one application, no server sessions to share the cores between",
            }
            continue
        result[target.name] = _guarded(ctx, target, SCHEDULERS[target.name])
        if isinstance(target, RestTarget):
            result["rest-fifo"] = _fifo_gateway(ctx, target)
    return result
