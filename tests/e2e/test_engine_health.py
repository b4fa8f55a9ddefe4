"""An engine death is seen, reported truthfully and healed, while the gateway lives.

Each test runs a real gateway, kills its Spark engine one way (SIGKILL of the
JVM, an OutOfMemoryError in a small heap, ``System.exit`` through reflection
allowed for the test) and watches what a client and an orchestrator see:
readiness drops, new sessions get 503 with Retry-After (never a 500), the
process stays up, a new engine serves, and an old session goes on where it was
(its properties, database, temporary view and temporary connector table made
again), or, when its state cannot be made again, says it was lost and why.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.hiveserver2.conftest import PYHIVE_REQUIREMENTS, client_venv, run_client
from tests.processes import foreground_gateway, free_port

ENV = {**os.environ, "SPARKGATE_CONF_DIR": ""}
# Two engine starts (and a session rebuild, streaming jobs) per test on 2 cores.
pytestmark = pytest.mark.timeout(900)
_GUARD_S = 300  # a hang guard, not a timing claim


@contextmanager
def gateway(tmp_path: Path, *extra: str) -> Iterator[tuple[httpx.Client, Any]]:
    port = free_port()
    options = [
        f"-Dsql-gateway.data-dir={tmp_path / 'data'}",
        f"-Dsql-gateway.endpoint.rest.port={port}",
        "-Dsql-gateway.endpoint.type=rest",
        "-Dspark.master=local[2]",
        "-Dspark.ui.enabled=false",
        *extra,
    ]
    with (
        foreground_gateway(options, port=port, cwd=tmp_path, env=ENV, timeout=300) as (url, proc),
        httpx.Client(base_url=url, timeout=120) as http,
    ):
        yield http, proc


def engine_jvm(proc: Any) -> psutil.Process:
    jvms = [p for p in psutil.Process(proc.pid).children(recursive=True) if p.name() == "java"]
    assert len(jvms) == 1, jvms
    return jvms[0]


def open_session(http: httpx.Client) -> httpx.Response:
    return http.post("/v4/sessions", json={})


def run(http: httpx.Client, session: str, statement: str) -> tuple[httpx.Response, list[Any]]:
    """The last answer (an error, or EOS) and the rows read on the way."""
    submitted = http.post(f"/v4/sessions/{session}/statements", json={"statement": statement})
    if submitted.status_code != 200:
        return submitted, []
    op = submitted.json()["operationHandle"]
    uri: str | None = f"/v4/sessions/{session}/operations/{op}/result/0"
    rows: list[Any] = []
    while True:
        assert uri is not None
        page = http.get(uri)
        if page.status_code != 200:
            return page, rows
        body = page.json()
        rows.extend(row["fields"] for row in body.get("results", {}).get("data", []))
        uri = body.get("nextResultUri")
        if uri is None:
            return page, rows


def wait_until(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + _GUARD_S
    while not predicate():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.2)


# What an old session makes before the death, and must find after it.
_STATE = (
    "CREATE DATABASE IF NOT EXISTS healed",
    "USE healed",
    "SET 'spark.sql.shuffle.partitions' = '3'",
    "CREATE TEMPORARY VIEW v AS SELECT 1 AS x",
    "CREATE TEMPORARY VIEW w AS SELECT x + 1 AS y FROM v",
    "CREATE TEMPORARY TABLE gen (id BIGINT) WITH ('connector' = 'datagen', "
    "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '5')",
)


def make_state(http: httpx.Client, session: str) -> None:
    for statement in _STATE:
        page, _ = run(http, session, statement)
        assert page.status_code == 200, (statement, page.text)


def assert_state(http: httpx.Client, session: str) -> None:
    for statement, expected in (
        ("SELECT current_database()", [["healed"]]),
        ("SELECT * FROM w", [[2]]),
        ("SELECT count(*) FROM gen", [[5]]),
        ("SET 'spark.sql.shuffle.partitions'", [["spark.sql.shuffle.partitions", "3"]]),
    ):
        page, rows = run(http, session, statement)
        assert page.status_code == 200, (statement, page.text)
        assert rows == expected, (statement, rows)


def see_it_die_and_heal(
    http: httpx.Client, proc: Any, old_session: str, kill: Any, cause: str
) -> None:
    make_state(http, old_session)
    old_jvm = engine_jvm(proc)
    kill()
    refused: list[httpx.Response] = []

    def down() -> bool:
        ready = http.get("/health/ready")
        if ready.status_code == 503:
            refused.append(ready)
            return True
        return False

    wait_until(down, "readiness reports the engine down")
    assert cause in refused[0].json()["cause"], refused[0].json()
    assert refused[0].headers["retry-after"]
    # While the engine is down or restarting, new work is 503 with Retry-After: never 500.
    answers = []
    while http.get("/health/ready").status_code != 200:
        answer = open_session(http)
        answers.append(answer.status_code)
        assert answer.status_code in (200, 503), answer.text
        if answer.status_code == 503:
            assert answer.headers["retry-after"] and "engine" in answer.json()["errors"][0]
        time.sleep(0.5)
    assert 503 in answers
    assert proc.poll() is None, "the gateway process stays up"
    assert http.get("/health/live").status_code == 200
    health = http.get("/health/ready").json()
    assert health["status"] == "UP" and health["restarts"] == 1
    assert not old_jvm.is_running() and engine_jvm(proc).pid != old_jvm.pid
    # A new session is served by the new engine.
    session = open_session(http).json()["sessionHandle"]
    page, rows = run(http, session, "SELECT 41 + 1 AS answer")
    assert page.status_code == 200 and rows == [[42]]
    # An old session goes on where it was, on the new engine.
    assert_state(http, old_session)


def gateway_status(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "sparkgate.cli",
            "gateway",
            "status",
            f"-Dsql-gateway.data-dir={tmp_path / 'data'}",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )


# A PyHive client that opens a session and runs one statement; prints the outcome.
_HS2_CLIENT = """
import json, sys
from pyhive import hive
try:
    cursor = hive.connect('127.0.0.1', port=int(sys.argv[1]), auth='NOSASL').cursor()
    cursor.execute('SELECT 1')
    print(json.dumps({'rows': cursor.fetchall()}))
