"""A real gateway process on a free loopback port, shared by the end-to-end tests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.processes import free_port


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
    log = (data_dir / "console.log").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sparkgate.cli",
            "gateway",
            "start-foreground",
            f"-Dsql-gateway.data-dir={data_dir}",
            "-Dsql-gateway.endpoint.type=rest",
            f"-Dsql-gateway.endpoint.rest.port={port}",
            "-Dspark.master=local[2]",
            "-Dspark.ui.enabled=false",
            "-Dspark.sql.shuffle.partitions=4",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=data_dir,
        env={**os.environ, "SPARKGATE_CONF_DIR": ""},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240
    try:
        while True:
            assert process.poll() is None, (data_dir / "console.log").read_text()
            try:
                if httpx.get(f"{url}/v1/api_versions", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the gateway did not start in time"
            time.sleep(0.2)
        yield GatewayProcess(url, process, data_dir)
    finally:
        process.terminate()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
