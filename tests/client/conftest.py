"""Fixtures for SQL client tests: one real service on the shared Spark session, reached
in-process (embedded mode) or through the real REST endpoint on a free loopback port
(gateway mode), so every client test runs the same way in both modes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from sparkgate.client.embedded import EmbeddedExecutor
from sparkgate.client.executor import Executor
from sparkgate.client.rest import RestExecutor
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.service.gateway import SparkGatewayService
from tests.client.helpers import ExecutorFactory
from tests.rest.conftest import settings
from tests.service.conftest import make_service

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MODES = ("embedded", "gateway")


@pytest.fixture(scope="session")
def client_service(spark: SparkSession) -> Iterator[SparkGatewayService]:
    service = make_service(spark, **{"sql-gateway.result.batch-rows": "1000"})
    yield service
    service.stop()


@pytest.fixture(scope="session")
def client_endpoint(client_service: SparkGatewayService) -> Iterator[RestEndpoint]:
    endpoint = RestEndpoint(client_service, settings(fetch_timeout=0.5))
    endpoint.start()
    yield endpoint
    endpoint.stop()


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_executor(mode: str, request: pytest.FixtureRequest) -> Iterator[ExecutorFactory]:
    """Builds executors of the test's mode; whatever it built is closed afterwards."""
    built: list[Executor] = []

    def make(**kwargs: object) -> Executor:
        executor: Executor
        if mode == "embedded":
            service = request.getfixturevalue("client_service")
            executor = EmbeddedExecutor(service, **kwargs)  # type: ignore[arg-type]
        else:
            endpoint = request.getfixturevalue("client_endpoint")
            executor = RestExecutor("127.0.0.1", endpoint.port, **kwargs)  # type: ignore[arg-type]
        built.append(executor)
        return executor

    yield make
    for executor in built:
        with contextlib.suppress(Exception):
            executor.close()
