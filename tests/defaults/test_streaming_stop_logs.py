"""Stopping a streaming SELECT on request is quiet in the logs; a failure is not.

Runs on the default gateway (its own log files, Spark's default shuffle
partitions): a streaming SELECT whose micro-batch is busy when it is
cancelled or closed (each row sleeps in a task), the case that used to
write py4j tracebacks at ERROR into ``sparkgate.log`` and a
StackOverflowError into Spark's console log.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.defaults.conftest import DefaultGateway

_BAD = ("ERROR", "Traceback", "Exception in thread", "StackOverflowError")


class _Logs:
    """The lines each gateway log gets from now on.

    A stop on request may leave Spark's one-line WARNs about the tasks it
    killed; errors, Python tracebacks and Java stack traces are not expected.
    """

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.offsets = {p.name: p.stat().st_size for p in log_dir.glob("*.log")}

    def new_lines(self) -> dict[str, list[str]]:
        out = {}
        for path in self.log_dir.glob("*.log"):
            with path.open("rb") as f:
                f.seek(self.offsets.get(path.name, 0))
                out[path.name] = f.read().decode("utf-8", "replace").splitlines()
        return out

    def bad_lines(self) -> list[str]:
        return [
            f"{name}: {line}"
            for name, lines in self.new_lines().items()
            for line in lines
            if any(word in line for word in _BAD) or line.startswith("\tat ")
        ]


@pytest.fixture
def rest(default_gateway: DefaultGateway) -> Iterator[tuple[httpx.Client, str]]:
    with httpx.Client(base_url=f"{default_gateway.url}/v4", timeout=120) as client:
        session = client.post(
            "/sessions", json={"properties": {"execution.runtime-mode": "streaming"}}
        ).json()["sessionHandle"]
        try:
            yield client, session
        finally:
            client.delete(f"/sessions/{session}")


def _submit(client: httpx.Client, session: str, statement: str) -> str:
    body = client.post(f"/sessions/{session}/statements", json={"statement": statement}).json()
    return str(body["operationHandle"])


def _fetch(client: httpx.Client, session: str, op: str, token: int) -> dict[str, object]:
    response = client.get(
        f"/sessions/{session}/operations/{op}/result/{token}", params={"rowFormat": "JSON"}
    )
    body: dict[str, object] = response.json()
    return body


def _next_token(body: dict[str, object]) -> int:
    uri = str(body["nextResultUri"])
    return int(uri.split("/result/")[1].split("?")[0])


def _first_rows(client: httpx.Client, session: str, op: str) -> None:
    """Fetch until the stream has delivered rows."""
    token = 0
    while True:
        body = _fetch(client, session, op, token)
        assert "errors" not in body, body
        assert body["resultType"] != "EOS", body
        if body["resultType"] == "PAYLOAD":
            data = body["results"]["data"]  # type: ignore[index]
            if data:
                return
        token = _next_token(body)


def _wait_for_running_task(client: httpx.Client, session: str, op: str) -> None:
    """Wait until a task of the operation runs: a micro-batch is in flight."""
    while True:
        progress = client.get(f"/sessions/{session}/operations/{op}/progress").json()
        assert progress["status"] in ("RUNNING", "FINISHED"), progress
        if progress["tasksRunning"] > 0:
            return
        time.sleep(0.05)


def _slow_source(client: httpx.Client, session: str) -> str:
    table = f"slow_{uuid.uuid4().hex[:8]}"
    op = _submit(
        client,
        session,
        f"CREATE TABLE {table} (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '2')",
    )
    body = _fetch(client, session, op, 0)
    while body.get("resultType") == "NOT_READY":
        body = _fetch(client, session, op, 0)
    assert body.get("resultType") in ("PAYLOAD", "EOS"), body
    return table


# Each row computes for about a second in its task (reflect(), which could sleep, is off
# by default), so a micro-batch is running whenever rows have come. The bounds depend on
# the row so that Spark cannot fold them into a constant array; two nested folds keep the
# arrays small (40 M steps, a few kB).
_SLOW = (
    "SELECT id, aggregate(sequence(1, 20000 + id % 2), 0L, (a, x) -> a + "
    "aggregate(sequence(1, 2000 + x % 2), 0L, (b, y) -> b + y)) AS pause FROM {table}"
)


def _wait_stopped(logs: _Logs, word: str) -> None:
    """Wait until the gateway says the streaming query has ``word`` (stopped, failed)."""
    deadline = time.monotonic() + 120  # a hang guard, not a timing claim
    while not any(
        "streaming.query: Streaming query" in line and word in line
        for line in logs.new_lines().get("sparkgate.log", [])
    ):
        assert time.monotonic() < deadline, logs.new_lines().get("sparkgate.log")
        time.sleep(0.2)
    time.sleep(2)  # let Spark's stream thread finish its own logging


@pytest.mark.parametrize("how", ["cancel", "close"])
def test_a_requested_stop_of_a_streaming_select_logs_no_error(
    default_gateway: DefaultGateway, rest: tuple[httpx.Client, str], how: str
) -> None:
    client, session = rest
    table = _slow_source(client, session)
    logs = _Logs(default_gateway.data_dir / "log")
    op = _submit(client, session, _SLOW.format(table=table))
    _first_rows(client, session, op)
    _wait_for_running_task(client, session, op)
    if how == "cancel":
        assert client.post(f"/sessions/{session}/operations/{op}/cancel").json() == {
            "status": "CANCELED"
        }
    else:
        assert client.delete(f"/sessions/{session}/operations/{op}/close").json() == {
            "status": "CLOSED"
        }
    _wait_stopped(logs, "stopped")
    assert logs.bad_lines() == []


def test_a_failing_streaming_select_logs_its_root_cause_as_error(
    default_gateway: DefaultGateway, rest: tuple[httpx.Client, str]
) -> None:
    client, session = rest
    table = _slow_source(client, session)
    logs = _Logs(default_gateway.data_dir / "log")
    op = _submit(
        client, session, f"SELECT id, raise_error('sparkgate boom ' || id) AS x FROM {table}"
    )
    token = 0
    while True:
        body = _fetch(client, session, op, token)
        if "errors" in body:
            break
        assert body["resultType"] != "EOS", body
        token = _next_token(body)
    assert "sparkgate boom" in str(body["errors"])
    _wait_stopped(logs, "failed")
    errors = [line for line in logs.new_lines()["sparkgate.log"] if " ERROR " in line]
    assert errors, logs.new_lines()["sparkgate.log"]
    # The root cause comes first, on the ERROR line itself.
    assert "sparkgate boom" in errors[0]


def _result(client: httpx.Client, session: str, statement: str) -> list[list[object]]:
    op = _submit(client, session, statement)
    body = _fetch(client, session, op, 0)
    while body.get("resultType") == "NOT_READY":
        body = _fetch(client, session, op, 0)
    assert "errors" not in body, body
    return [row["fields"] for row in body["results"]["data"]]  # type: ignore[index]


def test_stop_job_of_a_streaming_insert_logs_no_error(
    default_gateway: DefaultGateway, rest: tuple[httpx.Client, str], tmp_path: Path
) -> None:
    client, session = rest
    source = _slow_source(client, session)
    sink = f"sink_{uuid.uuid4().hex[:8]}"
    _result(
        client,
        session,
        f"CREATE TABLE {sink} (id BIGINT) WITH ('connector' = 'filesystem', "
        f"'path' = '{(tmp_path / 'out').as_posix()}', 'format' = 'csv')",
    )
    logs = _Logs(default_gateway.data_dir / "log")
    # Each row computes for seconds, longer than a stop waits for the micro-batch
    # in flight: the stop cuts that batch's write.
    slow = _SLOW.replace("20000", "160000").format(table=source)
    [[job_id]] = _result(
        client, session, f"INSERT INTO {sink} SELECT id FROM ({slow}) WHERE pause > 0"
    )
    # Rows written: the job runs micro-batch after micro-batch.
    deadline = time.monotonic() + 120  # a hang guard
    while not list((tmp_path / "out").glob("part-*")):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    time.sleep(1)  # the next micro-batch has started
    assert _result(client, session, f"STOP JOB '{job_id}'") == [["OK"]]
    time.sleep(2)  # let Spark's stream thread finish its own logging
    assert logs.bad_lines() == []
    assert any("cut by a stop" in line for line in logs.new_lines()["sparkgate.log"])
