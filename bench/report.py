"""The run's output: machine facts, ratios, goals, the terminal table, the JSON
file and the results section of ``BENCHMARKS.md``."""

from __future__ import annotations

import datetime as dt
import logging
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson

from bench.machine import NOISY_CORE_SHARE, noisy_sources, quiet_summary

__all__ = [
    "GOALS",
    "compute_goals",
    "compute_ratios",
    "concurrency_levels",
    "machine_info",
    "merge",
    "render_markdown",
    "render_text",
    "update_markdown",
    "write_json",
]

log = logging.getLogger(__name__)

MARK_START = "<!-- bench:results:start -->"
MARK_END = "<!-- bench:results:end -->"

LATENCY = ("session", "select1", "select100", "set")
#: Latency workloads whose REST entries keep the EOS fetch and a keep-alive round trip.
STATEMENTS = ("select1", "select100")
FETCH = ("fetch_small", "fetch_large")
TITLES = {
    "session": "Session open + close (ms)",
    "select1": "SELECT 1 round trip (ms)",
    "select100": "100-row query round trip (ms)",
    "set": "SET round trip (ms)",
    "fetch_small": "Fetch {rows} rows x 5 columns",
    "fetch_large": "Fetch {rows} rows x 5 columns",
    "concurrency": "Concurrency",
    "memory": "Server memory (RSS of the process tree, MiB)",
    "fair_sharing": "Short queries during a long scan in another session (ms)",
    "large_result": "Large result read to the end as ARROW (RSS in MiB)",
    "recovery": "Restarts of the gateway (s)",
    "spool": "Result spooling: fetch of {rows} rows x 5 columns as ARROW",
    "kafka": "Kafka pipelines, {rows} JSON records (records/s)",
}

#: Goals printed next to the figures; never asserted. ``{sessions}`` is filled
#: in with the concurrency level measured.
GOALS: dict[str, str] = {
    "select1_vs_inprocess": (
        "SELECT 1 over REST at or below in-process collect() + 3 ms (median and p99)"
    ),
    "select1_vs_thrift": "SELECT 1 over REST below the Thrift server (median and p99)",
    "select1_hs2_vs_thrift": (
        "SELECT 1 over HiveServer2 (PyHive) below the Thrift server (median and p99)"
    ),
    "select100_vs_inprocess": (
        "100-row query over REST at or below in-process collect() + 3 ms (median and p99)"
    ),
    "select100_vs_thrift": "100-row query over REST below the Thrift server (median and p99)",
    "select100_hs2_vs_thrift": (
        "100-row query over HiveServer2 (PyHive) below the Thrift server (median and p99)"
    ),
    "eos_fetch": (
        "REST EOS fetch (the fetch after the last page of SELECT 1) within a keep-alive "
        "round trip (<= 1.5 ms median)"
    ),
    "session_open": "REST session open < 5 ms (median)",
    "fetch_json": "REST JSON fetch of the large result >= 50% of in-process Arrow rows/s",
    "fetch_arrow": "REST ARROW fetch of the large result >= 80% of in-process Arrow rows/s",
    "hs2_jdbc_fetch": (
        "sparkgate HiveServer2 fetch of the large result >= 2x the Thrift server's rows/s "
        "with the JDBC client"
    ),
    "concurrency": (
        "REST with {sessions} concurrent sessions: throughput above the Thrift server's "
        "with zero errors, and a lower p99"
    ),
    "concurrency_high": (
        "REST with {sessions} concurrent sessions: throughput above the Thrift server's "
        "with zero errors, and a lower p99"
    ),
    "memory_bounded": (
        "gateway Python process RSS growth during the large fetch below half the "
        "result's Arrow size (bounded by the result buffer, not the result)"
    ),
    "fair_p99": "REST short-query p99 during a long scan under 1 s (FAIR, the default)",
}
#: What ``{sessions}`` reads when the level was not measured.
_LEVEL_NAMES = {"concurrency": "32 (16 quick)", "concurrency_high": "128 (64 quick)"}
#: Statement latency goals: a target's median and p99 against a reference's, plus a margin.
SELECT_MARGIN_MS = 3.0
EOS_FETCH_MS = 1.5
HS2_JDBC_FACTOR = 2.0

#: (title, header, rows, notes printed under the table)
Table = tuple[str, list[str], list[list[str]], list[str]]


# --------------------------------------------------------------------------- machine


