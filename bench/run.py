"""The benchmark's command line: ``python -m bench [--quick] [--only ...] [--targets ...]``.

Starts every selected target (the servers boot in parallel), runs the
workloads on all of them side by side, stops everything (also on errors,
signals and at exit) and writes the table, the JSON file and, for a complete
run, the results section of ``BENCHMARKS.md``.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from bench import report
from bench.machine import NOISY_CORE_SHARE, MachineMonitor, load_avg, noisy_sources, quiet_summary
from bench.servers import stop_all
from bench.settings import SparkSettings, settings_for
from bench.targets import ALL_TARGETS, Target
from bench.targets.inprocess import InProcessTarget
from bench.targets.rest import RestTarget
from bench.targets.thrift import ThriftTarget
from bench.workloads import ORDER, WORKLOADS, Context

__all__ = ["main"]

log = logging.getLogger("bench")

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO / "bench" / "results" / "latest.json"
PARTIAL_OUTPUT = REPO / "bench" / "results" / "partial.json"
BENCHMARKS_MD = REPO / "BENCHMARKS.md"
TARGET_NAMES = [t.name for t in ALL_TARGETS]


def _csv(value: str, allowed: Sequence[str], what: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in items if v not in allowed]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown {what}: {', '.join(unknown)} (choose from {', '.join(allowed)})"
        )
    return items


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument(
        "--quick", action="store_true", help="smaller sizes and fewer repeats (about 3 minutes)"
    )
    p.add_argument(
        "--only",
        type=lambda v: _csv(v, ORDER, "workload"),
        default=None,
        metavar="W[,W]",
        help=f"run only these workloads: {', '.join(ORDER)}",
    )
    p.add_argument(
        "--targets",
        type=lambda v: _csv(v, TARGET_NAMES, "target"),
        default=None,
        metavar="T[,T]",
        help=f"targets to run: {', '.join(TARGET_NAMES)} (default all)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        help="JSON result file (default bench/results/latest.json when every "
        "workload runs, bench/results/partial.json with --only)",
    )
    p.add_argument(
        "--no-docs", action="store_true", help="do not rewrite the results section of BENCHMARKS.md"
    )
    p.add_argument("--master", default="local[2]", help="Spark master for every target")
    p.add_argument("--driver-memory", default="4g", help="Spark driver memory for every target")
    p.add_argument("--shuffle-partitions", type=int, default=2)
    p.add_argument(
        "--thrift-auth",
        choices=["NOSASL", "NONE"],
        default="NOSASL",
        help="hive.server2.authentication of the Thrift server (PyHive auth)",
    )
    p.add_argument(
        "--rest-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra -D option for the sparkgate gateway (repeatable)",
    )
    p.add_argument(
        "--keep-work",
        action="store_true",
        help="keep the work directory (server logs, data dirs) after the run",
    )
    p.add_argument(
        "--render",
        type=Path,
        default=None,
        metavar="JSON",
        help="run nothing: print the table of a saved result and rewrite "
        "BENCHMARKS.md from it (unless --no-docs)",
    )
    p.add_argument(
        "--merge",
        type=Path,
        default=None,
        metavar="JSON",
        help="run nothing: put the workloads of a partial (--only) result into "
        "the complete one (--output, default bench/results/latest.json), "
        "then render it like --render",
    )
    p.add_argument(
        "--allow-noisy",
        action="store_true",
        help="write BENCHMARKS.md even though other processes took CPU during the run "
        "(the rendered results then say the run was noisy)",
    )
    p.add_argument(
        "--noisy-threshold",
        type=float,
        default=NOISY_CORE_SHARE,
        metavar="SHARE",
        help="CPU of processes that are not the benchmark's, as a share of one core "
        f"averaged over the run, above which the run is noisy (default {NOISY_CORE_SHARE})",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return p


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _watchdog(limit: float) -> threading.Timer:
    def fire() -> None:
        log.error("The run exceeded its hard limit of %.0f s; stopping the servers", limit)
        stop_all()
        os._exit(3)

    timer = threading.Timer(limit, fire)
    timer.daemon = True
    timer.start()
    return timer


def _build_targets(names: list[str], settings: Any, work: Path, args: Any) -> list[Target]:
    targets: list[Target] = []
    for cls in ALL_TARGETS:
        if cls.name not in names:
            continue
        if cls is ThriftTarget:
            targets.append(ThriftTarget(settings, work, auth=args.thrift_auth))
        else:
            target = cls(settings, work)
            if isinstance(target, RestTarget):
                for item in args.rest_option:
                    key, sep, value = item.partition("=")
                    if not sep:
                        raise SystemExit(f"--rest-option {item!r} is not KEY=VALUE")
                    target.extra_options[key] = value
            targets.append(target)
    return targets


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
        stream=sys.stderr,
    )
    for noisy in ("py4j", "pyhive", "thrift"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if args.render is not None:
        return _render(args.render, docs=not args.no_docs, allow_noisy=args.allow_noisy)
    if args.merge is not None:
        return _merge(
            args.merge,
            args.output or DEFAULT_OUTPUT,
            docs=not args.no_docs,
            allow_noisy=args.allow_noisy,
        )
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)

    spark = SparkSettings(args.master, args.driver_memory, args.shuffle_partitions)
    settings = settings_for(args.quick, spark)
    workloads = args.only or list(ORDER)
    names = args.targets or TARGET_NAMES
    complete = args.only is None
    output = args.output or (DEFAULT_OUTPUT if complete else PARTIAL_OUTPUT)

    work = Path(tempfile.mkdtemp(prefix="sparkgate-bench-"))
    timer = _watchdog(settings.hard_limit_s)
    started = time.monotonic()
    started_at = report.utc_now()
    # Other work on the machine distorts every timing: keep the load beside them,
    # and the CPU other processes took (the quiet-machine check).
    load_start = load_avg()
    monitor = MachineMonitor().start()
    targets = _build_targets(names, settings, work, args)
    info: dict[str, dict[str, Any]] = {}
    for cls in ALL_TARGETS:
        info[cls.name] = {
            "label": cls.label,
            "modes": list(cls.modes),
            "available": False,
            "reason": "not selected (--targets)",
        }
    info.update({t.name: t.info() for t in targets})
    failed = False
    results: dict[str, Any] = {}
    spark_version: str | None = None
    try:
        ready = _start(targets, info, settings)
        failed = any(i.get("failed") for i in info.values())
        for t in ready:
            if isinstance(t, InProcessTarget):
                spark_version = t.version
        ctx = Context(settings, ready)
        if ready:
            for name in ORDER:
                if name not in workloads:
                    continue
                if time.monotonic() - started > settings.soft_limit_s:
                    log.warning(
                        "Skipping %s: the run is past its %.0f s soft limit",
                        name,
                        settings.soft_limit_s,
                    )
                    results[name] = {"_skipped": "the run was past its soft time limit"}
                    continue
                log.info("Workload %s on %s", name, ", ".join(t.name for t in ready))
                began = time.monotonic()
                mark = monitor.mark()
                try:
                    results[name] = WORKLOADS[name](ctx)
                except Exception as exc:
                    failed = True
                    log.exception("Workload %s failed", name)
                    results[name] = {"_error": f"{type(exc).__name__}: {exc}"}
                results[name]["_seconds"] = round(time.monotonic() - began, 1)
                results[name]["_machine"] = monitor.since(mark)
        else:
            log.error("No target could be started")
            failed = True
    finally:
        for t in reversed(targets):
            if info[t.name].get("available") or info[t.name].get("failed"):
                try:
                    t.stop()
                except Exception:
                    log.exception("Stopping %s failed", t.label)
        stop_all()
        monitor.stop()
        timer.cancel()
        if args.keep_work or failed:
            log.info("Work directory kept: %s", work)
        else:
            shutil.rmtree(work, ignore_errors=True)

    ratios = report.compute_ratios(results)
    doc: dict[str, Any] = {
        "schema": 2,
        "mode": settings.mode,
        "started_at": started_at,
        "duration_s": round(time.monotonic() - started, 1),
        "load_avg": {"start": round(load_start, 1), "end": round(load_avg(), 1)},
        "quiet": monitor.summary(args.noisy_threshold),
        "complete": complete,
        "machine": report.machine_info(spark_version),
        "settings": settings.as_dict(),
        "targets": info,
        "workloads": results,
        "ratios": ratios,
        "goals": report.compute_goals(results, ratios),
    }
    report.write_json(output, doc)
    sys.stdout.write(report.render_text(doc))
    sys.stdout.flush()
    log.info("Results written to %s", _shown(output))
    quiet = doc["quiet"]
    if quiet.get("noisy"):
        log.warning("Noisy run: %s", quiet_summary(quiet))
    elif quiet.get("error") is None:
        log.info("Quiet machine: %s", quiet_summary(quiet))
    docs = complete and not args.no_docs and BENCHMARKS_MD.exists()
    # The exit code does not change on a noisy run: only the docs are refused.
    if docs and _docs_allowed(doc, args.allow_noisy) and report.update_markdown(BENCHMARKS_MD, doc):
        log.info("Results section of %s rewritten", BENCHMARKS_MD.name)
    return 1 if failed else 0


def _docs_allowed(doc: dict[str, Any], allow_noisy: bool) -> bool:
    """False (and why, logged) when ``doc`` holds a noisy run and that is not allowed."""
    noisy = noisy_sources(doc)
    if not noisy:
        return True
    if allow_noisy:
        log.warning("Writing %s from a noisy run (--allow-noisy); it says so", BENCHMARKS_MD.name)
        return True
    for line in noisy:
        log.error("Noisy: %s", line)
    log.error(
        "Not rewriting %s: other processes took CPU during the run (above %s of one core); "
        "run again on a quiet machine, or pass --allow-noisy to publish it marked as noisy",
        BENCHMARKS_MD.name,
        _threshold_text(doc),
    )
    return False


def _threshold_text(doc: dict[str, Any]) -> str:
    shares = [(doc.get("quiet") or {}).get("threshold_core_share")]
    shares += [(m.get("quiet") or {}).get("threshold_core_share") for m in doc.get("merged", [])]
    known = [s for s in shares if s is not None]
    return f"{min(known):.0%}" if known else f"{NOISY_CORE_SHARE:.0%}"


def _render(path: Path, *, docs: bool, allow_noisy: bool = False) -> int:
    """Print a saved result; rewrite BENCHMARKS.md from it (2 if refused as noisy)."""
    import orjson

    doc = orjson.loads(path.read_bytes())
    sys.stdout.write(report.render_text(doc))
    if docs and doc.get("complete") and BENCHMARKS_MD.exists():
        if not _docs_allowed(doc, allow_noisy):
            return 2
        report.update_markdown(BENCHMARKS_MD, doc)
        log.info("Results section of %s rewritten", BENCHMARKS_MD.name)
    return 0


def _merge(partial: Path, complete: Path, *, docs: bool, allow_noisy: bool = False) -> int:
    """Merge a partial result into the complete one and render it. A noisy
    partial run is refused as a whole (nothing is written) unless ``allow_noisy``:
    the complete JSON is the record BENCHMARKS.md is rendered from."""
    import orjson

    base = orjson.loads(complete.read_bytes())
    if not base.get("complete"):
        log.error("%s is not the result of a complete run", _shown(complete))
        return 2
    part = orjson.loads(partial.read_bytes())
    if noisy_sources(part) and not allow_noisy:
        for line in noisy_sources(part):
            log.error("Noisy: %s", line)
        log.error(
            "Not merging %s: it is a noisy run; run it again on a quiet machine, "
            "or pass --allow-noisy to merge it marked as noisy",
            _shown(partial),
        )
        return 2
    try:
        doc = report.merge(base, part)
    except ValueError as exc:
        log.error("Cannot merge %s into %s: %s", _shown(partial), _shown(complete), exc)
        return 2
    report.write_json(complete, doc)
    log.info("Workloads of %s merged into %s", _shown(partial), _shown(complete))
    return _render(complete, docs=docs, allow_noisy=allow_noisy)


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def _start(targets: list[Target], info: dict[str, dict[str, Any]], settings: Any) -> list[Target]:
    """Launch all servers first (they boot in parallel), then wait for each."""
    launched: list[Target] = []
    for t in targets:
        reason = t.unavailable()
        if reason:
            info[t.name].update(available=False, reason=reason)
            log.warning("%s: %s", t.label, reason)
            continue
        try:
            t.launch()
            launched.append(t)
        except Exception as exc:
            info[t.name].update(available=False, failed=True, reason=f"launch failed: {exc}")
            log.error("%s could not be launched: %s", t.label, exc)
    ready: list[Target] = []
    for t in launched:
        log.info("Waiting for %s", t.label)
        try:
            t.wait_ready()
        except Exception as exc:
            info[t.name].update(available=False, failed=True, reason=f"did not start: {exc}")
            log.error("%s did not start: %s", t.label, exc)
            t.stop()
            continue
        info[t.name].update(available=True, startup_s=round(t.startup_s or 0.0, 2))
        log.info("%s ready after %.1f s", t.label, t.startup_s or 0.0)
        ready.append(t)
    return ready
