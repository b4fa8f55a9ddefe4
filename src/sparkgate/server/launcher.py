"""Building and running the gateway: the composition root (FLIP-91 gateway script).

This is the one place that builds the concrete service on Spark and hands it
to the endpoints. ``run_foreground`` serves until SIGINT or SIGTERM; then the
service takes no new work while running statements and result streams end
(``sql-gateway.shutdown.timeout``, cut short by a second signal), and the
endpoints, the service (streaming jobs stop with a savepoint) and Spark stop,
in that order.
Every running gateway has a pid file in its data directory
(:mod:`sparkgate.server.pidfiles`). ``start_background`` runs the same in a
detached child and returns once its pid file says it serves;
``stop_background`` ends a gateway of one data directory: the one serving a
given port, else the last started, or all of them.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from sparkgate.api.config import Configuration
from sparkgate.api.endpoint import Endpoint
from sparkgate.api.errors import EndpointError
from sparkgate.security.authentication import authenticator_options
from sparkgate.server.config import load_configuration
from sparkgate.server.datadir import check_data_dir_free, holding_data_dir
from sparkgate.server.endpoints import (
    ENDPOINT_TYPE,
    create_endpoints,
    discover_factories,
    endpoint_options,
    endpoint_type_option,
)
from sparkgate.server.logs import configure_logging
from sparkgate.server.pidfiles import (
    GATEWAY,
    RunningGateway,
    is_gateway_process,
    pid_file,
    read_pid_file,
    remove_pid_file,
    running_gateways,
    write_pid_file,
)
from sparkgate.server.ports import check_ports, check_unauthenticated_binds
from sparkgate.service import options
from sparkgate.service.spark.checks import SPARK_CHECKED_OPTIONS

if TYPE_CHECKING:
    from sparkgate.service.gateway import SparkGatewayService

__all__ = [
    "GATEWAY_OPTIONS",
    "load_gateway_configuration",
    "run_foreground",
    "start_background",
    "stop_background",
]

log = logging.getLogger(__name__)

GATEWAY_OPTIONS = (*options.SERVICE_OPTIONS, ENDPOINT_TYPE)
#: Endpoint options are validated against the endpoint that owns them.
KNOWN_PREFIXES = ("sql-gateway.endpoint.",)
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
        *authenticator_options(),
        *SPARK_CHECKED_OPTIONS,
    )
    return load_configuration(conf_dir, overrides, known, known_prefixes=KNOWN_PREFIXES)


def run_foreground(config: Configuration, *, stop: threading.Event | None = None) -> None:
    # Imported here: `start`, `stop` and `status` run in processes that never
    # build the service, and it is most of the gateway's import time.
    from sparkgate.service.gateway import SparkGatewayService

    data_dir = Path(config.get(options.DATA_DIR))
    configure_logging(data_dir / "log")
    stop = stop or threading.Event()
    received: list[int] = []

    # A signal handler runs between two bytecodes of the main thread, possibly
    # while it holds a lock (an Event's condition, a logging handler's): it only
    # records the signal, and the main thread acts on it.
    def on_signal(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)

    _handle_signals(on_signal)
    service = SparkGatewayService(config)
    endpoints = create_endpoints(config, service)  # bad endpoint options fail before Spark
    check_ports(config)  # so does a port in use
    check_unauthenticated_binds(config)
    with holding_data_dir(config, GATEWAY) as held_since:  # and a data dir in use
        _serve(service, endpoints, data_dir, held_since, _Stop(stop, received), on_signal)


def _serve(
    service: SparkGatewayService,
    endpoints: Sequence[Endpoint],
    data_dir: Path,
    held_since: float,
    stop: _Stop,
    on_signal: Callable[[int, FrameType | None], None],
) -> None:
    from sparkgate.service.spark.engine import ui_url

    started: list[Endpoint] = []
    log.info("Starting Spark (data directory %s)", data_dir)
    service.start()
    # PySpark's SparkContext replaces the SIGINT handler with one that raises
    # KeyboardInterrupt wherever the main thread is; Ctrl-C must stop as SIGTERM does.
    _handle_signals(on_signal)
    try:
        if stop.requested():  # Ctrl-C while Spark started: serve nothing
            return
        for endpoint in endpoints:
            endpoint.start()
            started.append(endpoint)
        info = service.get_gateway_info()
        addresses = [endpoint.address for endpoint in started]
        # What start-up made (modules, pyspark, the engine's py4j objects: some 10^5
        # objects) lives as long as the process: out of the collector's reach, a
        # full collection no longer stalls every request for 40-100 ms.
        gc.freeze()
        write_pid_file(data_dir, os.getpid(), addresses, started=held_since)
        log.info("Spark UI: %s", ui_url() or "off (spark.ui.enabled=false)")
        log.info(
            "sparkgate %s is running on Spark %s; endpoints: %s. Ctrl-C stops it.",
            info.version,
            info.engine_version,
            ", ".join(addresses) or "none",
        )
        stop.wait()
        service.drain(service.config.get(options.SHUTDOWN_TIMEOUT).total_seconds(), stop.forced)
    finally:
        for endpoint in reversed(started):  # stop accepting first
            try:
                endpoint.stop()
            except Exception:
                log.warning("Stopping endpoint %s failed", endpoint.address, exc_info=True)
        service.stop()  # closes sessions: cancels running operations


class _Stop:
    """Set by the caller's event or by a signal the handler recorded."""

    _POLL_S = 0.2

    def __init__(self, event: threading.Event, received: list[int]) -> None:
        self._event = event
        self._received = received
        self._logged = False
        self._logged_again = False

    def requested(self) -> bool:
        if self._received and not self._logged:
            self._logged = True
            log.info("Received %s, shutting down", signal.Signals(self._received[0]).name)
        return bool(self._received) or self._event.is_set()

    def forced(self) -> bool:
        """A second signal: stop now, without waiting for what runs."""
        if len(self._received) > 1:
            if self._logged_again is False:
                self._logged_again = True
                log.info("Received %s again", signal.Signals(self._received[-1]).name)
            return True
        return False

    def wait(self) -> None:
        # Polls instead of Event.wait: the handler must never take the event's lock.
        while not self.requested():
            time.sleep(self._POLL_S)