def _java_version() -> str:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java:
        return "not found"
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    lines = (out.stderr or out.stdout).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info(spark_version: str | None) -> dict[str, Any]:
    import psutil
    import pyarrow
    import pyspark

    return {
        "cores": os.cpu_count(),
        "cpu": _cpu_model(),
        "memory_gib": round(psutil.virtual_memory().total / 1024**3, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "java": _java_version(),
        "spark": spark_version or pyspark.__version__,
        "pyspark": pyspark.__version__,
        "pyarrow": pyarrow.__version__,
    }


# --------------------------------------------------------------------------- ratios and goals


def _entries(section: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in section.items() if not k.startswith("_") and isinstance(v, dict)}


def _median(entry: dict[str, Any] | None) -> float | None:
    if not entry or entry.get("error") or not entry.get("n"):
        return None
    return float(entry["median"])


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 3)


def compute_ratios(workloads: dict[str, Any]) -> dict[str, Any]:
    """Same-run ratios of each variant against in-process PySpark and the Thrift server.

    Latency: median / reference median (lower is better; in-process is
    ``inprocess``, i.e. ``collect()``). Fetch: rows/s / reference rows/s
    (higher is better; in-process is ``inprocess/arrow``, the Thrift server
    ``thrift/rows``). Concurrency: queries/s / reference queries/s.
    """
    ratios: dict[str, Any] = {}
    for name in LATENCY:
        section = _entries(workloads.get(name, {}))
        base_in = _median(section.get("inprocess"))
        base_th = _median(section.get("thrift"))
        ratios[name] = {
            key: {
                "vs_inprocess": _ratio(_median(entry), base_in),
                "vs_thrift": _ratio(_median(entry), base_th),
            }
            for key, entry in section.items()
        }
    for name in FETCH:
        section = _entries(workloads.get(name, {}))

        def rate(entry: dict[str, Any] | None) -> float | None:
            return None if not entry or entry.get("error") else entry.get("rows_per_s")

        base_in = rate(section.get("inprocess/arrow"))
        ratios[name] = {
            key: {
                "vs_inprocess": _ratio(rate(e), base_in),
                "vs_thrift": _ratio(rate(e), rate(section.get(_thrift_reference(key, section)))),
            }
            for key, e in section.items()
        }
    conc = _entries(workloads.get("concurrency", {}))

    def qps(entry: dict[str, Any] | None) -> float | None:
        return None if not entry or "queries_per_s" not in entry else entry["queries_per_s"]

    ratios["concurrency"] = {
        key: {
            "vs_inprocess": _ratio(qps(e), qps(_at_level(conc, "inprocess", e.get("sessions")))),
            "vs_thrift": _ratio(qps(e), qps(_at_level(conc, "thrift", e.get("sessions")))),
        }
        for key, e in conc.items()
    }
    return ratios


def _thrift_reference(key: str, section: dict[str, Any]) -> str:
    """The Thrift server's entry a fetch is compared with: the same client where
    the Thrift server has it (``jdbc`` with ``jdbc``), PyHive otherwise."""
    mode = key.partition("/")[2]
    same = f"thrift/{mode}"
    return same if mode and same in section else "thrift/rows"


def _at_level(section: dict[str, Any], target: str, sessions: Any) -> dict[str, Any] | None:
    """The concurrency entry of ``target`` at ``sessions`` sessions (any key shape:
    ``rest@32`` now, ``rest`` in results of one level)."""
    for entry in section.values():
        if entry.get("target") == target and entry.get("sessions") == sessions:
            return dict(entry)
    return None


def concurrency_levels(workloads: dict[str, Any]) -> list[int]:
    """The session counts measured, lowest first."""
    section = _entries(workloads.get("concurrency", {}))
    return sorted({int(e["sessions"]) for e in section.values() if e.get("sessions")})


