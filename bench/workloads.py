"""The workloads, each run on every started target in the same run.

Latency and fetch workloads interleave the targets repetition by repetition
(A, B, C, A, B, C, ...), so a noisy moment of the shared machine hits all of
them alike and the ratios are pair-wise comparable. Warm-up runs come first
and are not counted. Each target gets a time budget per workload: after it
is spent no more repeats start (there is always at least one), so a slow
target gets fewer repeats rather than a longer run.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.kafka import run_kafka
from bench.large_result import run_large_result
from bench.machine import load_avg
from bench.memory import CPU_ROLES, MIB, PeakSampler, process_rss, role_cpu, tree_rss
from bench.recovery import run_recovery
from bench.scheduling import run_fair_sharing
from bench.settings import BenchSettings
from bench.stats import summarise
from bench.targets.base import BenchError, Session, Target

__all__ = ["ORDER", "SELECT100", "WORKLOADS", "Context", "concurrency_key", "fetch_query"]

log = logging.getLogger(__name__)

Result = dict[str, Any]


def fetch_query(rows: int) -> str:
    """Five typed columns: bigint, double, string, timestamp, decimal."""
    return (
        "SELECT id, id * 1.5D AS d, concat('s', id) AS s, timestamp_seconds(id) AS ts, "
        f"CAST(id AS DECIMAL(18,2)) AS dec FROM range({rows})"
    )


def short_query(i: int) -> str:
    """A short statement: planned and run by Spark, one row back, no job to schedule."""
    return f"SELECT {i} AS q, 'sparkgate' AS s, {i} * 2 AS twice"


SET_STATEMENT_KEY = "spark.sql.shuffle.partitions"


@dataclass
class Context:
    settings: BenchSettings
    targets: list[Target]
    results: dict[str, dict[str, Result]] = field(default_factory=dict)

    def server_roots(self) -> list[int]:
        """Roots of the process trees that are not the in-process target's, though
        children of this process: the servers, and the clients the benchmark runs
        in processes of their own (the JDBC client's JVM)."""
        roots = [pid for t in self.targets if t.name != "inprocess" for pid in t.server_pids()]
        return roots + [pid for t in self.targets for pid in t.client_pids()]

    def rss(self, target: Target) -> int:
        roots = target.server_pids()
        exclude = self.server_roots() if target.name == "inprocess" else []
        return tree_rss(roots, exclude)

    def sampler(self, target: Target) -> PeakSampler:
        exclude = self.server_roots() if target.name == "inprocess" else []
        return PeakSampler(target.server_pids(), exclude)


@dataclass
class _Unit:
    """One measured thing: a target (in one mode) running one action repeatedly."""

    key: str
    target: Target
    run: Callable[[], None]
    teardown: Callable[[], None] = lambda: None
    prepare: Callable[[], None] = lambda: None
    #: Called after each counted run, untimed (collects what the run recorded).
    after: Callable[[], None] = lambda: None
    timings: list[float] = field(default_factory=list)
    #: The 1-minute load average before each counted run.
    loads: list[float] = field(default_factory=list)
    spent: float = 0.0
    error: str | None = None
    done: bool = False


# A warm-up by time stops after this many runs all the same (fast in-process units).
_WARMUP_MAX_RUNS = 300


def _interleaved(
    units: list[_Unit], warmup: int, repeats: int, budget: float, warmup_s: float = 0.0
) -> None:
    """Prepare and warm up every unit (``warmup`` runs, and runs until ``warmup_s``
    seconds were spent), then time ``repeats`` rounds, one run of each unit per round."""
    for unit in units:
        try:
            unit.prepare()
        except Exception as exc:
            _fail(unit, exc)
            continue
        runs, started = 0, time.perf_counter()
        while runs < warmup or (
            time.perf_counter() - started < warmup_s and runs < _WARMUP_MAX_RUNS
        ):
            runs += 1
            try:
                unit.run()
            except Exception as exc:
                _fail(unit, exc)
                break
    for _round in range(repeats):
        live = [u for u in units if not u.done]
        if not live:
            break
        for unit in live:
            # Start no repeat that would end past the budget (estimated by the mean).
            if unit.timings and unit.spent * (1 + 1 / len(unit.timings)) > budget:
                unit.done = True
                continue
            unit.loads.append(load_avg())
            start = time.perf_counter()
            try:
                unit.run()
            except Exception as exc:
                _fail(unit, exc)
                continue
            elapsed = time.perf_counter() - start
            unit.timings.append(elapsed)
            unit.spent += elapsed
            try:
                unit.after()
            except Exception as exc:
                _fail(unit, exc)
    for unit in units:
        with contextlib.suppress(Exception):
            unit.teardown()


def _fail(unit: _Unit, exc: Exception) -> None:
    unit.error = f"{type(exc).__name__}: {exc}"
    unit.done = True
    log.error("%s failed: %s", unit.key, unit.error)
    log.debug("%s failure", unit.key, exc_info=True)


def _session_unit(
    key: str,
    target: Target,
    mode: str,
    action: Callable[[Session], None],
    after: Callable[[Session], None] | None = None,
) -> _Unit:
    """A unit that opens one session up front and runs ``action`` on it each time
    (and ``after``, untimed, after each counted run)."""
    holder: dict[str, Session] = {}

    def prepare() -> None:
        holder["session"] = target.open_session(mode)

    def run() -> None:
        action(holder["session"])

    def run_after() -> None:
        if after is not None:
            after(holder["session"])

    def teardown() -> None:
        if "session" in holder:
            holder.pop("session").close()

    return _Unit(key, target, run, teardown, prepare, run_after)


def _load_summary(loads: list[float]) -> Result:
    """The load average before a unit's counted runs: first, median, max."""
    if not loads:
        return {}
    return {
        "first": loads[0],
        "median": round(statistics.median(loads), 2),
        "max": max(loads),
    }


def _expect_rows(expected: int) -> Callable[[Session, str], None]:
    def check(session: Session, sql: str) -> None:
        got = session.execute(sql)
        if got != expected:
            raise BenchError(f"expected {expected} rows, got {got}")

    return check


# --------------------------------------------------------------------------- latency


def run_session(ctx: Context) -> Result:
    """Open + close one session (in-process: ``newSession()``); open timed apart too."""
    opens: dict[str, list[float]] = {}

    def unit(target: Target) -> _Unit:
        times = opens.setdefault(target.name, [])

        def run() -> None:
            start = time.perf_counter()
            session = target.open_session()
            times.append(time.perf_counter() - start)
            session.close()

        return _Unit(target.name, target, run)

    units = [unit(t) for t in ctx.targets]
    s = ctx.settings
    _interleaved(units, s.warmup, s.session_repeats, s.latency_budget_s, s.warmup_s)
    result = _latency_results(units)
    for name, times in opens.items():
        # Drop the warm-up runs, which were recorded too.
        counted = times[len(times) - result[name]["n"] :] if result[name]["n"] else []
        result[name]["open_ms"] = summarise(counted, "ms")
    return result


def _statement_workload(ctx: Context, sql: str, expected: int | None, repeats: int) -> Result:
    """``sql`` on every target's first mode. Where the session records the phases
    of a statement (REST), the EOS fetch is kept apart, and a keep-alive round
    trip on the same connection is timed after each counted run."""
    check = _expect_rows(expected) if expected is not None else None
    eos: dict[str, list[float]] = {}
    eos_rows: dict[str, int] = {}
    pings: dict[str, list[float]] = {}
    phases: dict[str, dict[str, list[float]]] = {}

    def action(session: Session) -> None:
        if check is not None:
            check(session, sql)
        else:
            session.execute(sql)

    def collector(key: str) -> Callable[[Session], None]:
        def after(session: Session) -> None:
            recorded: dict[str, float] | None = getattr(session, "last_phases", None)
            if recorded:
                for phase, seconds in recorded.items():
                    phases.setdefault(key, {}).setdefault(phase, []).append(seconds)
                if recorded.get("eos_rows", 0) > 0:
                    # The last page said EOS itself: there was no fetch after it.
                    eos_rows[key] = eos_rows.get(key, 0) + 1
                elif "eos_s" in recorded:
                    eos.setdefault(key, []).append(recorded["eos_s"])
            ping = getattr(session, "ping", None)
            if ping is not None:
                pings.setdefault(key, []).append(ping())

        return after

    units = [_session_unit(t.name, t, t.modes[0], action, collector(t.name)) for t in ctx.targets]
    s = ctx.settings
    _interleaved(units, s.warmup, repeats, s.latency_budget_s, s.warmup_s)
    result = _latency_results(units)
    for key, entry in result.items():
        if key in eos or key in eos_rows:
            entry["eos_fetch_ms"] = summarise(eos.get(key, []), "ms")
            #: Runs whose last page answered EOS, with no fetch after it.
            entry["eos_with_rows"] = eos_rows.get(key, 0)
        if key in pings:
            entry["keepalive_ms"] = summarise(pings[key], "ms")
        if key in phases:
            entry["phases_ms"] = {
                name.removesuffix("_s"): round(statistics.median(values) * 1000, 3)
                for name, values in phases[key].items()
                if not name.endswith("_rows")
            }
    result["_statement"] = sql
    return result


def run_select1(ctx: Context) -> Result:
    """``SELECT 1``: execute, fetch to end of stream, close the operation."""
    return _statement_workload(ctx, "SELECT 1", 1, ctx.settings.select1_repeats)


SELECT100 = "SELECT id, id * 2 AS x FROM range(100)"


def run_select100(ctx: Context) -> Result:
    """A 100-row query: execute, fetch to end of stream, close the operation."""
    return _statement_workload(ctx, SELECT100, 100, ctx.settings.select100_repeats)


def run_set(ctx: Context) -> Result:
    """A trivial ``SET key=value`` (the value it already has)."""
    sql = f"SET {SET_STATEMENT_KEY}={ctx.settings.spark.shuffle_partitions}"
    return _statement_workload(ctx, sql, None, ctx.settings.set_repeats)


def _latency_results(units: list[_Unit]) -> Result:
    result: Result = {}
    for unit in units:
        entry: Result = {"target": unit.target.name, **summarise(unit.timings, "ms")}
        if unit.loads:
            entry["load_avg"] = _load_summary(unit.loads)
        if unit.error:
            entry["error"] = unit.error
        result[unit.key] = entry
    return result


# --------------------------------------------------------------------------- fetch


def _fetch_workload(ctx: Context, rows: int, repeats: int, budget: float, *, large: bool) -> Result:
    """``large``: sample peak RSS, and leave out in-process ``collect()``, which is
    about ten times slower per row than Arrow (it runs on the small result only)."""
    peak = large
    sql = fetch_query(rows)
    warmup_sql = fetch_query(min(rows, 10_000))
    units: list[_Unit] = []
    peaks: dict[str, int] = {}
    root_peaks: dict[str, int] = {}
    sizes: dict[str, int] = {}
    # What a client measured itself (the JDBC client's JVM), per counted run.
    inner: dict[str, list[float]] = {}
    client_cpu: dict[str, list[float]] = {}
    # CPU seconds by process role per counted run of a large fetch, and its seconds.
    role_cpus: dict[str, list[dict[str, float]]] = {}

    for target in ctx.targets:
        for mode in target.modes:
            if large and target.name == "inprocess" and mode == "rows":
                continue
            key = target.variant(mode)
            holder: dict[str, Session] = {}

            def prepare(
                target: Target = target, mode: str = mode, holder: dict[str, Session] = holder
            ) -> None:
                holder["session"] = target.open_session(mode)
                # Warm this query shape up (code generation, first pages) on a small range.
                holder["session"].execute(warmup_sql)
                # What the benchmark made so far (a Spark session, earlier workloads'
                # figures) out of the collector's reach: a client parsing millions of
                # values into objects should pay a client process's collections, not
                # full ones over this process's heap (the gateway does the same).
                gc.collect()
                gc.freeze()

            def run(
                key: str = key, holder: dict[str, Session] = holder, target: Target = target
            ) -> None:
                session = holder["session"]
                sampler = ctx.sampler(target) if peak else contextlib.nullcontext()
                before = _fetch_cpu(ctx, target) if large else None
                started = time.perf_counter()
                with sampler:
                    got = session.execute(sql)
                if before is not None:
                    after = _fetch_cpu(ctx, target)
                    spent = {role: after[role] - before[role] for role in CPU_ROLES}
                    spent["seconds"] = time.perf_counter() - started
                    role_cpus.setdefault(key, []).append(spent)
                if isinstance(sampler, PeakSampler):
                    peaks[key] = max(peaks.get(key, 0), sampler.peak)
                    root_peaks[key] = max(root_peaks.get(key, 0), sampler.root_peak)
                nbytes = getattr(session, "last_nbytes", 0)
                if nbytes:
                    sizes[key] = nbytes
                own = getattr(session, "last_inner_s", None)
                if own is not None:
                    inner.setdefault(key, []).append(own)
                cpu = getattr(session, "last_client_cpu_s", None)
                if cpu is not None:
                    client_cpu.setdefault(key, []).append(cpu)
                    if key in role_cpus:  # the client is that JVM, not this process
                        role_cpus[key][-1]["client"] = cpu
                if got != rows:
                    raise BenchError(f"expected {rows} rows, got {got}")

            def teardown(holder: dict[str, Session] = holder) -> None:
                if "session" in holder:
                    holder.pop("session").close()

            units.append(_Unit(key, target, run, teardown, prepare))

    # The warm-up is one run of the same shape on 10,000 rows (above): a warm-up
    # at full size would double the cost of the largest workload.
    _interleaved(units, 0, repeats, budget)
    result: Result = {"_rows": rows, "_statement": sql}
    for unit in units:
        entry: Result = {"target": unit.target.name, **summarise(unit.timings, "s")}
        if unit.timings:
            entry["rows_per_s"] = round(rows / entry["median"])
            entry["rows_per_s_best"] = round(rows / entry["min"])
        if unit.key in peaks:
            entry["peak_rss_mib"] = round(peaks[unit.key] / MIB, 1)
            entry["peak_root_rss_mib"] = round(root_peaks.get(unit.key, 0) / MIB, 1)
        if unit.key in sizes:
            entry["arrow_nbytes"] = sizes[unit.key]
        if unit.key in inner:
            entry["client_reported_s"] = summarise(inner[unit.key], "s")
        if unit.key in client_cpu:
            entry["client_cpu_s"] = summarise(client_cpu[unit.key], "s")
        if unit.key in role_cpus:
            entry["cpu_us_per_row"] = _cpu_per_row(role_cpus[unit.key], rows)
        if unit.loads:
            entry["load_avg"] = _load_summary(unit.loads)
        if unit.error:
            entry["error"] = unit.error
        result[unit.key] = entry
    return result


def _fetch_cpu(ctx: Context, target: Target) -> dict[str, float]:
    """CPU seconds so far by role: this thread (the Python clients; in-process, the
    driver's Python side too), the server's root, its engine JVM and Python workers."""
    if target.name == "inprocess":
        out = role_cpu(os.getpid(), ctx.server_roots())
        out["root"] = 0.0  # the benchmark's own process: its fetching thread is the client
    else:
        out = role_cpu(target.server_pids()[0])
    # The calling thread's CPU: the client's work, without the samplers' threads.
    out["client"] = time.thread_time()
    return out


def _cpu_per_row(runs: list[dict[str, float]], rows: int) -> Result:
    """The median run's CPU microseconds per row by role, and the cores they kept busy."""
    run = sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]
    per_row = {role: round(run[role] / rows * 1e6, 3) for role in CPU_ROLES}
    per_row["cores_busy"] = round(sum(run[role] for role in CPU_ROLES) / run["seconds"], 2)
    return per_row


