"""Two gateways of one service (one state database, PostgreSQL): each serves its own
sessions and tells where the other's are, catalogs made or dropped on one are so on
the other; when one stops, the other takes over its sessions (with their state) and
its streaming job (from its checkpoint, each row once)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.jobs import JobStatus
from sparkgate.api.session import SessionEnvironment
from tests.postgres import PostgresServer

from .conftest import make_service, run, unique_name
from .test_job_store import sequence_into_files, wait_for_rows
from .test_state_database import state_url as state_url

pytestmark = pytest.mark.service


def _wait(condition: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.2)


def test_the_other_gateway_takes_over_sessions_and_jobs(
    spark: SparkSession, postgres: PostgresServer, state_url: str, tmp_path: Path
) -> None:
    common = {"sql-gateway.state.url": state_url, "sql-gateway.state.lease": "2 s"}
    a = make_service(
        spark,
        **common,
        **{
            "sql-gateway.data-dir": str(tmp_path / "a"),
            "sql-gateway.state.advertised-url": "http://a.example:8083",
        },
    )
    b = make_service(
        spark,
        **common,
        **{
            "sql-gateway.data-dir": str(tmp_path / "b"),
            "sql-gateway.state.advertised-url": "http://b.example:8083",
        },
    )
    try:
        handle = a.open_session(SessionEnvironment(session_name="moves"))
        run(a, handle, "SET 'k' = 'v'")
        run(a, handle, "CREATE TEMPORARY VIEW seven AS SELECT 7 AS n")
        rows = 400
        job_id, sink = sequence_into_files(a, handle, tmp_path / "files", rows)
        before = wait_for_rows(a, handle, sink, 20)
        assert before[0] == before[1]
        # Each knows who serves what.
        assert a.session_owner(handle) is None
        assert b.session_owner(handle) == "http://a.example:8083"
        assert job_id not in {j.job_id for j in b.list_jobs()}
        # Catalogs are the service's: one made on a is there on b, in an open session.
        other = b.open_session(SessionEnvironment(session_name="on-b"))
        catalog = unique_name("cat")
        run(a, handle, f"CREATE CATALOG {catalog} WITH ('type' = 'generic_in_memory')")
        _wait(lambda: (catalog,) in run(b, other, "SHOW CATALOGS"))
        run(b, other, f"CREATE DATABASE {catalog}.shared")
        run(a, handle, f"DROP CATALOG {catalog}")
        _wait(lambda: (catalog,) not in run(b, other, "SHOW CATALOGS"))

        a.stop()  # it leaves: b takes over within a heartbeat
        _wait(lambda: job_id in {j.job_id for j in b.list_jobs()})
        assert b.session_owner(handle) is None
        assert b.get_session_config(handle)["k"] == "v"
        assert run(b, handle, "SELECT n FROM seven") == [(7,)]
        assert b.describe_job(job_id).status is JobStatus.RUNNING
        assert wait_for_rows(b, handle, sink, rows) == (rows, rows)
    finally:
        a.stop()
        b.stop()


def test_a_call_during_a_take_over_waits_for_the_session(
    spark: SparkSession,
    postgres: PostgresServer,
    state_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The records are the taker's before its sessions are made again: a call in that
    moment waits for them instead of finding no session."""
    common = {"sql-gateway.state.url": state_url, "sql-gateway.state.lease": "2 s"}
    a = make_service(spark, **common, **{"sql-gateway.data-dir": str(tmp_path / "a")})
    b = make_service(spark, **common, **{"sql-gateway.data-dir": str(tmp_path / "b")})
    try:
        handle = a.open_session(SessionEnvironment(session_name="slow"))
        run(a, handle, "SET 'k' = 'v'")
        restoring = threading.Event()
        restore = b._restore

        def slowly(image: object) -> None:
            restoring.set()
            time.sleep(2)
            restore(image)  # type: ignore[arg-type]

        monkeypatch.setattr(b, "_restore", slowly)
        a.stop()
        taking = threading.Thread(target=b._take_over, args=(a.gateway_id,))
        taking.start()
        assert restoring.wait(30)
        assert b.session_owner(handle) is None
        assert b.get_session_config(handle)["k"] == "v"
        taking.join(30)
    finally:
        a.stop()
        b.stop()