except Exception as exc:
    print(json.dumps({'error': str(exc)}))
"""


def hs2_attempt(port: int) -> dict[str, Any]:
    python = client_venv("pyhive", PYHIVE_REQUIREMENTS)
    return run_client(python, _HS2_CLIENT, str(port), timeout=120)  # type: ignore[no-any-return]


def operation_status(http: httpx.Client, session: str, op: str) -> httpx.Response:
    return http.get(f"/v4/sessions/{session}/operations/{op}/status")


def test_a_killed_engine_jvm_is_replaced(tmp_path: Path) -> None:
    hs2_port = free_port()
    options = (
        "-Dsql-gateway.endpoint.type=rest,hiveserver2",
        f"-Dsql-gateway.endpoint.hiveserver2.port={hs2_port}",
        # The engine stays down long enough to ask the gateway about it.
        "-Dsql-gateway.engine.restart-backoff=15s",
    )
    with gateway(tmp_path, *options) as (http, proc):
        assert hs2_attempt(hs2_port) == {"rows": [[1]]}
        status = gateway_status(tmp_path)
        assert status.returncode == 0 and ": ready" in status.stdout, status.stdout
        info = http.get("/v1/info")
        assert info.status_code == 200 and info.json()["sparkVersion"], info.text
        session = open_session(http).json()["sessionHandle"]
        # A session whose temporary view reads files that are gone by the death.
        files = tmp_path / "files"
        files.mkdir()
        pq.write_table(pa.table({"x": [1]}), files / "part-0.parquet")
        doomed = open_session(http).json()["sessionHandle"]
        page, _ = run(
            http, doomed, f"CREATE TEMPORARY VIEW f USING parquet OPTIONS (path '{files}')"
        )
        assert page.status_code == 200, page.text
        victim = open_session(http).json()["sessionHandle"]
        cut: list[str] = []
        jvm = engine_jvm(proc)

        def kill() -> None:
            # A statement running at the death (long enough never to end on its own).
            answer = http.post(
                f"/v4/sessions/{victim}/statements",
                json={"statement": "SELECT max(hash(id)) FROM range(0, 1000000000000, 1, 2)"},
            )
            assert answer.status_code == 200, answer.text
            cut.append(answer.json()["operationHandle"])

            # FINISHED is Flink's "results can be fetched": the worker still computes
            # them, so a RUNNING shorter than a poll counts the same.
            def computing() -> bool:
                status = operation_status(http, victim, cut[0]).json()["status"]
                assert status in ("PENDING", "RUNNING", "FINISHED"), status
                return bool(status != "PENDING")

            wait_until(computing, "the statement runs")
            shutil.rmtree(files)
            os.kill(jvm.pid, signal.SIGKILL)
            wait_until(lambda: http.get("/health/ready").status_code == 503, "engine down")
            # /v1/info keeps Flink's meaning: it answers whatever the engine's state.
            down_info = http.get("/v1/info")
            assert down_info.status_code == 200, down_info.text
            assert down_info.json() == info.json()
            # The operator's command says the gateway is not ready, and why.
            down = gateway_status(tmp_path)
            assert down.returncode == 3, (down.returncode, down.stdout)
            assert "NOT ready: engine DOWN" in down.stdout and "signal 9" in down.stdout
            # HiveServer2 clients get a clear error while the engine is down, never a hang.
            refused = hs2_attempt(hs2_port)
            assert "engine" in refused.get("error", ""), refused
            assert http.get("/health/ready").status_code == 503, "the engine was held down"

        see_it_die_and_heal(http, proc, session, kill, "signal 9")
        # The statement cut off by the death ended in ERROR, and says why.
        ended = operation_status(http, victim, cut[0])
        assert ended.status_code == 200 and ended.json() == {"status": "ERROR"}, ended.text
        fetched = http.get(f"/v4/sessions/{victim}/operations/{cut[0]}/result/0")
        assert fetched.status_code == 503, fetched.text
        assert "engine stopped" in fetched.text and "signal 9" in fetched.text, fetched.text
        lost, _ = run(http, doomed, "SELECT * FROM f")
        assert lost.status_code == 404
        assert "lost with the Spark engine" in lost.text and "signal 9" in lost.text
        assert "CREATE TEMPORARY VIEW f" in lost.text, lost.text
        status = gateway_status(tmp_path)
        assert status.returncode == 0, status.stdout
        assert "ready" in status.stdout and "engine restarts: 1" in status.stdout
        assert http.get("/v1/info").json() == info.json()


def test_an_engine_out_of_memory_is_replaced(tmp_path: Path) -> None:
    with gateway(tmp_path, "-Dspark.driver.memory=512m") as (http, proc):
        session = open_session(http).json()["sessionHandle"]
        victim = open_session(http).json()["sessionHandle"]

        submitted: list[str] = []

        def exhaust() -> None:
            # One group holding a 2 GB array in a 512 MB heap.
            answer = http.post(
                f"/v4/sessions/{victim}/statements",
                json={
                    "statement": "SELECT size(collect_list(repeat('x', 1000))) "
                    "FROM range(0, 2000000, 1, 1)"
                },
            )
            submitted.append(answer.json()["operationHandle"])

        see_it_die_and_heal(http, proc, session, exhaust, "OutOfMemoryError")
        # The statement the engine died under says so, as a 503 to retry (never a bare 500).
        cut = http.get(f"/v4/sessions/{victim}/operations/{submitted[0]}/result/0")
        assert cut.status_code == 503, cut.text
        assert "engine stopped" in cut.text and "OutOfMemoryError" in cut.text, cut.text


def test_system_exit_through_allowed_reflection_is_replaced(tmp_path: Path) -> None:
    allow = "-Dsql-gateway.security.allowed-host-statements=reflection"
    with gateway(tmp_path, allow) as (http, proc):
        session = open_session(http).json()["sessionHandle"]
        victim = open_session(http).json()["sessionHandle"]

        def exit_three() -> None:
            http.post(
                f"/v4/sessions/{victim}/statements",
                json={"statement": "SELECT reflect('java.lang.System', 'exit', 3)"},
            )

        see_it_die_and_heal(http, proc, session, exit_three, "exited with 3")


def sink_rows(http: httpx.Client, session: str, path: Path) -> tuple[int, int]:
    """Rows, distinct ids in the sink's files (read as Spark reads parquet)."""
    page, rows = run(http, session, f"SELECT count(*), count(DISTINCT id) FROM parquet.`{path}`")
    if page.status_code != 200 and "UNABLE_TO_INFER_SCHEMA" in page.text:
        return 0, 0  # no batch committed yet: the sink's log lists no file
    assert page.status_code == 200, page.text
    return int(rows[0][0]), int(rows[0][1])


