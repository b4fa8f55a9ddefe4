"""Start-up as a user gets it: shuffle partitions, the Spark UI's address, and a
gateway and an embedded SQL client on the same (default) data directory."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from sparkgate.service.spark.engine import available_cores
from tests.defaults.conftest import DefaultGateway, default_env
from tests.processes import free_port


def run(gateway: DefaultGateway, statement: str) -> list[list[Any]]:
    """Every row of ``statement``'s result over REST (all pages)."""
    base = f"{gateway.url}/v4"
    with httpx.Client(base_url=base, timeout=60) as http:
        session = http.post("/sessions", json={}).json()["sessionHandle"]
        try:
            op = http.post(f"/sessions/{session}/statements", json={"statement": statement}).json()[
                "operationHandle"
            ]
            uri: str | None = f"/sessions/{session}/operations/{op}/result/0?rowFormat=JSON"
            rows: list[list[Any]] = []
            while uri:
                page = http.get(uri.removeprefix("/v4")).json()
                assert "errors" not in page, page
                if page["resultType"] == "NOT_READY":  # the same URI again, as Flink clients do
                    uri = page["nextResultUri"]
                    continue
                rows += [row["fields"] for row in page["results"]["data"]]
                if page["resultType"] == "EOS":
                    break
                uri = page.get("nextResultUri")
            return rows
        finally:
            http.delete(f"/sessions/{session}")


def test_local_shuffles_use_as_many_partitions_as_cores(default_gateway: DefaultGateway) -> None:
    """Spark's 200 shuffle partitions would make every streaming aggregation's
    micro-batch run 200 tasks on a laptop's few cores."""
    [[plan]] = run(
        default_gateway, "EXPLAIN SELECT id % 3 AS k, count(*) FROM range(10) GROUP BY id % 3"
    )
    partitions = re.findall(r"hashpartitioning\(.*, (\d+)\)", plan)
    assert partitions == [str(available_cores())], plan
    shown = run(default_gateway, "SET 'spark.sql.shuffle.partitions'")
    assert shown == [["spark.sql.shuffle.partitions", str(available_cores())]]


def console_text(gateway: DefaultGateway) -> str:
    return (gateway.home / "console.log").read_text()


def test_spark_ui_listens_on_loopback_only_and_start_prints_its_url(
    default_gateway: DefaultGateway,
) -> None:
    deadline = time.monotonic() + 60
    while "Spark UI:" not in console_text(default_gateway):
        assert time.monotonic() < deadline, console_text(default_gateway)
        time.sleep(0.2)
    match = re.search(r"Spark UI: http://127\.0\.0\.1:(\d+)", console_text(default_gateway))
    assert match, console_text(default_gateway)
    ui_port = int(match.group(1))
    assert httpx.get(f"http://127.0.0.1:{ui_port}/jobs/", follow_redirects=True).status_code == 200

    gateway = psutil.Process(default_gateway.process.pid)
    listening = [
        (proc.pid, conn.laddr)
        for proc in [gateway, *gateway.children(recursive=True)]
        for conn in proc.net_connections(kind="inet")
        if conn.status == psutil.CONN_LISTEN
    ]
    assert ui_port in [addr.port for _, addr in listening], listening
    exposed = [
        (pid, addr)
        for pid, addr in listening
        if addr.ip not in ("127.0.0.1", "::1", "::ffff:127.0.0.1")
    ]
    assert exposed == [], f"listening beyond the loopback: {exposed}"


SPARKGATE = [sys.executable, "-m", "sparkgate.cli"]


def sparkgate(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SPARKGATE, *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )


def test_embedded_client_beside_a_gateway_says_how_to_reach_it(
    default_gateway: DefaultGateway, tmp_path: Path
) -> None:
    """The README's two commands side by side, both on ``~/.sparkgate``: the
    embedded client is refused at once (not after Derby's 40 s wait), naming
    the gateway, and each way out it prints works as written."""
    script = tmp_path / "tables.sql"
    script.write_text("SHOW TABLES;\n")
    env, home = default_gateway.env, default_gateway.home
    refused = sparkgate(["sql", "-f", str(script)], env, home)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.startswith(
        f"sparkgate: The data directory {default_gateway.data_dir} is in use by a sparkgate "
        f"gateway, pid {default_gateway.process.pid} (http://127.0.0.1:{default_gateway.port})"
    ), refused.stderr
    assert "Derby" not in refused.stdout + refused.stderr
    assert not (default_gateway.data_dir / "run" / f"sql-client-{os.getpid()}.json").exists()

    ways = re.findall(r"^  (?:or )?[^:]+:  sparkgate (.*)$", refused.stderr, re.MULTILINE)
    assert len(ways) == 2, refused.stderr
    connect, own_dir = ways
    assert connect == f"sql gateway -e 127.0.0.1:{default_gateway.port}"
    done = sparkgate([*shlex.split(connect), "-f", str(script)], env, home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SHOW TABLES" in done.stdout

    own = own_dir.replace("<another dir>", str(tmp_path / "mine"))
    done = sparkgate([*shlex.split(own), "-f", str(script)], env, home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SHOW TABLES" in done.stdout and "Derby" not in done.stdout + done.stderr


def test_a_gateway_beside_an_embedded_client_is_refused_before_spark(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = default_env(home)
    client = subprocess.Popen(
        [*SPARKGATE, "sql"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=home,
        env=env,
    )
    try:
        held = home / ".sparkgate" / "run" / f"sql-client-{client.pid}.json"
        while not held.exists():  # the client holds the data dir before it starts Spark
            assert client.poll() is None, "the embedded client exited"
            time.sleep(0.1)
        refused = sparkgate(
            ["gateway", "start-foreground", f"-Dsql-gateway.endpoint.rest.port={free_port()}"],
            env,
            home,
        )
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert (
            f"is in use by an embedded SQL client, pid {client.pid}: its embedded metastore"
            in refused.stderr
        )
        assert "quit that SQL client" in refused.stderr
        assert "Starting Spark" not in refused.stdout + refused.stderr
    finally:
        assert client.stdin is not None
        client.stdin.close()  # end of input: the client quits
        try:
            client.wait(120)
        except subprocess.TimeoutExpired:
            client.kill()
            client.wait()
    assert not held.exists()