def run_fetch_small(ctx: Context) -> Result:
    s = ctx.settings
    return _fetch_workload(
        ctx, s.fetch_small_rows, s.fetch_small_repeats, s.fetch_small_budget_s, large=False
    )


def run_fetch_large(ctx: Context) -> Result:
    s = ctx.settings
    return _fetch_workload(
        ctx, s.fetch_large_rows, s.fetch_large_repeats, s.fetch_large_budget_s, large=True
    )


# --------------------------------------------------------------------------- concurrency


def _concurrency_on(ctx: Context, target: Target, n_sessions: int, n_queries: int) -> Result:
    s = ctx.settings
    load_before = load_avg()
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(n_sessions + 1)

    def worker(index: int) -> None:
        session: Session | None = None
        try:
            session = target.open_session()
        except Exception as exc:
            with lock:
                errors.append(f"open: {type(exc).__name__}: {exc}")
        try:
            barrier.wait(timeout=s.startup_timeout_s)
        except threading.BrokenBarrierError:
            return
        if session is None:
            return
        try:
            for q in range(n_queries):
                start = time.perf_counter()
                try:
                    got = session.execute(short_query(index * n_queries + q))
                    if got != 1:
                        raise BenchError(f"expected 1 row, got {got}")
                except Exception as exc:
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                with lock:
                    latencies.append(time.perf_counter() - start)
        finally:
            with contextlib.suppress(Exception):
                session.close()

    threads = [
        threading.Thread(target=worker, args=(i,), name=f"bench-{target.name}-{i}", daemon=True)
        for i in range(n_sessions)
    ]
    for thread in threads:
        thread.start()
    try:
        barrier.wait(timeout=s.startup_timeout_s)
    except threading.BrokenBarrierError:
        barrier.abort()
        return {"target": target.name, "error": "sessions could not be opened in time"}
    start = time.perf_counter()
    deadline = start + s.statement_timeout_s
    for thread in threads:
        thread.join(timeout=max(0.1, deadline - time.perf_counter()))
    wall = time.perf_counter() - start
    hung = sum(t.is_alive() for t in threads)
    with lock:
        done = len(latencies)
        all_errors = list(errors)
        lat = list(latencies)
    entry: Result = {
        "target": target.name,
        "sessions": n_sessions,
        "queries_per_session": n_queries,
        "statement": short_query(0),
        "queries_ok": done,
        "errors": len(all_errors) + hung * n_queries,
        "wall_s": round(wall, 3),
        "queries_per_s": round(done / wall, 2) if wall > 0 else 0.0,
        "latency_ms": summarise(lat, "ms"),
        "load_avg_before": load_before,
    }
    if all_errors:
        entry["first_error"] = all_errors[0][:500]
    if hung:
        entry["hung_sessions"] = hung
    return entry


