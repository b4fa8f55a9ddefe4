"""The end of a run: figures, the checks that fail it, the printed report, the JSON file."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.soak.settings import SoakSettings
from bench.soak.stats import BigRead, EngineKill, Sample

__all__ = ["build", "failures", "recompute", "render", "slope_mb_per_h", "write"]

_SERIES = ("gateway_mb", "engine_mb", "workers_mb", "engine_heap_mb")
# Series sampled apart from the big SELECTs (their batches in flight are not a leak).
_QUIET_ONLY = frozenset({"engine_heap_mb"})
_LABELS = {
    "gateway": "gateway RSS",
    "engine": "engine RSS",
    "workers": "workers RSS",
    "engine_heap": "engine live heap",
}


def slope_mb_per_h(points: Sequence[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, MB) points, in MB per hour; None under 3 points."""
    if len(points) < 3:
        return None
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var == 0:
        return None
    cov = sum((t - mean_t) * (v - mean_v) for t, v in points)
    return cov / var * 3600.0


def _series(
    samples: Sequence[Sample],
    name: str,
    duration_s: float,
    busy: Sequence[tuple[float, float]] = (),
) -> dict[str, Any]:
    """Start, end, max, and the slope over the second half of ``duration_s``.

    The first half is warm-up (JIT, heap growth, caches); the drain after the
    duration carries less load, so it is left out of the slope too. Samples
    inside a ``busy`` (start, end) window are left out: the live heap while a
    50 M-row SELECT runs holds its batches in flight, which is no leak.
    """
    points = [
        (s.t_s, v)
        for s in samples
        if (v := getattr(s, name)) is not None
        and not any(start <= s.t_s <= end for start, end in busy)
    ]
    if not points:
        return {
            "start": None,
            "end": None,
            "max": None,
            "slope_mb_per_h": None,
            "median_first_half": None,
            "median_second_half": None,
        }
    half = duration_s / 2
    second = [(t, v) for t, v in points if half <= t <= duration_s]
    slope = slope_mb_per_h(second)
    first_values = [v for t, v in points if t < half]
    return {
        "start": points[0][1],
        "end": points[-1][1],
        "max": max(v for _, v in points),
        "slope_mb_per_h": None if slope is None else round(slope, 1),
        # Medians say whether the level rose; a slope of few, noisy samples may not.
        "median_first_half": round(statistics.median(first_values), 1) if first_values else None,
        "median_second_half": round(statistics.median(v for _, v in second), 1) if second else None,
    }


def _engine(samples: Sequence[Sample], kills: Sequence[EngineKill]) -> dict[str, Any]:
    restarts = [s.restarts for s in samples if s.restarts is not None]
    pids: list[int] = []
    for sample in samples:
        pids += [p for p in sample.engine_pids if p not in pids]
    return {
        "restarts": max(restarts) if restarts else None,
        # The soak's own SIGKILLs of the engine JVM; every restart should be one.
        "planned_kills": [asdict(k) for k in kills],
        "engine_pids": pids,
        "samples_not_up": sum(1 for s in samples if s.ready != "UP"),
    }


def _big_windows(snapshot: dict[str, Any]) -> list[tuple[float, float]]:
    """When each big SELECT ran (seconds into the run), with a few seconds' margin."""
    return [(r.t_s - 1.0, r.t_s + r.seconds + 5.0) for r in snapshot["big_reads"]]


