"""A property-based fuzz of the REST API from its own OpenAPI document
(schemathesis), against the real service with authentication on: whatever a
client sends, with good credentials or bad, the answer is never a 5xx."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from pyspark.sql import SparkSession

from sparkgate.endpoints.rest.openapi import build_openapi
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.security.passwords import hash_password
from tests.service.conftest import make_service

from .conftest import settings as rest_settings

schema = schemathesis.openapi.from_dict(build_openapi())

_USER, _PASSWORD = "fuzz", "fuzz-password-1"


def _basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.fixture(scope="module")
def secured(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    users = tmp_path_factory.mktemp("fuzz") / "users"
    users.write_text(f"{_USER}:{hash_password(_PASSWORD, iterations=1000)}\n", encoding="utf-8")
    service = make_service(
        spark,
        **{
            "sql-gateway.authentication": "password",
            "sql-gateway.authentication.password.file": str(users),
            # The fuzz opens sessions by the hundred; the per-user cap is not under test.
            "sql-gateway.user.max-sessions": "0",
        },
    )
    endpoint = RestEndpoint(service, rest_settings())
    endpoint.start()
    try:
        yield endpoint.address
    finally:
        endpoint.stop()
        service.stop()


def _checked(case: Any, url: str, headers: dict[str, str]) -> Any:
    response = case.call(base_url=url, headers=headers, timeout=60)
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:500]}"
    )
    return response


_SETTINGS = settings(
    max_examples=12,
    deadline=None,
    database=None,  # no example database written into the checkout
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@schema.parametrize()
@_SETTINGS
def test_with_credentials_no_request_is_a_server_error(case: Any, secured: str) -> None:
    _checked(case, secured, _basic(_USER, _PASSWORD))


@schema.parametrize()
@_SETTINGS
def test_with_wrong_or_no_credentials_every_call_is_refused(case: Any, secured: str) -> None:
    for headers in ({}, _basic(_USER, "wrong"), {"Authorization": "Bearer not.a.token"}):
        response = _checked(case, secured, headers)
        path = case.formatted_path
        if not path.startswith(("/health", "/metrics", "/openapi")):
            assert response.status_code in (400, 401, 404, 405, 413, 415), (path, response.text)