def compute_goals(workloads: dict[str, Any], ratios: dict[str, Any]) -> list[dict[str, Any]]:
    """Each goal with the measured value and whether it is met (None: not measured)."""
    goals: list[dict[str, Any]] = []

    def add(goal: str, value: Any, met: bool | None, **fmt: Any) -> None:
        text = GOALS[goal].format(**fmt) if fmt else GOALS[goal]
        goals.append({"goal": goal, "text": text, "value": value, "met": met})

    for name in STATEMENTS:
        section = _entries(workloads.get(name, {}))
        rest, hs2 = section.get("rest"), section.get("hs2")
        inproc, thrift = section.get("inprocess"), section.get("thrift")
        add(f"{name}_vs_inprocess", *_tails_goal(rest, inproc, SELECT_MARGIN_MS, strict=False))
        add(f"{name}_vs_thrift", *_tails_goal(rest, thrift, 0.0, strict=True))
        add(f"{name}_hs2_vs_thrift", *_tails_goal(hs2, thrift, 0.0, strict=True))

    rest1 = _entries(workloads.get("select1", {})).get("rest") or {}
    eos = rest1.get("eos_fetch_ms") or {}
    keepalive = rest1.get("keepalive_ms") or {}
    beside = (
        f"; keep-alive round trip median {keepalive['median']:.2f} ms" if keepalive.get("n") else ""
    )
    if eos.get("n"):
        value = f"EOS fetch median {eos['median']:.2f} ms, p99 {eos['p99']:.2f} ms{beside}"
        if rest1.get("eos_with_rows"):
            value += f"; {rest1['eos_with_rows']} runs had no EOS fetch"
        add("eos_fetch", value, eos["median"] <= EOS_FETCH_MS)
    elif rest1.get("eos_with_rows"):
        # Every last page answered EOS itself: there is no fetch to wait for.
        add("eos_fetch", f"no EOS fetch: the last page answered EOS{beside}", True)
    else:
        add("eos_fetch", None, None)

    rest_session = _entries(workloads.get("session", {})).get("rest", {})
    open_ms = (rest_session.get("open_ms") or {}).get("median")
    add("session_open", open_ms and f"{open_ms:.2f} ms", None if open_ms is None else open_ms < 5)

    fetch = ratios.get("fetch_large", {})
    r = fetch.get("rest/json", {}).get("vs_inprocess")
    add("fetch_json", r and f"{r:.0%}", None if r is None else r >= 0.5)
    r = fetch.get("rest/arrow", {}).get("vs_inprocess")
    add("fetch_arrow", r and f"{r:.0%}", None if r is None else r >= 0.8)
    large_rates = _entries(workloads.get("fetch_large", {}))
    r = fetch.get("hs2/jdbc", {}).get("vs_thrift")
    if r is not None and "thrift/jdbc" in large_rates:
        value = (
            f"{r:.2f}x ({large_rates['hs2/jdbc'].get('rows_per_s', 0):,} vs "
            f"{large_rates['thrift/jdbc'].get('rows_per_s', 0):,} rows/s)"
        )
        add("hs2_jdbc_fetch", value, r >= HS2_JDBC_FACTOR)
    else:
        add("hs2_jdbc_fetch", None, None)

    conc = _entries(workloads.get("concurrency", {}))
    # The lowest level measured is the goal "concurrency", the next "concurrency_high".
    levels: list[int | None] = [*concurrency_levels(workloads), None, None]
    for goal, level in (("concurrency", levels[0]), ("concurrency_high", levels[1])):
        rest = _at_level(conc, "rest", level) if level else None
        thrift = _at_level(conc, "thrift", level) if level else None
        _concurrency_goal(add, goal, rest, thrift)

    large = _entries(workloads.get("fetch_large", {}))
    idle = _entries(workloads.get("memory", {})).get("rest", {}).get("idle_root_mib")
    found = [large[k].get("peak_root_rss_mib") for k in ("rest/json", "rest/arrow") if k in large]
    peaks = [float(p) for p in found if p]
    size = large.get("inprocess/arrow", {}).get("arrow_nbytes")
    if idle and peaks and size:
        growth = max(peaks) - idle
        size_mib = size / 1024**2
        add(
            "memory_bounded",
            f"Python process +{growth:.0f} MiB over idle (result {size_mib:.0f} MiB as Arrow)",
            growth < size_mib / 2,
        )
    else:
        add("memory_bounded", None, None)

    fair = _entries(workloads.get("fair_sharing", {}))
    during = (fair.get("rest") or {}).get("during_scan_ms") or {}
    fifo = (fair.get("rest-fifo") or {}).get("during_scan_ms") or {}
    if during.get("n"):
        value = f"p99 {during['p99']:,.0f} ms, p50 {during['median']:,.0f} ms"
        if fifo.get("n"):
            value += f" (FIFO: p99 {fifo['p99']:,.0f} ms, p50 {fifo['median']:,.0f} ms)"
        add("fair_p99", value, during["p99"] < 1000)
    else:
        add("fair_p99", None, None)
    return goals


def _tails_goal(
    entry: dict[str, Any] | None, ref: dict[str, Any] | None, margin_ms: float, *, strict: bool
) -> tuple[str | None, bool | None]:
    """(value, met) for "``entry`` at or below (strictly below) ``ref`` + margin, both
    median and p99"."""
    if _median(entry) is None or _median(ref) is None:
        return None, None
    assert entry is not None and ref is not None
    parts, met = [], True
    for stat in ("median", "p99"):
        mine, theirs = float(entry[stat]), float(ref[stat])
        limit = theirs + margin_ms
        ok = mine < limit if strict else mine <= limit
        met = met and ok
        parts.append(f"{stat} {mine:,.2f} vs {theirs:,.2f} ms ({mine - theirs:+,.2f})")
    return ", ".join(parts), met