def build(
    settings: SoakSettings,
    snapshot: dict[str, Any],
    meta: dict[str, Any],
) -> dict[str, Any]:
    """The report as plain data (what the JSON file holds)."""
    samples: list[Sample] = snapshot["samples"]
    duration = float(meta["duration_s"])
    loaded = min(duration, float(meta["planned_duration_s"]))  # the clients' time, not the drain
    served: dict[str, int] = snapshot["served"]
    report: dict[str, Any] = {
        **meta,
        "mode": "quick" if settings.quick else "full",
        "statements": {
            "served": served,
            "total": sum(served.values()),
            "per_minute": round(sum(served.values()) / max(duration / 60, 1e-9), 1),
        },
        "results": {
            "verified": snapshot["verified"],
            "rows_verified": snapshot["rows_verified"],
            "lost": snapshot["events"].get("problem:lost", 0),
        },
        "latency_s": snapshot["latency_s"],
        "big_select": [asdict(r) for r in snapshot["big_reads"]],
        "errors": {
            "by_kind": snapshot["errors"],
            # The documented answers of the restarting engine, during the planned restart.
            "expected_during_restart": snapshot["expected_during_restart"],
            "unexpected_5xx": snapshot["unexpected_5xx"],
            "unexpected_hs2": snapshot["unexpected_hs2"],
            "unexpected_other": snapshot["unexpected_other"],
        },
        "events": snapshot["events"],
        "engine": _engine(samples, snapshot["engine_kills"]),
        "rss_mb": {
            name.removesuffix("_mb"): _series(
                samples, name, loaded, _big_windows(snapshot) if name in _QUIET_ONLY else ()
            )
            for name in _SERIES
        },
        "problems": snapshot["problems"],
        "samples": [asdict(s) for s in samples],
    }
    report["failures"] = failures(report)
    report["ok"] = not report["failures"]
    return report


def failures(report: dict[str, Any]) -> list[str]:
    """Why the run failed: each a line; empty when it passed."""
    problems: dict[str, list[str]] = report["problems"]
    events: dict[str, int] = report["events"]
    out: list[str] = []
    lost = report["results"]["lost"]
    if lost:
        out.append(f"{lost} lost results (rows missing, extra or wrong)")
    unexpected_5xx = sum(report["errors"]["unexpected_5xx"].values())
    if unexpected_5xx:
        out.append(f"{unexpected_5xx} REST 5xx other than the engine-restart 503")
    unexpected_hs2 = sum(report["errors"]["unexpected_hs2"].values())
    if unexpected_hs2:
        out.append(f"{unexpected_hs2} HiveServer2 error statuses (not an engine restart)")
    for sort in ("harmful ran", "refusal without the option"):
        if sort in problems:
            out.append(f"{events[f'problem:{sort}']} x {sort}")
    for sort in ("gateway exited", "streaming job", "session not expired", "client crashed"):
        if sort in problems:
            out.append(f"{events[f'problem:{sort}']} x {sort}")
    unexpected_other = sum(report["errors"]["unexpected_other"].values())
    if unexpected_other:
        out.append(f"{unexpected_other} other unexpected errors (4xx, transport)")
    out += _restart_failures(report)
    return out


def _restart_failures(report: dict[str, Any]) -> list[str]:
    """The planned engine kill: done (unless the run ended first), healed, and the only
    restart (one the soak did not cause is a finding)."""
    engine = report["engine"]
    kills = engine.get("planned_kills", [])
    planned_at = report["clients"].get("engine_kill_at_s")
    problems: dict[str, list[str]] = report["problems"]
    out = []
    due = planned_at is not None and planned_at < report["planned_duration_s"]
    if due and not kills and not report["interrupted"]:
        out.append(f"the planned engine kill at {planned_at:.0f} s did not happen")
    out += [*problems.get("engine kill", []), *problems.get("engine restart", [])]
    restarts = engine["restarts"]
    if restarts is not None and restarts != len(kills):
        out.append(f"{restarts} engine restarts, {len(kills)} caused by the soak's kill")
    return out


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _slope(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:+,.0f}"


def _counts(title: str, counts: dict[str, int]) -> list[str]:
    if not counts:
        return [f"{title}: none"]
    width = max(len(k) for k in counts)
    return [f"{title}:"] + [f"  {k:<{width}}  {v:>8,}" for k, v in counts.items()]


