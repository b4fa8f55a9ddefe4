"""``python -m bench.soak [--duration 30m] [--quick] [--out PATH]``: one soak run.

Starts one gateway (default options; free ports, its own data dir, REST and
HiveServer2), waits for ``/health/ready``, runs the mixed clients for the
duration while sampling memory and health (killing the engine JVM once, at a
set point: bench/soak/restart.py), lets in-flight work finish, stops
everything (also on Ctrl-C, SIGTERM and errors), prints the report and
writes it as JSON. Exit status: 0 passed, 1 a check failed, 2 the gateway did
not start, 130 interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import logging
import math
import os
import platform
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from bench.soak import report
from bench.soak.clients import Client, Context, make_clients
from bench.soak.errors import Failure
from bench.soak.gateway import Gateway, GatewayStartError
from bench.soak.rest import Rest
from bench.soak.restart import EngineKiller
from bench.soak.sampler import Sampler
from bench.soak.settings import SoakSettings, parse_duration
from bench.soak.stats import Recorder

__all__ = ["main"]

log = logging.getLogger("bench.soak")

FULL_DURATION = "30m"
QUICK_DURATION = "3m"


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _kill_at(text: str) -> float | None:
    return None if text.strip().lower() in ("off", "never", "no") else _duration(text)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.soak",
        description="A soak run of one sparkgate gateway under mixed clients "
        "(BENCHMARKS.md, Soak). Exit status: 0 passed, 1 a check failed, "
        "2 the gateway did not start, 130 interrupted.",
    )
    p.add_argument(
        "--duration",
        type=_duration,
        default=None,
        help=f"how long the clients run: 30m, 90s, 1h (default {FULL_DURATION}; "
        f"{QUICK_DURATION} with --quick); in-flight work then finishes",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a few minutes: the big SELECT once, hostile rounds every 20 s, "
        "sessions expiring after 90 s idle",
    )
    p.add_argument(
        "--kill-engine-at",
        type=_kill_at,
        default=argparse.SUPPRESS,
        metavar="WHEN",
        help="when to SIGKILL the engine JVM once (the gateway must heal): 10m, 90s; "
        "off: never (default: a third of the way in; two thirds with --quick)",
    )
    p.add_argument("--out", type=Path, default=None, help="the JSON report's path")
    p.add_argument("--spark-master", default="local[2]", help="spark.master (default local[2])")
    p.add_argument("--json-readers", type=int, default=2, help="REST JSON readers (2)")
    p.add_argument("--arrow-readers", type=int, default=1, help="REST Arrow readers (1)")
    p.add_argument("--hs2-clients", type=int, default=2, help="HiveServer2 (PyHive) clients (2)")
    p.add_argument(
        "--big-rows",
        type=int,
        default=50_000_000,
        help="rows of the big SELECT (50000000; smaller only to test the harness)",
    )
    p.add_argument(
        "--work-dir",
        type=Path,
        default=None,
        help="the gateway's data dir and console log go here and are kept "
        "(default: a temporary directory, removed after a passing run)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p.add_argument(
        "--render",
        type=Path,
        default=None,
        metavar="REPORT",
        help="print a saved report again, its memory figures recomputed from its samples "
        "(rewrites the file); runs nothing",
    )
    return p


def _settings(args: argparse.Namespace) -> SoakSettings:
    duration = args.duration or parse_duration(QUICK_DURATION if args.quick else FULL_DURATION)
    base = (SoakSettings.quick_run if args.quick else SoakSettings.full)(duration, args.out)
    kill_at = getattr(args, "kill_engine_at", base.kill_engine_at_s)
    return dataclasses.replace(
        base,
        kill_engine_at_s=kill_at,
        spark_master=args.spark_master,
        json_readers=args.json_readers,
        arrow_readers=args.arrow_readers,
        hs2_clients=args.hs2_clients,
        big_rows=args.big_rows,
    )


def _configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)-5s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
        stream=sys.stderr,
    )
    # httpx logs every request at INFO: thousands of lines a minute. Thrift logs
    # each refused connection at ERROR; the soak counts those failures itself.
    for noisy in ("httpx", "httpcore", "pyhive"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    logging.getLogger("thrift").setLevel(logging.CRITICAL)


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    """The first SIGINT/SIGTERM stops the run (KeyboardInterrupt); later ones wait for cleanup."""
    signal.signal(signal.SIGINT, _already_stopping)
    signal.signal(signal.SIGTERM, _already_stopping)
    log.warning("%s: stopping the run", signal.Signals(signum).name)
    raise KeyboardInterrupt


def _already_stopping(_signum: int, _frame: FrameType | None) -> None:
    log.warning("Already stopping; the gateway is killed within about a minute")


def _sliced(wait: Callable[[float], object], timeout_s: float) -> None:
    """Wait in one-second slices: a signal reaches the main thread only between them
    (a lock wait is not interrupted when the signal lands on another thread)."""
    deadline = time.monotonic() + timeout_s
    while (left := deadline - time.monotonic()) > 0:
        if wait(min(left, 1.0)):
            return


def _join(threads: Sequence[threading.Thread], timeout_s: float) -> None:
    """Join each thread, all within ``timeout_s``, in slices (see :func:`_sliced`)."""
    deadline = time.monotonic() + timeout_s
    for thread in threads:
        while thread.is_alive() and (left := deadline - time.monotonic()) > 0:
            thread.join(min(left, 1.0))


def _drain(clients: Sequence[Client], ctx: Context, timeout_s: float) -> None:
    """Let in-flight work finish; past ``timeout_s`` stop it (``halt``)."""
    _join(clients, timeout_s)
    stuck = [c.name for c in clients if c.is_alive()]
    if stuck:
        log.warning("Still busy after %.0f s: %s; stopping them", timeout_s, ", ".join(stuck))
        ctx.recorder.event("clients stopped before they finished", len(stuck))
        ctx.halt.set()
        _join(clients, 30.0)


def _warm_up(url: str) -> float:
    """One statement before the clients: the first after a start is the slow one
    (cold JVM, metastore), and every client would otherwise wait on it at once."""
    rest = Rest(url)
    started = time.monotonic()
    try:
        session = rest.open_session("soak-warm-up")
        rest.json_result(session, "SELECT 1")
        rest.close_session(session)
    except Failure as failure:
        raise GatewayStartError(f"the first statement failed: {failure}") from failure
    finally:
        rest.close()
    return time.monotonic() - started


def _clients_meta(settings: SoakSettings) -> dict[str, Any]:
    idle, check = settings.session_expiry()
    return {
        "json_readers": settings.json_readers,
        "arrow_readers": settings.arrow_readers,
        "hs2_clients": settings.hs2_clients,
        "think_s": settings.think_s,
        "hostile_every_s": settings.hostile_every_s,
        "big_select_rows": settings.big_rows,
        "big_select_every_s": settings.big_every_s if math.isfinite(settings.big_every_s) else None,
        "session_churn_every_s": settings.churn_every_s,
        "session_idle_timeout_s": idle,
        "session_check_interval_s": check,
        "session_expiry_is_default": settings.idle_timeout_s is None,
        "engine_kill_at_s": settings.kill_engine_at_s,
    }


def _soak(settings: SoakSettings, gateway: Gateway, work: Path) -> dict[str, Any]:
    """Start the gateway, run the clients, and build the report."""
    started_at = dt.datetime.now().astimezone().isoformat(timespec="seconds")
    gateway.start()
    log.info("Waiting for /health/ready (console: %s)", gateway.console)
    ready_s = gateway.wait_ready(settings.start_timeout_s)
    warm_up_s = _warm_up(gateway.url)
    log.info(
        "Gateway ready in %.0f s, first statement in %.1f s; soaking for %.0f min",
        ready_s,
        warm_up_s,
        settings.duration_s / 60,
    )
    ctx = Context(settings, gateway.url, gateway.hs2_port, Recorder(), work / "scratch")
    sampler = Sampler(ctx, gateway)
    clients = make_clients(ctx)
    if settings.kill_engine_at_s is not None:
        clients.append(EngineKiller(ctx, gateway))
    interrupted = False
    try:
        sampler.start()
        for client in clients:
            client.start()
        _sliced(ctx.halt.wait, settings.duration_s)  # early only if the gateway died
        ctx.draining.set()
        if not ctx.halt.is_set():
            log.info("Duration over; in-flight work may finish (at most %.0f s)", settings.drain_s)
        _drain(clients, ctx, settings.drain_s)
    except KeyboardInterrupt:
        interrupted = True
        ctx.draining.set()
        ctx.halt.set()
        _drain(clients, ctx, 30.0)
    finally:
        sampler.stop()
        _join([sampler], 30.0)
    ctx.recorder.event("sessions expired (gateway log)", gateway.count_in_console("expired after"))
    meta = {
        "started": started_at,
        "planned_duration_s": settings.duration_s,
        "duration_s": round(ctx.elapsed(), 1),
        "interrupted": interrupted,
        "ready_after_s": round(ready_s, 1),
        "first_statement_s": round(warm_up_s, 1),
        "gateway": {
            "options": gateway.options,
            "rest": gateway.url,
            "hiveserver2_port": gateway.hs2_port,
        },
        "clients": _clients_meta(settings),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
    }
    return report.build(settings, ctx.recorder.snapshot(), meta)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _configure_logging(args.verbose)
    if args.render is not None:
        saved = report.recompute(json.loads(args.render.read_text(encoding="utf-8")))
        print(report.render(saved), flush=True)
        report.write(saved, args.render)
        return 0
    settings = _settings(args)
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="sparkgate-soak-"))
    gateway = Gateway(work / "gateway", settings.gateway_options())
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    passed = False
    try:
        result = _soak(settings, gateway, work)
        passed = bool(result["ok"])
        print(report.render(result), flush=True)
        report.write(result, settings.out)
        log.info("Report written to %s", settings.out)
        if not passed:
            return 1
        return 130 if result["interrupted"] else 0
    except GatewayStartError as exc:
        log.error("%s", exc)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        gateway.stop()
        if args.work_dir is None and passed:
            shutil.rmtree(work, ignore_errors=True)
        elif work.exists():
            log.info("Kept the gateway's data dir and console log in %s", work)