def concurrency_key(target: str, sessions: int) -> str:
    """A concurrency entry's key: the target and the number of sessions."""
    return f"{target}@{sessions}"


def run_concurrency(ctx: Context) -> Result:
    """Every level (S sessions x Q queries), each on every target in turn."""
    result: Result = {}
    for n_sessions, n_queries in ctx.settings.concurrency_levels:
        for target in ctx.targets:
            # A short warm-up of the query shape on this target.
            with contextlib.suppress(Exception):
                session = target.open_session()
                try:
                    session.execute(short_query(-1))
                finally:
                    session.close()
            log.info("concurrency: %s, %d sessions x %d", target.label, n_sessions, n_queries)
            key = concurrency_key(target.name, n_sessions)
            try:
                result[key] = _concurrency_on(ctx, target, n_sessions, n_queries)
            except Exception as exc:
                result[key] = {
                    "target": target.name,
                    "sessions": n_sessions,
                    "queries_per_session": n_queries,
                    "error": f"{type(exc).__name__}: {exc}",
                }
    return result


# --------------------------------------------------------------------------- memory


def run_memory(ctx: Context) -> Result:
    """RSS of each server's process tree idle, with many idle sessions, after closing them."""
    s = ctx.settings
    result: Result = {}
    for target in ctx.targets:
        entry: Result = {
            "target": target.name,
            "idle_mib": round(ctx.rss(target) / MIB, 1),
            "load_avg_before": load_avg(),
        }
        pids = target.server_pids()
        if pids:
            # The root process alone: for the gateway its Python process, without the JVM.
            entry["idle_root_mib"] = round(process_rss(pids[0]) / MIB, 1)
        sessions: list[Session] = []
        start = time.monotonic()
        try:
            while len(sessions) < s.idle_sessions:
                if time.monotonic() - start > s.idle_sessions_budget_s:
                    break
                sessions.append(target.open_session())
            entry["idle_sessions"] = len(sessions)
            entry["open_s"] = round(time.monotonic() - start, 3)
            entry["with_sessions_mib"] = round(ctx.rss(target) / MIB, 1)
            if sessions:
                per = (entry["with_sessions_mib"] - entry["idle_mib"]) * 1024 / len(sessions)
                entry["kib_per_session"] = round(per, 1)
        except Exception as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"
            log.error("memory on %s failed: %s", target.label, entry["error"])
        finally:
            for session in sessions:
                with contextlib.suppress(Exception):
                    session.close()
        entry["after_close_mib"] = round(ctx.rss(target) / MIB, 1)
        result[target.name] = entry
    return result


WORKLOADS: dict[str, Callable[[Context], Result]] = {
    "memory": run_memory,
    "session": run_session,
    "select1": run_select1,
    "select100": run_select100,
    "set": run_set,
    "concurrency": run_concurrency,
    "fair_sharing": run_fair_sharing,
    "fetch_small": run_fetch_small,
    "fetch_large": run_fetch_large,
    "large_result": run_large_result,
    "recovery": run_recovery,
    "kafka": run_kafka,
}

#: Run order: memory while the servers are still idle, the biggest results last.
ORDER: tuple[str, ...] = tuple(WORKLOADS)