def job_status(http: httpx.Client, session: str, job: str) -> str:
    page, rows = run(http, session, "SHOW JOBS")
    assert page.status_code == 200, page.text
    return next(str(row[2]) for row in rows if str(row[0]) == job)


def start_stream(http: httpx.Client, session: str, path: Path) -> str:
    for statement in (
        "SET 'execution.runtime-mode' = 'streaming'",
        "SET 'execution.checkpointing.interval' = '1s'",
        "CREATE TEMPORARY TABLE ids (id BIGINT) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
        "'fields.id.end' = '100000000', 'rows-per-second' = '50')",
        f"CREATE TEMPORARY TABLE sink (id BIGINT) WITH ('connector' = 'filesystem', "
        f"'path' = '{path}', 'format' = 'parquet')",
    ):
        page, _ = run(http, session, statement)
        assert page.status_code == 200, (statement, page.text)
    page, rows = run(http, session, "INSERT INTO sink SELECT id FROM ids")
    assert page.status_code == 200, page.text
    return str(rows[0][0])


def test_streaming_jobs_resume_from_their_checkpoints_on_the_new_engine(tmp_path: Path) -> None:
    with gateway(tmp_path) as (http, proc):
        kept = open_session(http).json()["sessionHandle"]
        closed = open_session(http).json()["sessionHandle"]
        paths = {kept: tmp_path / "kept", closed: tmp_path / "closed"}
        jobs = {handle: start_stream(http, handle, path) for handle, path in paths.items()}
        # A job outlives the session that submitted it, and so must its restart.
        assert http.delete(f"/v4/sessions/{closed}").status_code == 200
        reader = open_session(http).json()["sessionHandle"]
        wait_until(
            lambda: all(sink_rows(http, reader, p)[0] > 0 for p in paths.values()),
            "both jobs write",
        )
        before = {handle: sink_rows(http, reader, path)[0] for handle, path in paths.items()}
        jvm = engine_jvm(proc)
        os.kill(jvm.pid, signal.SIGKILL)
        wait_until(lambda: http.get("/health/ready").status_code == 503, "engine down")
        wait_until(lambda: http.get("/health/ready").status_code == 200, "engine back")
        for handle, job in jobs.items():
            assert job_status(http, kept, job) == "RUNNING"
            path = paths[handle]
            # Writing again, from the checkpoint: on past what it had, no id twice.
            wait_until(
                lambda p=path, h=handle: sink_rows(http, kept, p)[0] > before[h] + 50,
                "the job writes on",
            )
            rows, distinct = sink_rows(http, kept, path)
            assert rows == distinct, (rows, distinct)
        page, _ = run(http, kept, f"STOP JOB '{jobs[kept]}'")
        assert page.status_code == 200, page.text
