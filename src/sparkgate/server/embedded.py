"""Building the gateway service for the SQL client's embedded mode.

The client may not import the service (layer rules); the command line calls
this module, which builds the real :class:`SparkGatewayService` from the same
configuration the gateway reads (``conf/config.yaml`` plus ``-D`` options)
and hands it to the client's embedded executor. Spark's console noise
already goes to the data directory's log; this module sends the Python
side's logging there too, so the terminal holds only what the client prints.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
from collections.abc import Iterator, Mapping
from pathlib import Path

from sparkgate.api.config import Configuration
from sparkgate.server import datadir
from sparkgate.server.launcher import load_gateway_configuration
from sparkgate.server.pidfiles import SQL_CLIENT
from sparkgate.service import options
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.sql.secret_logs import SecretMaskingFilter, install_secret_masking

__all__ = [
    "CLIENT_LOG_FILE",
    "build_embedded_service",
    "configure_client_logging",
    "data_dir",
    "holding_data_dir",
    "load_client_configuration",
]

CLIENT_LOG_FILE = "sql-client.log"
_FORMAT = "%(asctime)s %(levelname)-5s %(name)s: %(message)s"


def load_client_configuration(conf_dir: Path | None, overrides: Mapping[str, str]) -> Configuration:
    """The gateway's configuration; an embedded client's sessions never expire while idle.

    A user who sits at the prompt for longer than the gateway's idle timeout
    still has their session; ``-Dsql-gateway.session.idle-timeout`` still wins.
    """
    values = dict(overrides)
    values.setdefault(options.SESSION_IDLE_TIMEOUT.key, "0 ms")
    return load_gateway_configuration(conf_dir, values)


def data_dir(config: Configuration) -> Path:
    return Path(config.get(options.DATA_DIR))


def configure_client_logging(config: Configuration, *, debug: bool = False) -> Path:
    """Log to ``<data-dir>/log/sql-client.log`` only: nothing reaches the terminal.

    Secret values are masked, as in the gateway's log.
    """
    install_secret_masking()
    log_dir = data_dir(config) / "log"
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / CLIENT_LOG_FILE
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.handlers.RotatingFileHandler(
        path, maxBytes=20 * 1024 * 1024, backupCount=3, encoding="utf-8"
    )
    handler.setFormatter(logging.Formatter(_FORMAT))
    handler.addFilter(SecretMaskingFilter())
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    logging.getLogger("py4j").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)
    return path


def build_embedded_service(config: Configuration) -> SparkGatewayService:
    """The real service, not started yet; ``start()`` starts Spark in this process."""
    return SparkGatewayService(config)


@contextlib.contextmanager
def holding_data_dir(config: Configuration) -> Iterator[None]:
    """Hold the data directory for an embedded client (see :mod:`sparkgate.server.datadir`).

    Raises ConfigurationError at once, naming the running gateway and how to
    reach it, when a gateway (or another embedded client) holds the data
    directory's embedded metastore.
    """
    with datadir.holding_data_dir(config, SQL_CLIENT):
        yield