def _handle_signals(handler: Callable[[int, FrameType | None], None]) -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)


def start_background(config: Configuration, argv: Sequence[str]) -> list[str]:
    """Start ``start-foreground`` with ``argv`` detached; wait until it serves.

    Returns the endpoint addresses. The child's terminal output goes to
    ``<data-dir>/log/gateway-console.log``.
    """
    check_ports(config)  # reported here, not from the child's console log
    check_data_dir_free(config, GATEWAY)
    data_dir = Path(config.get(options.DATA_DIR))
    log_dir = data_dir / "log"
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
    ready = pid_file(data_dir, child.pid)
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        gateway = read_pid_file(ready) if ready.exists() else None
        if gateway is not None and gateway.serving:
            return list(gateway.addresses)
        if child.poll() is not None:
            tail = console.read_text(errors="replace").splitlines()[-15:]
            raise EndpointError(
                f"The gateway exited with status {child.returncode} during start-up:\n"
                + "\n".join(tail)
            )
        time.sleep(0.1)
    child.terminate()
    raise EndpointError(f"The gateway did not start within {_START_TIMEOUT:.0f} s; see {console}")


def stop_background(
    data_dir: Path, *, port: int | None = None, stop_all: bool = False
) -> list[RunningGateway]:
    """SIGTERM gateways of ``data_dir`` and wait for them; returns those stopped.

    ``port`` picks the gateway with an endpoint on that port; otherwise the
    last started one, or every one with ``stop_all``. Foreground gateways
    count too: they have pid files like background ones.
    """
    running = running_gateways(data_dir)
    if port is not None:
        targets = [g for g in running if port in g.ports]
    else:
        targets = running if stop_all else running[-1:]
    for gateway in targets:
        os.kill(gateway.pid, signal.SIGTERM)
    deadline = time.monotonic() + _STOP_TIMEOUT
    for gateway in targets:
        while is_gateway_process(gateway.pid) and time.monotonic() < deadline:
            _reap(gateway.pid)
            time.sleep(0.1)
        if is_gateway_process(gateway.pid):
            log.warning("Gateway %s did not stop in time; killing it", gateway.pid)
            os.kill(gateway.pid, signal.SIGKILL)
            _reap(gateway.pid)
        remove_pid_file(data_dir, gateway.pid)
    return targets


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):  # not our child: nothing to reap
        os.waitpid(pid, os.WNOHANG)
