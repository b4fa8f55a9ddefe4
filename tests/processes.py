"""Helpers for tests that run the real gateway in a subprocess."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import psutil

__all__ = [
    "Rest",
    "StatementFailed",
    "foreground_gateway",
    "free_port",
    "gateway",
    "kill_with_spark",
    "log_tail",
    "read_until_running",
    "spark_options",
    "wait_for",
]

#: A user's environment, without a configuration directory of the machine's.
ENV = {**os.environ, "SPARKGATE_CONF_DIR": ""}

#: The Spark master of the gateways the end-to-end tests start; ``make test-cluster``
#: points it at a standalone cluster (tests/conftest.py starts one).
MASTER_ENV = "SPARKGATE_TEST_MASTER"


def spark_options(local: str = "local[2]") -> list[str]:
    """``-Dspark.master=…`` for a test gateway: ``local`` (a test's own choice of
    cores), or the cluster of ``make test-cluster`` with what its executors need."""
    master = os.environ.get(MASTER_ENV, "").strip()
    if not master:
        return [f"-Dspark.master={local}"]
    cores = local.removeprefix("local[").removesuffix("]")
    return [
        f"-Dspark.master={master}",
        # As many one-core executors as the test's local[N] has threads: a standalone
        # application otherwise takes every core, and a second gateway gets none.
        f"-Dspark.cores.max={cores if cores.isdigit() else 2}",
        "-Dspark.executor.cores=1",
        "-Dspark.executor.memory=640m",
        f"-Dspark.pyspark.python={sys.executable}",
    ]


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def read_until_running(proc: subprocess.Popen[str], timeout: float) -> list[str]:
    """The gateway's output lines up to the one saying it serves; fails if it exits first."""
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    for line in proc.stdout:
        lines.append(line)
        if "is running on Spark" in line:
            return lines
        assert time.monotonic() < deadline, "".join(lines)
    raise AssertionError("gateway exited early:\n" + "".join(lines))