def render(report: dict[str, Any]) -> str:
    """The report as text, for the terminal."""
    lines = [
        f"sparkgate soak ({report['mode']}): {report['duration_s'] / 60:.1f} min "
        f"({report['planned_duration_s'] / 60:.0f} planned), "
        f"{report['statements']['total']:,} statements "
        f"({report['statements']['per_minute']:,.0f}/min)",
        "",
        *_counts("Statements served", report["statements"]["served"]),
        *_latency_lines(report["latency_s"]),
        *_counts("Results verified", report["results"]["verified"]),
        f"Lost results: {report['results']['lost']}",
        *_big_lines(report["big_select"]),
        *_counts("Errors by kind", report["errors"]["by_kind"]),
        *_counts(
            "Expected during the engine restart (its documented answers)",
            _expected(report["errors"]),
        ),
        f"Unexpected: REST 5xx {sum(report['errors']['unexpected_5xx'].values())}, "
        f"HiveServer2 errors {sum(report['errors']['unexpected_hs2'].values())}, "
        f"other {sum(report['errors']['unexpected_other'].values())}",
        f"Engine restarts: {report['engine']['restarts']} "
        f"(JVM pids {report['engine']['engine_pids']})",
        *_kill_lines(report),
        *_counts("Events", report["events"]),
        "",
        "Memory (MB)          start      end      max   median 1st / 2nd half"
        "   slope MB/h (2nd half)",
    ]
    for name, series in report["rss_mb"].items():
        lines.append(
            f"  {_LABELS.get(name, name):<16} {_mb(series['start']):>7} {_mb(series['end']):>8} "
            f"{_mb(series['max']):>8}   "
            f"{_mb(series.get('median_first_half')):>8} / "
            f"{_mb(series.get('median_second_half')):<8}"
            f"     {_slope(series['slope_mb_per_h']):>8}"
        )
    if report["mode"] == "quick":
        lines.append("  (quick run: the slope is warm-up; the 30-minute run's is the figure)")
    for kill in report["engine"].get("planned_kills", []):
        lines.append(
            f"  (engine figures: one JVM until {kill['t_s'] / 60:.1f} min, then its replacement)"
        )
    lines.append("")
    if report["interrupted"]:
        lines.append("INTERRUPTED: the figures cover only part of the planned run")
    if report["failures"]:
        lines += ["FAILED:", *(f"  - {f}" for f in report["failures"])]
        for sort, details in report["problems"].items():
            lines += [f"  {sort}:", *(f"    {d[:400]}" for d in details[:5])]
    else:
        lines.append("PASSED: no lost results, no unexpected errors, every host statement refused")
    return "\n".join(lines)


def _expected(errors: dict[str, Any]) -> dict[str, int]:
    # Reports written before the planned engine kill call them "expected".
    found: dict[str, int] = errors.get("expected_during_restart", errors.get("expected", {}))
    return found


def _kill_lines(report: dict[str, Any]) -> list[str]:
    planned_at = report["clients"].get("engine_kill_at_s")
    if planned_at is None:
        return ["Planned engine kill: none"]
    kills = report["engine"].get("planned_kills", [])
    if not kills:
        return [f"Planned engine kill at {planned_at / 60:.1f} min: not done"]
    return [
        f"Planned engine kill: SIGKILL of JVM {k['pid']} at {k['t_s'] / 60:.1f} min; "
        + (
            f"serving again after {k['back_after_s']:.1f} s (JVM {k['new_pid']})"
            if k["back_after_s"] is not None
            else "never served again"
        )
        for k in kills
    ]


def _latency_lines(latency: dict[str, dict[str, float]]) -> list[str]:
    if not latency:
        return []
    width = max(len(k) for k in latency)
    return [f"Latency, submit to last row (s):  {'p50':>7} {'p95':>7} {'max':>7}"] + [
        f"  {k:<{width}}  {v['p50']:>7.2f} {v['p95']:>7.2f} {v['max']:>7.2f}"
        for k, v in latency.items()
    ]


def _big_lines(reads: list[dict[str, Any]]) -> list[str]:
    if not reads:
        return ["Big SELECT: none ran"]
    return ["Big SELECT (Arrow, read to the end):"] + [
        f"  at {r['t_s'] / 60:5.1f} min: {r['rows']:,} rows in {r['seconds']:.0f} s "
        f"({'ok' if r['ok'] else r['detail']})"
        for r in reads
    ]


def recompute(saved: dict[str, Any]) -> dict[str, Any]:
    """A saved report with its memory figures computed again from its samples
    (after the way they are computed changed); nothing is run."""
    samples = [
        Sample(**{**s, "engine_pids": tuple(s.get("engine_pids") or ())}) for s in saved["samples"]
    ]
    reads = [BigRead(**r) for r in saved["big_select"]]
    loaded = min(float(saved["duration_s"]), float(saved["planned_duration_s"]))
    busy = _big_windows({"big_reads": reads})
    saved = dict(saved)
    saved["rss_mb"] = {
        name.removesuffix("_mb"): _series(
            samples, name, loaded, busy if name in _QUIET_ONLY else ()
        )
        for name in _SERIES
    }
    return saved


def write(report: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