def _concurrency_goal(
    add: Any, goal: str, rest: dict[str, Any] | None, thrift: dict[str, Any] | None
) -> None:
    sessions = (rest or thrift or {}).get("sessions") or _LEVEL_NAMES[goal]
    if not rest or not thrift or "queries_per_s" not in rest or "queries_per_s" not in thrift:
        add(goal, None, None, sessions=sessions)
        return
    p99 = (rest.get("latency_ms") or {}).get("p99")
    p99_ref = (thrift.get("latency_ms") or {}).get("p99")
    met = (
        rest["queries_per_s"] > thrift["queries_per_s"]
        and rest.get("errors", 1) == 0
        and p99 is not None
        and p99_ref is not None
        and p99 < p99_ref
    )
    value = (
        f"{rest['queries_per_s']} vs {thrift['queries_per_s']} q/s, "
        f"p99 {_fmt(p99, 0)} vs {_fmt(p99_ref, 0)} ms, {rest.get('errors')} errors"
    )
    add(goal, value, met, sessions=sessions)


# --------------------------------------------------------------------------- merging


def merge(base: dict[str, Any], partial: dict[str, Any]) -> dict[str, Any]:
    """``base`` (a complete run) with the workloads of ``partial`` (an ``--only``
    run on the same Spark settings) put in, ratios and goals recomputed.

    Raises:
        ValueError: the two runs differ in mode or Spark settings.
    """
    pairs = {
        "mode": (base.get("mode"), partial.get("mode")),
        "Spark settings": (base["settings"].get("spark"), partial["settings"].get("spark")),
    }
    for what, (mine, theirs) in pairs.items():
        if mine != theirs:
            raise ValueError(f"the runs differ in {what}: {mine} and {theirs}")
    names = sorted(partial["workloads"])
    doc = dict(base)
    doc["workloads"] = {**base["workloads"], **partial["workloads"]}
    # The partial run's settings hold the sizes of the workloads it ran.
    doc["settings"] = {**base["settings"], **partial["settings"]}
    doc["ratios"] = compute_ratios(doc["workloads"])
    doc["goals"] = compute_goals(doc["workloads"], doc["ratios"])
    earlier = [
        {**m, "workloads": [w for w in m["workloads"] if w not in names]}
        for m in base.get("merged", [])
    ]
    doc["merged"] = [m for m in earlier if m["workloads"]] + [
        {
            "workloads": names,
            "started_at": partial["started_at"],
            "duration_s": partial["duration_s"],
            "load_avg": partial.get("load_avg"),
            "quiet": partial.get("quiet"),
            "targets": sorted(k for k, v in partial["targets"].items() if v.get("available")),
        }
    ]
    return doc


def _merged_lines(doc: dict[str, Any]) -> list[str]:
    return [
        f"{', '.join(f'`{w}`' for w in m['workloads'])}: from the run of {m['started_at']} "
        f"({m['duration_s']:.0f} s; `--only {','.join(m['workloads'])} "
        f"--targets {','.join(m['targets'])}`{_load(m)}{_other_cpu(m)}), merged into this one."
        for m in doc.get("merged", [])
    ]


def _other_cpu(run: dict[str, Any]) -> str:
    """The other processes' share of one core, when recorded; NOISY past the threshold."""
    quiet = run.get("quiet") or {}
    if "other_core_share" not in quiet:
        return ""
    mark = ", **noisy**" if quiet.get("noisy") else ""
    return f"; other processes {quiet['other_core_share']:.0%} of one core{mark}"


def _machine_state(doc: dict[str, Any]) -> list[str]:
    """The quiet-machine check and each workload's share, one line each."""
    quiet = doc.get("quiet") or {}
    if not quiet:
        return []
    threshold = quiet.get("threshold_core_share", NOISY_CORE_SHARE)
    verdict = (
        f"**noisy** (above {threshold:.0%} of one core)"
        if quiet.get("noisy")
        else f"quiet (at most {threshold:.0%} of one core)"
        if quiet.get("noisy") is False
        else "not checked"
    )
    lines = [f"Machine state: {quiet_summary(quiet)}; {verdict}."]
    shares = [
        f"{name} {section['_machine']['other_core_share']:.0%}"
        for name, section in doc["workloads"].items()
        if isinstance(section, dict) and "other_core_share" in (section.get("_machine") or {})
    ]
    if shares:
        lines.append(f"Other processes by workload (share of one core): {', '.join(shares)}.")
    return lines


def _load(doc: dict[str, Any]) -> str:
    """The 1-minute load average at the start and end of a run, when recorded."""
    load = doc.get("load_avg")
    return f"; load average {load['start']} / {load['end']} at start / end" if load else ""


# --------------------------------------------------------------------------- formatting


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _rows_label(rows: int) -> str:
    if rows >= 1_000_000 and rows % 1_000_000 == 0:
        return f"{rows // 1_000_000}M"
    if rows >= 1_000 and rows % 1_000 == 0:
        return f"{rows // 1_000}k"
    return str(rows)


