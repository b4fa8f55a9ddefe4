"""The real ``sparkgate gateway`` command in subprocesses."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.processes import free_port, read_until_running

SPARKGATE = [sys.executable, "-m", "sparkgate.cli"]
ENV = {**os.environ, "SPARKGATE_CONF_DIR": ""}


def options(data_dir: Path) -> list[str]:
    return [
        f"-Dsql-gateway.data-dir={data_dir}",
        "-Dspark.master=local[1]",
        "-Dspark.ui.enabled=false",
        "-Dsql-gateway.endpoint.type=",
    ]


def test_start_foreground_serves_rest_until_sigterm(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [
            *SPARKGATE,
            "gateway",
            "start-foreground",
            *options(tmp_path)[:-1],
            f"-Dsql-gateway.endpoint.rest.port={port}",
            # The running query is cut off after 1 s instead of the default 20.
            "-Dsql-gateway.shutdown.timeout=1 s",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        env=ENV,
    )
    try:
        lines = read_until_running(proc, 180)
        assert f"http://127.0.0.1:{port}" in lines[-1]
        base = f"http://127.0.0.1:{port}/v4"
        session = httpx.post(f"{base}/sessions", json={}).json()["sessionHandle"]
        op = httpx.post(
            f"{base}/sessions/{session}/statements",
            json={"statement": "SELECT max(hash(id)) FROM range(0, 5000000000000, 1, 2)"},
        ).json()["operationHandle"]
        status = httpx.get(f"{base}/sessions/{session}/operations/{op}/status").json()
        assert status["status"] in ("PENDING", "RUNNING", "FINISHED")
        # SIGTERM with a query running: endpoints stop, the query is cancelled, Spark stops.
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    output = "".join(lines) + rest
    assert proc.returncode == 0, output
    assert "cancelled" in output.lower() or "canceled" in output.lower(), output
    assert "Gateway service stopped" in output
    assert "still running after 1 s are cut off" in output
    assert "log4j" not in output.lower(), "Spark's console noise leaked into the terminal"
    assert (tmp_path / "log" / "sparkgate.log").exists()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_start_foreground_stops_cleanly_on_signal(tmp_path: Path, signum: signal.Signals) -> None:
    """Ctrl-C in a terminal signals the whole foreground process group (the
    gateway and Spark's JVM): it stops as SIGTERM does, exit 0, no traceback."""
    port = free_port()
    proc = subprocess.Popen(
        [
            *SPARKGATE,
            "gateway",
            "start-foreground",
            *options(tmp_path)[:-1],
            f"-Dsql-gateway.endpoint.rest.port={port}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        env=ENV,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        lines = read_until_running(proc, 180)
        os.killpg(proc.pid, signum)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    output = "".join(lines) + rest
    assert proc.returncode == 0, output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
    assert f"Received {signum.name}, shutting down" in rest
    for message in ("REST endpoint stopped", "Spark stopped", "Gateway service stopped"):
        assert message in rest, output


def gateway(action: str, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``sparkgate gateway ACTION`` on ``data_dir`` (a catalog in memory: several
    gateways may share the data directory without a shared Derby metastore)."""
    return subprocess.run(
        [
            *SPARKGATE,
            "gateway",
            action,
            *options(data_dir)[:-1],
            "-Dspark.sql.catalogImplementation=in-memory",
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=data_dir,
        timeout=240,
        env=ENV,
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_dead(pid: int, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not alive(pid)


def pids_of(data_dir: Path) -> dict[int, int]:
    """REST port -> pid, from the data directory's pid files."""
    found = {}
    for path in (data_dir / "run").glob("gateway-*.json"):
        record = json.loads(path.read_text())
        [address] = record["addresses"]
        found[int(address.rsplit(":", 1)[1])] = record["pid"]
    return found


def test_stop_picks_a_gateway_by_data_dir_and_port(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    ports = {one: [free_port(), free_port()], two: [free_port()]}
    started: list[int] = []
    try:
        for data_dir, dir_ports in ports.items():
            for port in dir_ports:
                result = gateway("start", data_dir, f"-Dsql-gateway.endpoint.rest.port={port}")
                assert result.returncode == 0, result.stdout + result.stderr
                assert f"http://127.0.0.1:{port}" in result.stdout
        by_port = {**pids_of(one), **pids_of(two)}
        started = list(by_port.values())
        assert sorted(by_port) == sorted(ports[one] + ports[two])
        assert all(alive(pid) for pid in started)

        first, second = ports[one]
        stopped = gateway("stop", one, "--port", str(first))
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert stopped.stdout == (
            f"Stopped sparkgate gateway pid {by_port[first]} (http://127.0.0.1:{first}).\n"
        )
        assert wait_dead(by_port[first])
        assert alive(by_port[second]) and alive(by_port[ports[two][0]])
        assert sorted(pids_of(one)) == [second]

        missing = gateway("stop", one, "--port", str(first))
        assert missing.returncode == 1
        assert f"No sparkgate gateway serves port {first}" in missing.stdout
        assert f"pid {by_port[second]} (http://127.0.0.1:{second})" in missing.stdout

        stopped = gateway("stop-all", two)  # the other data directory's only
        assert str(by_port[ports[two][0]]) in stopped.stdout
        assert wait_dead(by_port[ports[two][0]]) and alive(by_port[second])
        assert pids_of(two) == {}

        stopped = gateway("stop", one)  # the last started of its data directory
        assert str(by_port[second]) in stopped.stdout
        assert wait_dead(by_port[second])
        nothing = gateway("stop-all", one)
        assert nothing.returncode == 1
        assert nothing.stdout == f"No sparkgate gateway is running (data directory {one}).\n"
    finally:
        for pid in started:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_bad_option_is_a_clear_startup_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [*SPARKGATE, "gateway", "start-foreground", "-Dsql-gateway.session.idle-timout=5 min"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        env=ENV,
    )
    assert result.returncode == 2
    assert "sql-gateway.session.idle-timout" in result.stderr
    assert "sql-gateway.session.idle-timeout" in result.stderr  # the suggestion


@pytest.mark.parametrize(
    ("option", "allowed"),
    [
        ("-Dsql-gateway.endpoint.rest.port=99999", "expected a port number from 0 to 65535"),
        ("-Dexecution.runtime-mode=stream", "expected one of 'batch', 'streaming'"),
        ("-Dsql-gateway.endpoint.type=rest,hiveserve", "there is no endpoint 'hiveserve'"),
        ("-Dspark.master=local[two]", "expected local, local[N]"),
    ],
)
def test_bad_values_fail_in_one_line_before_spark_starts(
    tmp_path: Path, option: str, allowed: str
) -> None:
    result = subprocess.run(
        [*SPARKGATE, "gateway", "start-foreground", f"-Dsql-gateway.data-dir={tmp_path}", option],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        env=ENV,
    )
    key, _, value = option[2:].partition("=")
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"sparkgate: Invalid value '{value}' for option '{key}' (")
    assert allowed in result.stderr and "Traceback" not in result.stderr
    assert "Starting Spark" not in result.stdout + result.stderr
    assert not (tmp_path / "log" / "spark.log").exists()


@pytest.mark.parametrize("action", ["start-foreground", "start"])
def test_a_port_in_use_fails_before_spark_starts(tmp_path: Path, action: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                *SPARKGATE,
                "gateway",
                action,
                f"-Dsql-gateway.data-dir={tmp_path}",
                f"-Dsql-gateway.endpoint.rest.port={port}",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
            env=ENV,
        )
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr == (
        f"sparkgate: Invalid value '{port}' for option 'sql-gateway.endpoint.rest.port': "
        f"127.0.0.1:{port} is in use; choose a free port (0: any free port)\n"
    )
    assert "Starting Spark" not in result.stdout + result.stderr
    assert not (tmp_path / "log" / "spark.log").exists()
