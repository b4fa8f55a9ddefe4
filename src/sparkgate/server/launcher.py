"""Building and running the gateway: the composition root (FLIP-91 gateway script).

This is the one place that builds the concrete service on Spark and hands it
to the endpoints. ``run_foreground`` serves until SIGINT or SIGTERM, then
stops endpoints, cancels what runs and stops Spark, in that order.
``start_background`` runs the same in a detached child, records its pid and
returns once the endpoints answer; ``stop`` ends the last one, or all.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType

from sparkgate.api.config import Configuration
from sparkgate.api.endpoint import Endpoint
from sparkgate.api.errors import EndpointError
from sparkgate.server.config import load_configuration
from sparkgate.server.endpoints import (
    ENDPOINT_TYPE,
    create_endpoints,
    discover_factories,
    endpoint_options,
    endpoint_type_option,
)
from sparkgate.server.logs import configure_logging
from sparkgate.server.ports import check_ports
from sparkgate.service import options
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.spark.checks import SPARK_CHECKED_OPTIONS
from sparkgate.service.spark.engine import ui_url

__all__ = [
    "GATEWAY_OPTIONS",
    "load_gateway_configuration",
    "pid_file",
    "run_foreground",
    "start_background",
    "stop_background",
]

log = logging.getLogger(__name__)

GATEWAY_OPTIONS = (*options.SERVICE_OPTIONS, ENDPOINT_TYPE)
#: Endpoint options are validated against the endpoint that owns them.
KNOWN_PREFIXES = ("sql-gateway.endpoint.",)
PID_DIR_ENV = "SPARKGATE_PID_DIR"
_START_TIMEOUT = 300.0
_STOP_TIMEOUT = 60.0


def load_gateway_configuration(
    conf_dir: Path | None, overrides: Mapping[str, str]
) -> Configuration:
    """The configuration, every value checked that can be checked without Spark.

    Endpoint options are checked by their declarations under their full keys,
    a few Spark options by their form, in one message style.
    """
    factories = discover_factories()
    known = (
        *options.SERVICE_OPTIONS,
        endpoint_type_option(factories),
        *endpoint_options(factories),
        *SPARK_CHECKED_OPTIONS,
    )
    return load_configuration(conf_dir, overrides, known, known_prefixes=KNOWN_PREFIXES)


def _run_dir(config: Configuration) -> Path:
    return Path(config.get(options.DATA_DIR)) / "run"


def pid_file() -> Path:
    """One pid file per user, as Flink's (``SPARKGATE_PID_DIR`` moves it)."""
    base = os.environ.get(PID_DIR_ENV) or os.path.join(
        tempfile.gettempdir(), f"sparkgate-{getpass.getuser()}"
    )
    return Path(base) / "sparkgate-gateway.pid"


def _ready_file(config: Configuration, pid: int) -> Path:
    return _run_dir(config) / f"gateway-{pid}.ready"


def run_foreground(config: Configuration, *, stop: threading.Event | None = None) -> None:
    data_dir = Path(config.get(options.DATA_DIR))
    configure_logging(data_dir / "log")
    stop = stop or threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        log.info("Received %s, shutting down", signal.Signals(signum).name)
        stop.set()

    _handle_signals(on_signal)
    service = SparkGatewayService(config)
    endpoints = create_endpoints(config, service)  # bad endpoint options fail before Spark
    check_ports(config)  # so does a port in use
    started: list[Endpoint] = []
    ready = _ready_file(config, os.getpid())
    log.info("Starting Spark (data directory %s)", data_dir)
    service.start()
    # PySpark's SparkContext replaces the SIGINT handler with one that raises
    # KeyboardInterrupt wherever the main thread is; Ctrl-C must stop as SIGTERM does.
    _handle_signals(on_signal)
    try:
        if stop.is_set():  # Ctrl-C while Spark started: serve nothing
            return
        for endpoint in endpoints:
            endpoint.start()
            started.append(endpoint)
        info = service.get_gateway_info()
        addresses = [endpoint.address for endpoint in started]
        ready.parent.mkdir(parents=True, exist_ok=True)
        ready.write_text(json.dumps({"pid": os.getpid(), "addresses": addresses}))
        log.info("Spark UI: %s", ui_url() or "off (spark.ui.enabled=false)")
        log.info(
            "sparkgate %s is running on Spark %s; endpoints: %s. Ctrl-C stops it.",
            info.version,
            info.engine_version,
            ", ".join(addresses) or "none",
        )
        stop.wait()
    finally:
        ready.unlink(missing_ok=True)
        for endpoint in reversed(started):  # stop accepting first
            try:
                endpoint.stop()
            except Exception:
                log.warning("Stopping endpoint %s failed", endpoint.address, exc_info=True)
        service.stop()  # closes sessions: cancels running operations


def _handle_signals(handler: Callable[[int, FrameType | None], None]) -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)


def _read_pids(path: Path) -> list[int]:
    if not path.exists():
        return []
    return [int(line) for line in path.read_text().split() if line.strip().isdigit()]


def _write_pids(path: Path, pids: Sequence[int]) -> None:
    if pids:
        path.write_text("".join(f"{pid}\n" for pid in pids))
    else:
        path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_background(config: Configuration, argv: Sequence[str]) -> list[str]:
    """Start ``start-foreground`` with ``argv`` detached; wait until it serves.

    Returns the endpoint addresses. The child's terminal output goes to
    ``<data-dir>/log/gateway-console.log``.
    """
    log_dir = Path(config.get(options.DATA_DIR)) / "log"
    log_dir.mkdir(parents=True, exist_ok=True)
    console = log_dir / "gateway-console.log"
    with console.open("ab") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "sparkgate.cli", "gateway", "start-foreground", *argv],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    pids = pid_file()
    pids.parent.mkdir(parents=True, exist_ok=True)
    _write_pids(pids, [*_read_pids(pids), child.pid])
    ready = _ready_file(config, child.pid)
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if ready.exists():
            try:
                addresses: list[str] = json.loads(ready.read_text())["addresses"]
            except (ValueError, KeyError):
                time.sleep(0.05)  # being written
                continue
            return addresses
        if child.poll() is not None:
            _write_pids(pids, [p for p in _read_pids(pids) if p != child.pid])
            tail = console.read_text(errors="replace").splitlines()[-15:]
            raise EndpointError(
                f"The gateway exited with status {child.returncode} during start-up:\n"
                + "\n".join(tail)
            )
        time.sleep(0.1)
    child.terminate()
    raise EndpointError(f"The gateway did not start within {_START_TIMEOUT:.0f} s; see {console}")


def stop_background(*, stop_all: bool = False) -> list[int]:
    """SIGTERM the last started gateway (or all), wait for them; returns their pids."""
    path = pid_file()
    pids = [pid for pid in _read_pids(path) if _alive(pid)]
    targets = pids if stop_all else pids[-1:]
    for pid in targets:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + _STOP_TIMEOUT
    for pid in targets:
        while _alive(pid) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.1)
        if _alive(pid):
            log.warning("Gateway %s did not stop in time; killing it", pid)
            os.kill(pid, signal.SIGKILL)
    _write_pids(path, [pid for pid in pids if pid not in targets])
    return targets


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):  # not our child: nothing to reap
        os.waitpid(pid, os.WNOHANG)