def _tables(doc: dict[str, Any]) -> list[Table]:
    """(title, header, rows, notes) for every workload that ran."""
    workloads = doc["workloads"]
    ratios = doc["ratios"]
    tables: list[Table] = []
    for name in LATENCY:
        if name not in workloads:
            continue
        head = ["target", "n", "median", "p99", "min-max", "vs in-process", "vs Thrift"]
        if name == "session":
            head.insert(2, "open median")
        # The EOS columns where the run measured them (results before they existed have none).
        phased = name in STATEMENTS and any(
            e.get("eos_fetch_ms") or e.get("keepalive_ms")
            for e in _entries(workloads[name]).values()
        )
        if phased:
            head[5:5] = ["EOS fetch median / p99", "keep-alive RTT median"]
        rows = []
        for key, e in _entries(workloads[name]).items():
            r = ratios.get(name, {}).get(key, {})
            row = [
                _label(doc, key),
                _fmt(e.get("n")),
                _fmt(e.get("median"), 2),
                _fmt(e.get("p99"), 2),
                f"{_fmt(e.get('min'), 2)}-{_fmt(e.get('max'), 2)}" if e.get("n") else "-",
                _fmt_ratio(r.get("vs_inprocess")),
                _fmt_ratio(r.get("vs_thrift")),
            ]
            if name == "session":
                row.insert(2, _fmt((e.get("open_ms") or {}).get("median"), 2))
            if phased:
                eos = e.get("eos_fetch_ms") or {}
                eos_text = (
                    f"{_fmt(eos.get('median'), 2)} / {_fmt(eos.get('p99'), 2)}"
                    if eos.get("n")
                    else "none (EOS with the last page)"
                    if e.get("eos_with_rows")
                    else "-"
                )
                keepalive = (e.get("keepalive_ms") or {}).get("median")
                row[5:5] = [eos_text, _fmt(keepalive, 2)]
            if e.get("error"):
                row[-1] += f"  ERROR {e['error'][:80]}"
            rows.append(row)
        notes = []
        if name in STATEMENTS and workloads[name].get("_statement"):
            notes.append(f"Statement `{workloads[name]['_statement']}`.")
        if phased:
            notes.append(
                "EOS fetch: the REST fetch answering EOS after the last page; keep-alive "
                "RTT: `GET /v4/api_versions` on the same connection after each run."
            )
        tables.append((TITLES[name], head, rows, notes))
    for name in FETCH:
        if name not in workloads:
            continue
        head = [
            "target",
            "n",
            "median s",
            "min-max s",
            "rows/s",
            "vs in-process",
            "vs Thrift",
            "peak RSS MiB",
        ]
        rows = []
        for key, e in _entries(workloads[name]).items():
            r = ratios.get(name, {}).get(key, {})
            row = [
                _label(doc, key),
                _fmt(e.get("n")),
                _fmt(e.get("median"), 2),
                f"{_fmt(e.get('min'), 2)}-{_fmt(e.get('max'), 2)}" if e.get("n") else "-",
                _fmt(e.get("rows_per_s")),
                _fmt_ratio(r.get("vs_inprocess")),
                _fmt_ratio(r.get("vs_thrift")),
                _fmt(e.get("peak_rss_mib")),
            ]
            if e.get("error"):
                row[-1] += f"  ERROR {e['error'][:80]}"
            rows.append(row)
        title = TITLES[name].format(rows=_rows_label(int(workloads[name].get("_rows", 0))))
        tables.append((title, head, rows, _fetch_notes(doc, workloads[name])))
    if "concurrency" in workloads:
        head = [
            "target",
            "sessions x queries",
            "queries/s",
            "p50 ms",
            "p99 ms",
            "errors",
            "vs in-process",
            "vs Thrift",
        ]
        rows = []
        for key, e in _entries(workloads["concurrency"]).items():
            lat = e.get("latency_ms") or {}
            r = ratios.get("concurrency", {}).get(key, {})
            row = [
                _label(doc, e.get("target") or key),
                f"{e.get('sessions', '-')} x {e.get('queries_per_session', '-')}",
                _fmt(e.get("queries_per_s"), 2),
                _fmt(lat.get("median"), 1),
                _fmt(lat.get("p99"), 1),
                _fmt(e.get("errors")),
                _fmt_ratio(r.get("vs_inprocess")),
                _fmt_ratio(r.get("vs_thrift")),
            ]
            error = e.get("first_error") or e.get("error")
            if error:
                row[-1] += f"  ERROR {str(error)[:80]}"
            rows.append(row)
        tables.append((TITLES["concurrency"], head, rows, []))
    if "fair_sharing" in workloads:
        tables.append(_fair_table(workloads["fair_sharing"]))
    if "memory" in workloads:
        head = [
            "target",
            "idle",
            "idle sessions",
            "with sessions",
            "KiB/session",
            "after close",
            "peak during large fetch",
            "root process idle / peak",
        ]
        large = _entries(workloads.get("fetch_large", {}))
        rows = []
        for key, e in _entries(workloads["memory"]).items():
            mine = [v for v in large.values() if v.get("target") == key]
            peaks = [v["peak_rss_mib"] for v in mine if v.get("peak_rss_mib")]
            roots = [v["peak_root_rss_mib"] for v in mine if v.get("peak_root_rss_mib")]
            rows.append(
                [
                    _label(doc, key),
                    _fmt(e.get("idle_mib")),
                    _fmt(e.get("idle_sessions")),
                    _fmt(e.get("with_sessions_mib")),
                    _fmt(e.get("kib_per_session")),
                    _fmt(e.get("after_close_mib")),
                    _fmt(max(peaks)) if peaks else "-",
                    f"{_fmt(e.get('idle_root_mib'))} / {_fmt(max(roots)) if roots else '-'}",
                ]
            )
        tables.append((TITLES["memory"], head, rows, []))
    if "large_result" in workloads:
        tables.append(_large_table(workloads["large_result"]))
    if "recovery" in workloads:
        tables.extend(_recovery_tables(workloads["recovery"]))
    if "kafka" in workloads:
        tables.append(_kafka_table(workloads["kafka"]))
    return tables


