"""One process per data directory's embedded metastore.

The default engine keeps its metastore in Derby under the data directory,
and Derby lets one process at a time boot it: a gateway and an embedded SQL
client on the same data directory (both default to ``~/.sparkgate``) would
collide at the client's first catalog statement, after a 40 s wait. Each
process therefore records itself in the data directory's pid files before it
starts Spark (:mod:`sparkgate.server.pidfiles`), and refuses to start when
another live process holds the directory, naming it and the ways out: connect
to the running gateway, or use another data directory. Engines that do not
use the embedded metastore are not limited.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from sparkgate.api.config import Configuration
from sparkgate.api.errors import ConfigurationError
from sparkgate.server.pidfiles import (
    GATEWAY,
    SQL_CLIENT,
    RunningGateway,
    remove_pid_file,
    running_gateways,
    write_pid_file,
)
from sparkgate.service import options
from sparkgate.service.spark.engine import uses_embedded_metastore

__all__ = ["check_data_dir_free", "holding_data_dir"]


def _rest_endpoint(holder: RunningGateway) -> str | None:
    for address in holder.addresses:
        parts = urlsplit(address)
        if parts.scheme in ("http", "https") and parts.hostname and parts.port:
            host = parts.hostname
            netloc = f"[{host}]:{parts.port}" if ":" in host else f"{host}:{parts.port}"
            return netloc if parts.scheme == "http" else f"https://{netloc}"
    return None


def _message(data_dir: Path, holder: RunningGateway, kind: str) -> str:
    who = "a sparkgate gateway" if holder.kind == GATEWAY else "an embedded SQL client"
    ways: list[str] = []
    endpoint = _rest_endpoint(holder)
    if kind == SQL_CLIENT and endpoint:
        ways.append(f"connect to that gateway:  sparkgate sql gateway -e {endpoint}")
    elif holder.kind == GATEWAY and holder.ports:
        ways.append(f"stop that gateway:  sparkgate gateway stop --port {holder.ports[0]}")
    elif holder.kind != GATEWAY:
        ways.append("quit that SQL client")
    command = "sparkgate sql" if kind == SQL_CLIENT else "sparkgate gateway start-foreground"
    ways.append(f"use a data directory of its own:  {command} -Dsql-gateway.data-dir=<another dir>")
    return "\n".join(
        [
            f"The data directory {data_dir} is in use by {who}, {holder.describe()}: its "
            "embedded metastore serves one process at a time. Either",
            *(f"  {'or ' if index else ''}{way}" for index, way in enumerate(ways)),
        ]
    )


def check_data_dir_free(config: Configuration, kind: str) -> None:
    """Raise :class:`ConfigurationError` if another process holds the metastore."""
    spark_conf = {k: v for k, v in config.items() if k.startswith("spark.")}
    if not uses_embedded_metastore(spark_conf):
        return
    data_dir = Path(config.get(options.DATA_DIR)).expanduser()
    holders = [h for h in running_gateways(data_dir, (GATEWAY, SQL_CLIENT)) if h.pid != os.getpid()]
    if holders:
        raise ConfigurationError(_message(data_dir, holders[0], kind))


@contextlib.contextmanager
def holding_data_dir(config: Configuration, kind: str) -> Iterator[float]:
    """Check the data directory is free, then hold it (a pid file) until the block ends.

    Yields the start time recorded, for rewriting the pid file later.
    """
    check_data_dir_free(config, kind)
    data_dir = Path(config.get(options.DATA_DIR)).expanduser()
    pid, started = os.getpid(), time.time()
    write_pid_file(data_dir, pid, kind=kind, serving=False, started=started)
    try:
        yield started
    finally:
        remove_pid_file(data_dir, pid, kind)
