"""A real gateway process on a free loopback port, shared by the end-to-end tests."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.processes import foreground_gateway, free_port, spark_options


@dataclass
class GatewayProcess:
    url: str
    process: subprocess.Popen[bytes]
    data_dir: Path


@pytest.fixture(scope="session")
def gateway_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    """``sparkgate gateway start-foreground`` serving REST, for the whole run."""
    data_dir = tmp_path_factory.mktemp("gateway")
    port = free_port()
    options = [
        f"-Dsql-gateway.data-dir={data_dir}",
        "-Dsql-gateway.endpoint.type=rest",
        f"-Dsql-gateway.endpoint.rest.port={port}",
        *spark_options(),
        "-Dspark.ui.enabled=false",
        "-Dspark.sql.shuffle.partitions=4",
    ]
    env = {**os.environ, "SPARKGATE_CONF_DIR": ""}
    with foreground_gateway(options, port=port, cwd=data_dir, env=env) as (url, process):
        yield GatewayProcess(url, process, data_dir)