def _kafka_table(section: dict[str, Any]) -> Table:
    notes = _failure(section) + ([f"ERROR {section['error']}"] if section.get("error") else [])
    rows = []
    for kind, what in (
        ("files", "Kafka into Parquet files (filesystem table)"),
        ("upsert", "Kafka, GROUP BY, into upsert-kafka"),
    ):
        e = section.get(kind) or {}
        rows.append(
            [
                what,
                _fmt(e.get("sparkgate_records_per_s")),
                _fmt(e.get("pyspark_records_per_s")),
                _fmt_ratio(e.get("ratio")),
            ]
        )
    latency = section.get("latency") or {}
    notes.append(
        f"Median of {(section.get('files') or {}).get('runs', '-')} runs each, interleaved: "
        "a sparkgate streaming INSERT job (REST, submit to the end time DESCRIBE JOB "
        "gives) against the same pipeline in PySpark Structured Streaming in one "
        "process (trigger availableNow), both reading the topic from its start. Goal: ratio >= 0.9."
    )
    notes.append(
        f"One record, produced to visible in a streaming SELECT over REST (default trigger): "
        f"p50 {_fmt(latency.get('p50_ms'))} ms, p99 {_fmt(latency.get('p99_ms'))} ms "
        f"({latency.get('records', '-')} records)."
    )
    title = TITLES["kafka"].format(rows=_rows_label(int(section.get("records") or 0)))
    return title, ["pipeline", "sparkgate", "PySpark", "ratio"], rows, notes


def _fetch_notes(doc: dict[str, Any], section: dict[str, Any]) -> list[str]:
    """What the JDBC client's JVM measured itself, beside the figures timed here."""
    own = []
    for key, e in _entries(section).items():
        if not (e.get("client_reported_s") or {}).get("n"):
            continue
        text = f"{_label(doc, key)} {e['client_reported_s']['median']:,.2f} s"
        if (e.get("client_cpu_s") or {}).get("n"):
            text += f" (its JVM's CPU {e['client_cpu_s']['median']:,.2f} s)"
        own.append(text)
    notes = (
        [
            "The JDBC client's own timing, execute to statement closed in its JVM "
            f"(median): {', '.join(own)}; vs Thrift compares JDBC with JDBC."
        ]
        if own
        else []
    )
    cpu = [
        f"{_label(doc, key)} {_cpu_text(e['cpu_us_per_row'])}"
        for key, e in _entries(section).items()
        if e.get("cpu_us_per_row")
    ]
    if cpu:
        notes.append(
            "CPU per row in the median run, in microseconds (psutil, each process with the "
            "children it reaped): client / server process / engine JVM / Python workers, "
            "and the cores the four kept busy on average: " + "; ".join(cpu) + "."
        )
    return notes


def _cpu_text(cpu: dict[str, Any]) -> str:
    """``client / server / engine / workers = total us, N cores`` of one target."""
    parts = [float(cpu.get(role, 0.0)) for role in ("client", "root", "engine", "workers")]
    shown = " / ".join(f"{p:.2f}" for p in parts)
    return f"{shown} = {sum(parts):.2f} us, {float(cpu.get('cores_busy', 0.0)):.2f} cores"


