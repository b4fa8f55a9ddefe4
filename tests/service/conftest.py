"""Fixtures for tests of the gateway service on the shared Spark session."""

from __future__ import annotations

import atexit
import contextlib
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from sparkgate.api.config import Configuration
from sparkgate.api.errors import GatewayError
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import ResultSet, ResultType
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


_DATA_DIRS: list[str] = []


def _scratch_data_dir() -> str:
    """A data dir of the test run: services write job stores, never into ``~``."""
    if not _DATA_DIRS:
        _DATA_DIRS.append(tempfile.mkdtemp(prefix="sparkgate-service-"))
        atexit.register(shutil.rmtree, _DATA_DIRS[0], True)
    return _DATA_DIRS[0]


def make_service(spark: SparkSession, **options: str) -> SparkGatewayService:
    # A data dir of its own: its job store and workflow scheduler are its alone.
    options.setdefault("sql-gateway.data-dir", tempfile.mkdtemp(dir=_scratch_data_dir()))
    service = SparkGatewayService(Configuration(options), spark=spark)
    service.start()
    return service


def unique_name(prefix: str) -> str:
    """A table or job name no other test uses."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@contextlib.contextmanager
def service_on(
    spark: SparkSession, data_dir: Path, **options: str
) -> Iterator[SparkGatewayService]:
    """A gateway service on its own data dir, stopped on exit (a restart is a second one)."""
    service = make_service(spark, **{"sql-gateway.data-dir": str(data_dir), **options})
    try:
        yield service
    finally:
        service.stop()


@pytest.fixture(scope="session")
def service(spark: SparkSession) -> Iterator[SparkGatewayService]:
    svc = make_service(
        spark,
        **{
            "sql-gateway.result.buffer-rows": "50000",
            # Tests make tasks sleep with reflect(), off by default (test_host_statements).
            "sql-gateway.security.allowed-host-statements": "reflection",
        },
    )
    yield svc
    svc.stop()


@pytest.fixture
def session(service: SparkGatewayService) -> Iterator[SessionHandle]:
    handle = service.open_session(SessionEnvironment(session_name="test"))
    yield handle
    with contextlib.suppress(Exception):
        service.close_session(handle)


def fetch_all(
    service: SparkGatewayService,
    session: SessionHandle,
    operation: OperationHandle,
    max_rows: int = 10_000,
    timeout: float = 120,
) -> tuple[ResultSet, list[tuple[Any, ...]]]:
    """Walk the tokens to end of stream; returns the first payload page and all rows."""
    deadline = time.monotonic() + timeout
    token = 0
    first: ResultSet | None = None
    rows: list[tuple[Any, ...]] = []
    while time.monotonic() < deadline:
        page = service.fetch_results(session, operation, token, max_rows, wait=1.0)
        if page.result_type is ResultType.NOT_READY:
            continue
        if first is None:
            first = page
        rows.extend(page.rows())
        if page.result_type is ResultType.EOS:
            return first, rows
        assert page.next_token == token + 1
        token = page.next_token
    raise AssertionError("result did not reach end of stream in time")


def run(
    service: SparkGatewayService, session: SessionHandle, statement: str, **kw: Any
) -> list[tuple[Any, ...]]:
    op = service.execute_statement(session, statement, **kw)
    try:
        return fetch_all(service, session, op)[1]
    finally:
        service.close_operation(session, op)


@contextlib.contextmanager
def opened_session(service: SparkGatewayService, name: str = "test") -> Iterator[SessionHandle]:
    """A session of ``service``, closed on exit."""
    handle = service.open_session(SessionEnvironment(session_name=name))
    try:
        yield handle
    finally:
        service.close_session(handle)


def error_text(
    service: SparkGatewayService, session: SessionHandle, statement: str, **kw: Any
) -> str:
    """The error ``statement`` fails with: message and cause chain, one per line."""
    with pytest.raises(GatewayError) as info:
        run(service, session, statement, **kw)
    return "\n".join([str(info.value), *getattr(info.value, "causes", ())])
