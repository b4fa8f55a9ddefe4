"""Fixtures for the HiveServer2 endpoint: in-process endpoints, a raw Thrift
client, client virtual environments and the real gateway process.

Third-party clients pin conflicting thrift/sasl versions, so each gets its own
virtual environment, created on first use and cached under ``.test-venvs/`` at
the repository root (git-ignored); they run in subprocesses against an
endpoint on a free loopback port.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from TCLIService import ttypes
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from sparkgate.endpoints.hiveserver2.endpoint import HiveServer2Endpoint
from sparkgate.endpoints.hiveserver2.options import AuthMode, HiveServer2Settings, TransportMode
from sparkgate.security.passwords import hash_password
from sparkgate.service.gateway import SparkGatewayService
from tests.locks import exclusive
from tests.service.conftest import make_service

REPO = Path(__file__).resolve().parents[2]
VENVS = REPO / ".test-venvs"
_VENV_LOCK = threading.Lock()

PYHIVE_REQUIREMENTS = (
    "PyHive[hive_pure_sasl,sqlalchemy]==0.7.*",
    "thrift==0.16.*",
    "thrift-sasl==0.4.*",
    "pure-sasl==0.6.*",
    "sqlalchemy==2.0.*",
)
IMPYLA_REQUIREMENTS = ("impyla==0.24.*",)
# dbt-core 1.11+ needs a parser wheel downloaded from outside PyPI at install time;
# dbt-spark 1.11 is the first whose use_ssl works with SASL (pure-sasl through PyHive).
DBT_REQUIREMENTS = ("dbt-core==1.10.*", "dbt-spark[PyHive]==1.11.*")

USER, PASSWORD = "alice", "s3cret-pw"


def client_venv(name: str, requirements: Sequence[str]) -> Path:
    """The Python of a cached virtual environment with ``requirements``."""
    key = hashlib.sha256(("\n".join(requirements) + sys.version).encode("utf-8")).hexdigest()[:12]
    root = VENVS / f"{name}-{key}"
    python = root / "bin" / "python"
    ready = root / ".ready"
    with _VENV_LOCK, exclusive(f"venv-{name}-{key}"):
        if ready.exists():
            return python
        shutil.rmtree(root, ignore_errors=True)
        root.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                *requirements,
            ],
            check=True,
            timeout=1200,
        )
        ready.touch()
    return python


def run_client(
    python: Path, script: str, *args: str, timeout: float = 180, check: bool = True
) -> Any:
    """Run ``script`` in a client venv; it prints one JSON document on its last line."""
    proc = subprocess.run(
        [str(python), "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"client failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if not lines:
        raise AssertionError(f"client printed nothing:\n{proc.stderr}")
    return json.loads(lines[-1])


@dataclass
class Running:
    endpoint: HiveServer2Endpoint
    service: SparkGatewayService

    @property
    def port(self) -> int:
        assert self.endpoint.binary_port is not None
        return self.endpoint.binary_port

    @property
    def http_port(self) -> int:
        assert self.endpoint.http_port is not None
        return self.endpoint.http_port


@contextlib.contextmanager
def running_endpoint(service: SparkGatewayService, **settings: Any) -> Iterator[Running]:
    values: dict[str, Any] = {"port": 0, "http_port": 0, "transport_mode": TransportMode.ALL}
    values.update(settings)
    endpoint = HiveServer2Endpoint(service, HiveServer2Settings(**values))
    endpoint.start()
    try:
        yield Running(endpoint, service)
    finally:
        endpoint.stop()


@pytest.fixture(scope="session")
def hs2_service(spark: Any) -> Iterator[SparkGatewayService]:
    svc = make_service(spark, **{"sql-gateway.result.buffer-rows": "20000"})
    yield svc
    svc.stop()


@pytest.fixture(scope="session")
def hs2(hs2_service: SparkGatewayService) -> Iterator[Running]:
    """An endpoint with authentication NONE, binary and HTTP."""
    with running_endpoint(hs2_service, fetch_timeout=30.0) as running:
        yield running


@pytest.fixture(scope="session")
def password_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hs2-auth") / "passwords"
    path.write_text(f"{USER}:{hash_password(PASSWORD, iterations=1000)}\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def hs2_plain(hs2_service: SparkGatewayService, password_file: Path) -> Iterator[Running]:
    """An endpoint with authentication PLAIN against a password file."""
    with running_endpoint(
        hs2_service, authentication=AuthMode.PLAIN, password_file=password_file
    ) as running:
        yield running


@pytest.fixture(scope="session")
def pyhive_python() -> Path:
    return client_venv("pyhive", PYHIVE_REQUIREMENTS)


class RawClient:
    """TCLIService over NOSASL binary with the generated client, for exact wire checks."""

    def __init__(self, port: int, *, framed: bool = False) -> None:
        from TCLIService import TCLIService

        sock = TSocket.TSocket("127.0.0.1", port)
        sock.setTimeout(120_000)
        self.transport: Any = (
            TTransport.TFramedTransport(sock) if framed else TTransport.TBufferedTransport(sock)
        )
        self.transport.open()
        self.client = TCLIService.Client(TBinaryProtocol(self.transport))

    def close(self) -> None:
        self.transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


def wait_for(predicate: Any, timeout: float = 30.0, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


@pytest.fixture
def client(hs2: Running) -> Iterator[RawClient]:
    """A raw Thrift client of the shared HiveServer2 endpoint."""
    raw = RawClient(hs2.port)
    yield raw
    raw.close()


@pytest.fixture
def session(client: RawClient) -> Iterator[Any]:
    """A session (protocol V10, user ``tester``) of ``client``, closed after the test."""
    resp = client.OpenSession(
        ttypes.TOpenSessionReq(
            client_protocol=ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10,
            username="tester",
        )
    )
    assert resp.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS, resp.status
    yield resp.sessionHandle
    client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=resp.sessionHandle))
