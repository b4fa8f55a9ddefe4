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

__all__ = [
    "GOALS",
    "compute_goals",
    "compute_ratios",
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

LATENCY = ("session", "select1", "set")
FETCH = ("fetch_small", "fetch_large")
TITLES = {
    "session": "Session open + close (ms)",
    "select1": "SELECT 1 round trip (ms)",
    "set": "SET round trip (ms)",
    "fetch_small": "Fetch {rows} rows x 5 columns",
    "fetch_large": "Fetch {rows} rows x 5 columns",
    "concurrency": "Concurrency",
    "memory": "Server memory (RSS of the process tree, MiB)",
    "fair_sharing": "Short queries during a long scan in another session (ms)",
    "large_result": "Large result read to the end as ARROW (RSS in MiB)",
    "recovery": "Restarts of the gateway (s)",
    "spool": "Result spooling: fetch of {rows} rows x 5 columns as ARROW",
}

#: Goals printed next to the figures; never asserted.
GOALS: dict[str, str] = {
    "select1_vs_inprocess": "SELECT 1 over REST within 1.10x of in-process (median)",
    "select1_vs_thrift": "SELECT 1 over REST faster than the Thrift server (median)",
    "session_open": "REST session open < 5 ms (median)",
    "fetch_json": "REST JSON fetch of the large result >= 50% of in-process Arrow rows/s",
    "fetch_arrow": "REST ARROW fetch of the large result >= 80% of in-process Arrow rows/s",
    "concurrency": "REST concurrent throughput above the Thrift server's, zero errors",
    "memory_bounded": (
        "gateway Python process RSS growth during the large fetch below half the "
        "result's Arrow size (bounded by the result buffer, not the result)"
    ),
    "fair_p99": "REST short-query p99 during a long scan under 1 s (FAIR, the default)",
}

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
        base_th = rate(section.get("thrift/rows"))
        ratios[name] = {
            key: {"vs_inprocess": _ratio(rate(e), base_in), "vs_thrift": _ratio(rate(e), base_th)}
            for key, e in section.items()
        }
    conc = _entries(workloads.get("concurrency", {}))

    def qps(entry: dict[str, Any] | None) -> float | None:
        return None if not entry or "queries_per_s" not in entry else entry["queries_per_s"]

    ratios["concurrency"] = {
        key: {
            "vs_inprocess": _ratio(qps(e), qps(conc.get("inprocess"))),
            "vs_thrift": _ratio(qps(e), qps(conc.get("thrift"))),
        }
        for key, e in conc.items()
    }
    return ratios


def compute_goals(workloads: dict[str, Any], ratios: dict[str, Any]) -> list[dict[str, Any]]:
    """Each goal with the measured value and whether it is met (None: not measured)."""
    goals: list[dict[str, Any]] = []

    def add(goal: str, value: Any, met: bool | None) -> None:
        goals.append({"goal": goal, "text": GOALS[goal], "value": value, "met": met})

    sel = ratios.get("select1", {}).get("rest", {})
    r = sel.get("vs_inprocess")
    add("select1_vs_inprocess", r and f"{r:.2f}x", None if r is None else r <= 1.10)
    r = sel.get("vs_thrift")
    add("select1_vs_thrift", r and f"{r:.2f}x", None if r is None else r < 1.0)

    rest_session = _entries(workloads.get("session", {})).get("rest", {})
    open_ms = (rest_session.get("open_ms") or {}).get("median")
    add("session_open", open_ms and f"{open_ms:.2f} ms", None if open_ms is None else open_ms < 5)

    fetch = ratios.get("fetch_large", {})
    r = fetch.get("rest/json", {}).get("vs_inprocess")
    add("fetch_json", r and f"{r:.0%}", None if r is None else r >= 0.5)
    r = fetch.get("rest/arrow", {}).get("vs_inprocess")
    add("fetch_arrow", r and f"{r:.0%}", None if r is None else r >= 0.8)

    conc = _entries(workloads.get("concurrency", {}))
    rest, thrift = conc.get("rest"), conc.get("thrift")
    if rest and thrift and "queries_per_s" in rest and "queries_per_s" in thrift:
        met = rest["queries_per_s"] > thrift["queries_per_s"] and rest.get("errors", 1) == 0
        value = (
            f"{rest['queries_per_s']} vs {thrift['queries_per_s']} q/s, {rest.get('errors')} errors"
        )
        add("concurrency", value, met)
    else:
        add("concurrency", None, None)

    large = _entries(workloads.get("fetch_large", {}))
    idle = _entries(workloads.get("memory", {})).get("rest", {}).get("idle_root_mib")
    peaks = [large[k].get("peak_root_rss_mib") for k in ("rest/json", "rest/arrow") if k in large]
    peaks = [p for p in peaks if p]
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
            "targets": sorted(k for k, v in partial["targets"].items() if v.get("available")),
        }
    ]
    return doc


def _merged_lines(doc: dict[str, Any]) -> list[str]:
    return [
        f"{', '.join(f'`{w}`' for w in m['workloads'])}: from the run of {m['started_at']} "
        f"({m['duration_s']:.0f} s; `--only {','.join(m['workloads'])} "
        f"--targets {','.join(m['targets'])}`{_load(m)}), merged into this one."
        for m in doc.get("merged", [])
    ]


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
            if e.get("error"):
                row[-1] += f"  ERROR {e['error'][:80]}"
            rows.append(row)
        tables.append((TITLES[name], head, rows, []))
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
        tables.append((title, head, rows, []))
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
                _label(doc, key),
                f"{e.get('sessions', '-')} x {e.get('queries_per_session', '-')}",
                _fmt(e.get("queries_per_s"), 2),
                _fmt(lat.get("median"), 1),
                _fmt(lat.get("p99"), 1),
                _fmt(e.get("errors")),
                _fmt_ratio(r.get("vs_inprocess")),
                _fmt_ratio(r.get("vs_thrift")),
            ]
            if e.get("first_error") or e.get("error"):
                row[-1] += f"  ERROR {(e.get('first_error') or e.get('error'))[:80]}"
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
    return tables


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
    out = [
        f"Run of {doc['started_at']} in **{doc['mode']}** mode "
        f"({doc['duration_s']:.0f} s; `make bench{quick}`{_load(doc)}).",
        "",
        f"Machine: {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB memory, {m['os']}, "
        f"{m['java']}, Spark {m['spark']}, Python {m['python']}, pyarrow {m['pyarrow']}.",
        f"Spark for every target: master `{s['spark']['master']}`, driver memory "
        f"`{s['spark']['driver_memory']}`, `spark.sql.shuffle.partitions="
        f"{s['spark']['shuffle_partitions']}`.",
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
