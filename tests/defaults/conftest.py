"""The "defaults" tier: the product exactly as a user gets it.

Nothing here sets a Spark option, a session time zone, shuffle partitions, a
data directory or any option a user would not set. The only things changed
are those a user's machine decides: ``HOME`` is a fresh temporary directory
(so the default data dir ``~/.sparkgate`` is a new one), the configuration is
the repository's ``conf/`` (what ``make run`` reads), and the REST port is a
free one (a user's 8083 may be taken on a test machine; the port changes no
behaviour).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.processes import foreground_gateway, free_port

__all__ = ["REPO_CONF", "DefaultGateway", "default_env", "default_gateway"]

REPO_CONF = Path(__file__).resolve().parents[2] / "conf"


def default_env(home: Path) -> dict[str, str]:
    """The environment of a user whose home is ``home``: no sparkgate variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARKGATE_", "SPARK_"))}
    env["HOME"] = str(home)
    env["SPARKGATE_CONF_DIR"] = str(REPO_CONF)  # what `make run` reads from the repository root
    return env


@dataclass
class DefaultGateway:
    """A gateway started with ``sparkgate gateway start-foreground`` and defaults."""

    url: str
    port: int
    home: Path
    process: subprocess.Popen[bytes]

    @property
    def data_dir(self) -> Path:
        return self.home / ".sparkgate"

    @property
    def env(self) -> dict[str, str]:
        return default_env(self.home)


@pytest.fixture(scope="session")
def default_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DefaultGateway]:
    home = tmp_path_factory.mktemp("home")
    port = free_port()
    options = [f"-Dsql-gateway.endpoint.rest.port={port}"]
    with foreground_gateway(options, port=port, cwd=home, env=default_env(home)) as (url, process):
        yield DefaultGateway(url, port, home, process)
