"""Fixtures for REST endpoint tests: a real service on the shared Spark session,
served by the real endpoint (uvicorn on a free loopback port) and reached with httpx."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from sparkgate.endpoints.rest.options import RestSettings
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.service.gateway import SparkGatewayService
from tests.service.conftest import make_service

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DATA = Path(__file__).resolve().parent.parent / "data" / "flink"
MAX_BODY = 64 * 1024
MAX_SESSIONS = 50


def settings(**overrides: Any) -> RestSettings:
    values: dict[str, Any] = {
        "address": "127.0.0.1",
        "port": 0,
        "bind_address": "127.0.0.1",
        "bind_ports": (0, 0),
        "fetch_timeout": 1.0,
        "max_body_size": MAX_BODY,
        "fetch_max_rows": 1000,
    }
    values.update(overrides)
    return RestSettings(**values)


@pytest.fixture(scope="session")
def rest_service(spark: SparkSession) -> Iterator[SparkGatewayService]:
    service = make_service(
        spark,
        **{
            "sql-gateway.session.max-num": str(MAX_SESSIONS),
            # Tests make tasks sleep with reflect(), off by default (test_host_statements).
            "sql-gateway.security.allowed-host-statements": "reflection",
        },
    )
    yield service
    service.stop()


@pytest.fixture(scope="session")
def endpoint(rest_service: SparkGatewayService) -> Iterator[RestEndpoint]:
    server = RestEndpoint(rest_service, settings())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def client(endpoint: RestEndpoint) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=endpoint.address, timeout=120) as http:
        yield http


@pytest.fixture
def session(client: httpx.Client) -> Iterator[str]:
    response = client.post("/v4/sessions", json={"sessionName": "rest-test"})
    assert response.status_code == 200, response.text
    handle: str = response.json()["sessionHandle"]
    yield handle
    client.delete(f"/v4/sessions/{handle}")


def submit(client: httpx.Client, session: str, statement: str, version: str = "v4") -> str:
    response = client.post(
        f"/{version}/sessions/{session}/statements", json={"statement": statement}
    )
    assert response.status_code == 200, response.text
    return str(response.json()["operationHandle"])


def walk(client: httpx.Client, first_uri: str, timeout: float = 120) -> list[dict[str, Any]]:
    """Follow nextResultUri from ``first_uri`` to EOS; every response body, in order."""
    bodies: list[dict[str, Any]] = []
    uri: str | None = first_uri
    deadline = time.monotonic() + timeout
    while uri is not None:
        assert time.monotonic() < deadline, "result did not reach EOS in time"
        response = client.get(uri)
        assert response.status_code == 200, response.text
        body = response.json()
        bodies.append(body)
        uri = body.get("nextResultUri")
    return bodies


def rows(bodies: list[dict[str, Any]]) -> list[list[Any]]:
    return [row["fields"] for b in bodies if "results" in b for row in b["results"]["data"]]


def run(
    client: httpx.Client, session: str, statement: str, row_format: str = "JSON"
) -> list[dict[str, Any]]:
    op = submit(client, session, statement)
    return walk(client, f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat={row_format}")


def flink_client_reason(errors: list[str]) -> str:
    """The reason Flink's SQL client prints for an error body (its ``CliStrings.messageError``).

    The client's ``RestClientException`` message is the error list's Java
    ``toString``; it prints the text after the last ``Caused by:`` up to the
    first ``\tat ``, trimmed.
    """
    message = "[" + ", ".join(errors) + "]"
    return message.split("Caused by:")[-1].split("\tat ")[0].strip()