@contextlib.contextmanager
def foreground_gateway(
    options: Sequence[str],
    *,
    port: int,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float = 240,
    ca: Path | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``sparkgate gateway start-foreground OPTIONS`` serving REST on ``port``.

    Yields its URL and process once REST answers; its output goes to
    ``cwd/console.log``; it is stopped (SIGTERM, then SIGKILL) on exit. With
    ``ca``, REST serves HTTPS under a certificate that CA signed.
    """
    with (cwd / "console.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "sparkgate.cli", "gateway", "start-foreground", *options],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=dict(env),
        )
        url = f"{'https' if ca else 'http'}://127.0.0.1:{port}"
        verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=ca) if ca else True
        deadline = time.monotonic() + timeout
        try:
            while True:
                assert process.poll() is None, (cwd / "console.log").read_text()
                try:
                    response = httpx.get(f"{url}/v1/api_versions", timeout=2, verify=verify)
                    if response.status_code in (200, 401):  # 401: it serves, with authentication
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "the gateway did not start in time"
                time.sleep(0.2)
            yield url, process
        finally:
            process.terminate()
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()


class StatementFailed(Exception):
    """The gateway answered a statement's result with ``{"errors": [...]}``."""


class Rest:
    """One session on a gateway's REST endpoint (Flink's API, V4)."""

    def __init__(
        self, url: str, session: str | None = None, http: httpx.Client | None = None
    ) -> None:
        """A new session, or the existing ``session``; over ``http`` if given."""
        self.http = http or httpx.Client(base_url=url, timeout=60)
        if session is None:
            response = self.http.post("/v4/sessions", json={"sessionName": "e2e"})
            assert response.status_code == 200, response.text
            session = str(response.json()["sessionHandle"])
        self.session = session

    def __enter__(self) -> Rest:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with contextlib.suppress(httpx.HTTPError):
            self.http.delete(f"/v4/sessions/{self.session}")
        self.http.close()

    def submit(self, statement: str, config: Mapping[str, str] | None = None) -> str:
        """Submit ``statement``; its operation handle."""
        body: dict[str, Any] = {"statement": statement}
        if config:
            body["executionConfig"] = dict(config)
        response = self.http.post(f"/v4/sessions/{self.session}/statements", json=body)
        assert response.status_code == 200, response.text
        return str(response.json()["operationHandle"])

    def run(
        self, statement: str, config: Mapping[str, str] | None = None, timeout: float = 600
    ) -> tuple[list[str], list[list[Any]]]:
        """The column names and every row of ``statement``'s result (all pages)."""
        operation = self.submit(statement, config)
        uri: str | None = f"/v4/sessions/{self.session}/operations/{operation}/result/0"
        uri = f"{uri}?rowFormat=JSON"
        columns: list[str] = []
        rows: list[list[Any]] = []
        deadline = time.monotonic() + timeout
        while uri:
            assert time.monotonic() < deadline, f"no end of result in {timeout} s: {statement}"
            page = self.http.get(uri)
            payload = page.json()
            if "errors" in payload:
                raise StatementFailed("\n".join(str(e) for e in payload["errors"]))
            assert page.status_code == 200, page.text
            results = payload.get("results") or {}
            columns = [c["name"] for c in results.get("columns", [])] or columns
            rows += [row["fields"] for row in results.get("data", [])]
            uri = payload.get("nextResultUri")
        return columns, rows

    def rows(self, statement: str, config: Mapping[str, str] | None = None) -> list[list[Any]]:
        return self.run(statement, config)[1]

    def record(self, statement: str) -> dict[str, Any]:
        """A one-row result as column name -> value."""
        columns, [row] = self.run(statement)
        return dict(zip(columns, row, strict=True))

    def tables(self, database: str | None = None) -> set[str]:
        columns, rows = self.run("SHOW TABLES" + (f" IN {database}" if database else ""))
        index = next(i for i, c in enumerate(columns) if c in ("table name", "tableName"))
        return {str(row[index]) for row in rows}


def log_tail(data_dir: Path, run_dir: Path) -> str:
    """The end of the gateway's console and log, for failure messages."""
    parts = []
    for path in (run_dir / "console.log", data_dir / "log" / "sparkgate.log"):
        if path.exists():
            lines = path.read_text(errors="replace").splitlines()[-40:]
            parts.append(f"--- {path}\n" + "\n".join(lines))
    return "\n".join(parts)


@contextlib.contextmanager
def gateway(
    run_dir: Path, data_dir: Path, *extra: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A gateway process serving REST on ``data_dir``; its console log in ``run_dir``."""
    run_dir.mkdir(parents=True)
    port = free_port()
    options = [
        f"-Dsql-gateway.data-dir={data_dir}",
        f"-Dsql-gateway.endpoint.rest.port={port}",
        *spark_options(),
        "-Dspark.ui.enabled=false",
        "-Dspark.sql.shuffle.partitions=4",
        # ENDLESS sleeps in its tasks with reflect(), off by default.
        "-Dsql-gateway.security.allowed-host-statements=reflection",
        *extra,
    ]
    if not any(o.startswith("-Dsql-gateway.endpoint.type=") for o in extra):
        options.append("-Dsql-gateway.endpoint.type=rest")
    with foreground_gateway(options, port=port, cwd=run_dir, env=ENV, timeout=300) as running:
        yield running


def kill_with_spark(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the gateway and every process under it (Spark's JVM is in a session
    of its own, so a process group would miss it), as a crash would end them."""
    tree = [psutil.Process(process.pid)]
    tree += tree[0].children(recursive=True)
    assert any("java" in p.name() for p in tree[1:]), [p.cmdline() for p in tree]
    for proc in tree:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.send_signal(signal.SIGKILL)
    process.wait(60)
    _, alive = psutil.wait_procs(tree[1:], timeout=60)
    assert not alive, alive


def wait_for(condition: Callable[[], bool], timeout: float, explain: Callable[[], str]) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, explain()
        time.sleep(1)