def _failure(section: dict[str, Any]) -> list[str]:
    """A workload that crashed or was skipped as a whole."""
    for key in ("_error", "_skipped"):
        if section.get(key):
            return [f"{key[1:]}: {section[key]}"]
    return []


def _fair_table(section: dict[str, Any]) -> Table:
    head = ["target", "scheduler", "n", "p50", "p99", "max", "idle p50", "scan s"]
    rows: list[list[str]] = []
    notes = _failure(section)
    for e in _entries(section).values():
        if e.get("skipped"):
            notes.append(f"{e['label']}: not measured, {e['skipped']}")
            continue
        lat = e.get("during_scan_ms") or {}
        how = "default" if e.get("scheduler_default") else "spark.scheduler.mode"
        scan = _fmt(e.get("scan_s"))
        if e.get("scan_cancelled"):
            scan += " (cancelled)"
        row = [
            e["label"],
            f"{e.get('scheduler', '-')} ({how})",
            _fmt(lat.get("n")),
            _fmt(lat.get("median")),
            _fmt(lat.get("p99")),
            _fmt(lat.get("max")),
            _fmt((e.get("idle_ms") or {}).get("median")),
            scan,
        ]
        error = e.get("error") or e.get("scan_error")
        if error:
            row[-1] += f"  ERROR {error[:80]}"
        rows.append(row)
    if "_scan" in section:
        notes.append(f"Scan `{section['_scan']}`; short query `{section.get('_short')}`.")
    return TITLES["fair_sharing"], head, rows, notes


def _recovery_tables(section: dict[str, Any]) -> list[Table]:
    tables: list[Table] = []
    restart = section.get("restart") or {}
    notes = _failure(section) + ([f"ERROR {restart['error']}"] if restart.get("error") else [])
    rows = [
        [
            how,
            _fmt((restart.get(key) or {}).get("stop_s"), 2),
            _fmt((restart.get(key) or {}).get("first_answer_s"), 2),
            _fmt((restart.get(key) or {}).get("jobs_running_s"), 2),
        ]
        for how, key in (
            ("cold start (empty data dir)", "cold_start"),
            ("SIGTERM, then start", "sigterm"),
            ("SIGKILL of gateway and JVM, then start", "sigkill"),
        )
    ]
    notes.append(
        "A gateway with persistent sessions, one session and one streaming job "
        "(datagen into blackhole). First answer: from the start to a new session's "
        "SELECT 1; jobs: to SHOW JOBS in the old session (same handle) listing the job RUNNING."
    )
    tables.append(
        (TITLES["recovery"], ["what", "stop", "first answer", "jobs running"], rows, notes)
    )
    spool = section.get("spool") or {}
    spool_notes = [f"ERROR {spool['error']}"] if spool.get("error") else []
    spool_rows = [
        [
            "off (default)",
            _fmt(spool.get("off_rows_per_s")),
            "1.00",
        ],
        [
            "on (sql-gateway.result.spool)",
            _fmt(spool.get("on_rows_per_s")),
            _fmt_ratio(spool.get("on_vs_off")),
        ],
    ]
    spool_notes.append(
        f"Median of {spool.get('runs', '-')} runs each, interleaved (order alternating), "
        "on two gateways started alike but for the option."
    )
    title = TITLES["spool"].format(rows=_rows_label(int(spool.get("rows") or 0)))
    tables.append((title, ["result spool", "rows/s", "vs off"], spool_rows, spool_notes))
    return tables


def _large_table(section: dict[str, Any]) -> Table:
    head = [
        "target",
        "driver memory",
        "rows",
        "s",
        "rows/s",
        "Python process before / peak",
        "engine JVM before / peak",
        "Python workers peak",
        "tree peak",
    ]
    rows: list[list[str]] = []
    notes = _failure(section)
    for key, e in _entries(section).items():
        size = _rows_label(int(e["rows"])) if e.get("rows") else ""
        if e.get("skipped"):
            notes.append(f"{e['label']}{', ' + size if size else ''}: {e['skipped']}")
            continue
        memory = e.get("max_heap") or "-"
        if key.startswith("rest-default-memory/"):
            memory += " (default)"
        row = [
            e["label"],
            memory,
            size,
            _fmt(e.get("seconds"), 2),
            _fmt(e.get("rows_per_s")),
            f"{_fmt(e.get('root_before_mib'))} / {_fmt(e.get('root_peak_mib'))}",
            f"{_fmt(e.get('engine_before_mib'))} / {_fmt(e.get('engine_peak_mib'))}",
            _fmt(e.get("workers_peak_mib")),
            _fmt(e.get("tree_peak_mib")),
        ]
        if e.get("error"):
            row[-1] += f"  ERROR {e['error'][:80]}"
        rows.append(row)
    if "_statement" in section:
        notes.append(f"Statement `{section['_statement']}` (and the smaller sizes).")
    return TITLES["large_result"], head, rows, notes


