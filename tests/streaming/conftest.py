"""Fixtures for the streaming tests: a service whose data dir (checkpoints,
savepoints) is a tmp dir, on the shared Spark session, and helpers that read
an operation's changelog."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import ResultType, RowKind
from sparkgate.api.session import SessionEnvironment
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.service.gateway import SparkGatewayService
from tests.rest.conftest import settings
from tests.service.conftest import make_service, run

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "changes",
    "job_status",
    "make_service",
    "name",
    "run",
    "sink_ids",
    "wait_for",
    "wait_job",
]

Change = tuple[RowKind, tuple[Any, ...]]


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gateway-data")


@pytest.fixture(scope="session")
def stream_service(spark: SparkSession, data_dir: Path) -> Iterator[SparkGatewayService]:
    service = make_service(
        spark,
        **{
            "sql-gateway.data-dir": str(data_dir),
            "execution.checkpointing.interval": "500 ms",
        },
    )
    yield service
    service.stop()


@pytest.fixture
def session(stream_service: SparkGatewayService) -> Iterator[SessionHandle]:
    handle = stream_service.open_session(SessionEnvironment(session_name="streaming"))
    yield handle
    with contextlib.suppress(Exception):
        stream_service.close_session(handle)


@pytest.fixture
def http(stream_service: SparkGatewayService) -> Iterator[httpx.Client]:
    """A REST client of an endpoint on the stream service."""
    endpoint = RestEndpoint(stream_service, settings())
    endpoint.start()
    try:
        with httpx.Client(base_url=endpoint.address, timeout=120) as client:
            yield client
    finally:
        endpoint.stop()


def name(prefix: str = "t") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def sink_ids(spark: SparkSession, path: Path) -> list[int]:
    """What a batch reader sees in the sink (the files moved in: no writer's staging)."""
    if not path.exists():
        return []
    return sorted(int(r[0]) for r in spark.read.schema("id BIGINT").parquet(str(path)).collect())


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def changes(
    service: SparkGatewayService,
    session: SessionHandle,
    op: OperationHandle,
    *,
    until: Callable[[list[Change]], bool] | None = None,
    timeout: float = 90.0,
) -> list[Change]:
    """Fetch change rows until end of stream (or until ``until`` holds)."""
    deadline = time.monotonic() + timeout
    token = 0
    out: list[Change] = []
    while time.monotonic() < deadline:
        page = service.fetch_results(session, op, token, 1000, wait=0.5)
        if page.result_type is ResultType.NOT_READY:
            continue
        out.extend(zip(page.row_kinds(), page.rows(), strict=True))
        if page.result_type is ResultType.EOS or (until is not None and until(out)):
            return out
        assert page.next_token is not None
        token = page.next_token
    raise AssertionError(f"no end of the changelog in {timeout} s; got {out[-5:]}")


def job_status(service: SparkGatewayService, session: SessionHandle, job_id: str) -> str:
    """The job's status as SHOW JOBS lists it."""
    rows = {r[0]: r for r in run(service, session, "SHOW JOBS")}
    return str(rows[job_id][2])


def wait_job(
    service: SparkGatewayService,
    session: SessionHandle,
    job_id: str,
    status: str = "FINISHED",
    timeout: float = 90.0,
) -> None:
    """Wait until the job has ended; it must have ended with ``status``."""
    ended = ("FINISHED", "FAILED", "CANCELED")
    assert wait_for(lambda: job_status(service, session, job_id) in ended, timeout)
    [info] = run(service, session, f"DESCRIBE JOB '{job_id}'")
    assert info[2] == status, info
