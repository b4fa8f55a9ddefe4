"""Building and running the gateway: the composition root.

This is the one place that builds the concrete service on Spark and hands it
to what serves it. ``run_foreground`` blocks until SIGINT or SIGTERM, then
stops everything in reverse order.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Mapping
from pathlib import Path
from types import FrameType

from sparkgate.api.config import Configuration
from sparkgate.server.config import load_configuration
from sparkgate.server.logs import configure_logging
from sparkgate.service import options
from sparkgate.service.gateway import SparkGatewayService

__all__ = ["build_service", "load_gateway_configuration", "run_foreground"]

log = logging.getLogger(__name__)

#: Option prefixes validated by their owners (endpoints, as they arrive).
KNOWN_PREFIXES = ("sql-gateway.endpoint.",)


def load_gateway_configuration(
    conf_dir: Path | None, overrides: Mapping[str, str]
) -> Configuration:
    return load_configuration(
        conf_dir, overrides, options.SERVICE_OPTIONS, known_prefixes=KNOWN_PREFIXES
    )


def build_service(config: Configuration) -> SparkGatewayService:
    return SparkGatewayService(config)


def run_foreground(config: Configuration, *, stop: threading.Event | None = None) -> None:
    data_dir = Path(config.get(options.DATA_DIR))
    configure_logging(data_dir / "log")
    stop = stop or threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        log.info("Received %s, shutting down", signal.Signals(signum).name)
        stop.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    service = build_service(config)
    log.info("Starting Spark (data directory %s)", data_dir)
    service.start()
    try:
        log.info(
            "sparkgate %s is running on Spark %s. The gateway service is up; "
            "no network endpoint is configured in this version yet. Ctrl-C stops it.",
            service.get_gateway_info().version,
            service.get_gateway_info().engine_version,
        )
        stop.wait()
    finally:
        service.stop()
