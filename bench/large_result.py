"""The ``large_result`` workload: a result far larger than the engine's heap,
read to its end over REST, with the RSS of the gateway's Python process and of
its engine JVM sampled apart.

The gateway runs with its default result options (it relays large results
through bounded buffers), so the peaks should not grow with the result: the
same figures at 50 M and at 200 M rows. It runs on the run's REST gateway
(the benchmark's driver memory) and, in full mode, on a second gateway with
the engine's default driver memory. The client asks for ``rowFormat=ARROW``
and keeps no rows: each page is decoded, passed over and dropped.

In-process ``toArrow()`` is the comparison where it can be done at all: it
holds the whole result in the JVM and again in Python, so sizes past
``large_result_inprocess_max_rows`` are reported as not attempted. PyHive
clients (the Thrift server, sparkgate's HiveServer2) are not attempted either:
they turn every value into a Python object, about 60 k rows/s (``fetch_large``),
so 50 M rows would take about 14 minutes.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bench.machine import load_avg
from bench.memory import MIB, ROLES, RoleSampler, jvm_max_heap, role_rss
from bench.targets.base import BenchError, Session, Target, launched
from bench.targets.inprocess import InProcessTarget
from bench.targets.rest import RestTarget

if TYPE_CHECKING:
    from bench.workloads import Context

__all__ = ["large_query", "run_large_result"]

log = logging.getLogger(__name__)

Result = dict[str, Any]

#: Bytes per row as Arrow: two bigint columns.
ROW_BYTES = 16
#: Rows/s of PyHive clients in ``fetch_large`` (about 60 k on two cores).
PYHIVE_ROWS_PER_S = 60_000
PYHIVE_TARGETS = ("hs2", "thrift")


def large_query(rows: int) -> str:
    return f"SELECT id, id * 2 AS d FROM range({rows})"


def rows_label(rows: int) -> str:
    return f"{rows // 1_000_000}M" if rows % 1_000_000 == 0 else f"{rows:,}"


def _measure(ctx: Context, target: Target, session: Session, rows: int, label: str) -> Result:
    """One run: RSS by role just before it, then sampled every 100 ms while it runs."""
    root, exclude = _tree_of(ctx, target)
    entry: Result = {"target": target.name, "label": label, "rows": rows}
    entry["load_avg_before"] = load_avg()
    before = role_rss(root, exclude)
    with RoleSampler(root, exclude) as sampler:
        start = time.perf_counter()
        got = session.execute(large_query(rows))
        elapsed = time.perf_counter() - start
    if got != rows:
        raise BenchError(f"expected {rows} rows, got {got}")
    entry.update(
        seconds=round(elapsed, 2), rows_per_s=round(rows / elapsed), samples=sampler.samples
    )
    for role in ROLES:
        entry[f"{role}_before_mib"] = round(before[role] / MIB, 1)
        entry[f"{role}_peak_mib"] = round(sampler.peak[role] / MIB, 1)
    entry["max_heap"] = jvm_max_heap(root, exclude)
    log.info(
        "large_result %s on %s: %.1f s, Python process peak %.0f MiB, engine JVM peak %.0f MiB",
        rows_label(rows),
        label,
        elapsed,
        entry["root_peak_mib"],
        entry["engine_peak_mib"],
    )
    return entry


def _tree_of(ctx: Context, target: Target) -> tuple[int, list[int]]:
    """The root process to sample and the server trees to leave out of it."""
    if isinstance(target, InProcessTarget):
        # The benchmark's own process; the servers it started are its children too.
        return os.getpid(), ctx.server_roots()
    return target.server_pids()[0], []


def _run_sizes(ctx: Context, target: Target, key: str, label: str, sizes: list[int]) -> Result:
    """Every size on one target, in one ARROW session warmed up on a small result."""
    out: Result = {}
    mode = "arrow"
    try:
        session = target.open_session(mode)
    except Exception as exc:
        return {f"{key}/{rows_label(n)}": _failed(target, label, n, exc) for n in sizes}
    try:
        session.execute(large_query(10_000))
        for rows in sizes:
            try:
                out[f"{key}/{rows_label(rows)}"] = _measure(ctx, target, session, rows, label)
            except Exception as exc:
                log.error("large_result %s on %s failed: %s", rows_label(rows), label, exc)
                out[f"{key}/{rows_label(rows)}"] = _failed(target, label, rows, exc)
    finally:
        try:
            session.close()
        except Exception:
            log.debug("Closing the large_result session failed", exc_info=True)
    return out


def _failed(target: Target, label: str, rows: int, exc: BaseException) -> Result:
    return {
        "target": target.name,
        "label": label,
        "rows": rows,
        "error": f"{type(exc).__name__}: {exc}",
    }


def _default_memory_gateway(ctx: Context, rest: RestTarget, sizes: list[int]) -> Result:
    """The same sizes on a second gateway with the engine's default driver memory."""
    spark = replace(ctx.settings.spark, driver_memory=None)
    gateway = rest.sibling("gateway-default-memory", rest.label, spark=spark)
    label = f"{rest.label}, default driver memory"
    log.info("large_result: starting a second gateway with the default driver memory")
    try:
        with launched(gateway):
            return _run_sizes(ctx, gateway, "rest-default-memory", label, sizes)
    except Exception as exc:
        log.error("The default-memory gateway failed: %s\n%s", exc, gateway.log_tail())
        return {
            f"rest-default-memory/{rows_label(n)}": _failed(gateway, label, n, exc) for n in sizes
        }


def _skipped(target: Target, reason: str, rows: int | None = None) -> Result:
    entry: Result = {"target": target.name, "label": target.label, "skipped": reason}
    if rows is not None:
        entry["rows"] = rows
    return entry


def _pyhive_reason(smallest: int) -> str:
    minutes = smallest / PYHIVE_ROWS_PER_S / 60
    return (
        f"not attempted: PyHive turns every value into a Python object (about "
        f"{PYHIVE_ROWS_PER_S // 1000} k rows/s in fetch_large), {rows_label(smallest)} rows "
        f"would take about {minutes:.0f} min"
    )


def run_large_result(ctx: Context) -> Result:
    s = ctx.settings
    sizes = sorted(s.large_result_rows)
    result: Result = {"_statement": large_query(sizes[-1]), "_rows": sizes}
    for target in ctx.targets:
        if isinstance(target, RestTarget):
            result.update(_run_sizes(ctx, target, "rest", target.label, sizes))
            if s.large_result_default_gateway:
                result.update(_default_memory_gateway(ctx, target, sizes))
        elif isinstance(target, InProcessTarget):
            fits = [n for n in sizes if n <= s.large_result_inprocess_max_rows]
            result.update(_run_sizes(ctx, target, "inprocess", f"{target.label} toArrow()", fits))
            for rows in sizes:
                if rows not in fits:
                    gib = rows * ROW_BYTES / 1024**3
                    result[f"inprocess/{rows_label(rows)}"] = _skipped(
                        target,
                        (
                            f"not attempted: toArrow() holds the whole result in the JVM and again "
                            f"in Python ({gib:.1f} GiB as Arrow)"
                        ),
                        rows,
                    )
        elif target.name in PYHIVE_TARGETS:
            reason = _pyhive_reason(sizes[0])
            if target.name == "thrift":
                reason += (
                    "; the Thrift server also collects the whole result on its driver "
                    "(spark.sql.thriftserver.incrementalCollect is off by default)"
                )
            result[target.name] = _skipped(target, reason)
    return result
