"""Start-up defaults as a user gets them: shuffle partitions, the Spark UI's address."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import psutil

from sparkgate.service.spark.engine import available_cores
from tests.defaults.conftest import DefaultGateway


def run(gateway: DefaultGateway, statement: str) -> list[list[Any]]:
    """Every row of ``statement``'s result over REST (all pages)."""
    base = f"{gateway.url}/v4"
    with httpx.Client(base_url=base, timeout=60) as http:
        session = http.post("/sessions", json={}).json()["sessionHandle"]
        try:
            op = http.post(
                f"/sessions/{session}/statements", json={"statement": statement}
            ).json()["operationHandle"]
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
