"""Protocol tests: the REST and HiveServer2 endpoints over the GatewayService double.

No JVM starts here (the tier is ``unit``): the double answers with the
results each test chose, so these tests pin the endpoints' translation of
requests, shapes, tokens and errors, not Spark's behaviour.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.doubles import FakeGatewayService, InProcessClient, hiveserver2_handler, rest_client


@pytest.fixture
def service() -> FakeGatewayService:
    return FakeGatewayService()


@pytest.fixture
def http(service: FakeGatewayService) -> Iterator[InProcessClient]:
    with rest_client(service, max_body_size=64 * 1024) as (client, _):
        yield client


@pytest.fixture
def session(http: InProcessClient) -> str:
    response = http.post("/v4/sessions", json={"sessionName": "protocol"})
    assert response.status_code == 200, response.text
    return str(response.json()["sessionHandle"])


@pytest.fixture
def handler(service: FakeGatewayService) -> Any:
    return hiveserver2_handler(service, fetch_max_rows=1000, fetch_first_max_rows=100)