def _label(doc: dict[str, Any], key: str) -> str:
    name, _, mode = key.partition("/")
    label = doc["targets"].get(name, {}).get("label", name)
    return f"{label} ({mode})" if mode else label


def _goal_lines(doc: dict[str, Any]) -> list[str]:
    lines = []
    for g in doc["goals"]:
        mark = {True: "met", False: "MISSED", None: "not measured"}[g["met"]]
        value = f" [{g['value']}]" if g["value"] else ""
        lines.append(f"{mark:>12}  {g['text']}{value}")
    return lines


def render_text(doc: dict[str, Any]) -> str:
    out: list[str] = []
    m = doc["machine"]
    out.append(
        f"sparkgate benchmark ({doc['mode']} mode), {m['cores']} cores, {m['memory_gib']} GiB, "
        f"Spark {m['spark']}, {m['java']}, master {doc['settings']['spark']['master']}, "
        f"driver memory {doc['settings']['spark']['driver_memory']}"
    )
    for info in doc["targets"].values():
        if not info.get("available"):
            out.append(f"  {info['label']}: {info.get('reason', 'not available')}")
    out.extend(f"  {line}" for line in _merged_lines(doc))
    out.extend(f"  {line.replace('**', '')}" for line in _machine_state(doc))
    for line in noisy_sources(doc):
        out.append(f"  NOISY: {line}")
    for title, head, rows, notes in _tables(doc):
        widths = [max(len(str(c)) for c in col) for col in zip(head, *rows, strict=False)]
        out.append("")
        out.append(title)
        out.append("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=False)).rstrip())
        out.append("  ".join("-" * w for w in widths))
        for row in rows:
            out.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)).rstrip())
        out.extend(f"  {note}" for note in notes)
    out.append("")
    out.append("Goals (reported, never asserted):")
    out.extend(_goal_lines(doc))
    out.append(f"\nTotal run time {doc['duration_s']:.0f} s.")
    return "\n".join(out) + "\n"


def render_markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    s = doc["settings"]
    quick = " ARGS=--quick" if doc["mode"] == "quick" else ""
    out: list[str] = []
    noisy = noisy_sources(doc)
    if noisy:
        out += [
            "**Noisy run**: other processes took CPU while it ran, so every figure below "
            "is distorted; it was published with `--allow-noisy`.",
            "",
            *(f"- {line}" for line in noisy),
            "",
        ]
    out += [
        f"Run of {doc['started_at']} in **{doc['mode']}** mode "
        f"({doc['duration_s']:.0f} s; `make bench{quick}`{_load(doc)}).",
        "",
        f"Machine: {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB memory, {m['os']}, "
        f"{m['java']}, Spark {m['spark']}, Python {m['python']}, pyarrow {m['pyarrow']}.",
        f"Spark for every target: master `{s['spark']['master']}`, driver memory "
        f"`{s['spark']['driver_memory']}`, `spark.sql.shuffle.partitions="
        f"{s['spark']['shuffle_partitions']}`.",
        *_machine_state(doc),
        "",
    ]
    merged = _merged_lines(doc)
    if merged:
        out += [*merged, ""]
    for info in doc["targets"].values():
        state = "ran" if info.get("available") else info.get("reason", "not available")
        startup = info.get("startup_s")
        extra = f", ready after {startup:.1f} s" if startup and info.get("available") else ""
        out.append(f"- {info['label']}: {state}{extra}")
    for title, head, rows, notes in _tables(doc):
        out += [
            "",
            f"**{title}**",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "|".join("---" for _ in head) + "|",
        ]
        out += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]
        if notes:
            out += ["", *(f"- {note}" for note in notes)]
    out += ["", "**Goals** (reported, never asserted)", "", "| goal | value | |", "|---|---|---|"]
    for g in doc["goals"]:
        mark = {True: "met", False: "**missed**", None: "not measured"}[g["met"]]
        out.append(f"| {g['text']} | {g['value'] or '-'} | {mark} |")
    out += ["", "Every figure is in `bench/results/latest.json`."]
    return "\n".join(out) + "\n"


def update_markdown(path: Path, doc: dict[str, Any]) -> bool:
    """Replace the text between the result markers of ``path``; False if no markers."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(MARK_START) + r".*?" + re.escape(MARK_END), re.DOTALL)
    if not pattern.search(text):
        log.warning("%s has no %s ... %s markers; not updated", path.name, MARK_START, MARK_END)
        return False
    body = f"{MARK_START}\n{render_markdown(doc)}{MARK_END}"
    path.write_text(pattern.sub(lambda _m: body, text), encoding="utf-8")
    return True


def write_json(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
