"""Session properties of the gateway's typed options are checked: at open and at SET."""

from __future__ import annotations

import httpx
import pytest

from sparkgate.api.handles import SessionHandle
from sparkgate.service.gateway import SparkGatewayService

from .conftest import run


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("execution.runtime-mode", "sideways"),
        ("sql-gateway.session.idle-timeout", "banana"),
        ("table.dml-sync", "perhaps"),
        ("sql-gateway.result.buffer-size", "lots"),
    ],
)
def test_an_invalid_value_is_refused_at_open_with_400(
    client: httpx.Client, key: str, value: str
) -> None:
    response = client.post("/v1/sessions", json={"properties": {key: value}})
    assert response.status_code == 400, response.text
    assert key in response.text and value in response.text


INVALID = [
    ("execution.runtime-mode", "sideways", "'batch', 'streaming'"),
    ("sql-gateway.session.idle-timeout", "banana", "cannot parse"),
    ("table.exec.state.ttl", "x", "cannot parse"),
    ("table.dml-sync", "perhaps", "'true' or 'false'"),
    ("sql-gateway.result.buffer-size", "lots", "cannot parse"),
]


def _statements(client: httpx.Client, session: str, body: dict[str, object]) -> httpx.Response:
    return client.post(f"/v4/sessions/{session}/statements", json=body)


def _operation_count(service: SparkGatewayService, session: str) -> int:
    return len(service._session(SessionHandle.parse(session)).operations)


@pytest.mark.parametrize(("key", "value", "allowed"), INVALID)
def test_an_invalid_value_is_refused_at_set_with_400(
    client: httpx.Client,
    rest_service: SparkGatewayService,
    session: str,
    key: str,
    value: str,
    allowed: str,
) -> None:
    before = client.get(f"/v4/sessions/{session}").json()["properties"]
    operations = _operation_count(rest_service, session)
    response = _statements(client, session, {"statement": f"SET '{key}' = '{value}'"})
    # Refused as it is submitted: no operation, the key and what it takes named.
    assert response.status_code == 400, response.text
    message = response.json()["errors"][0]
    assert key in message and repr(value) in message and allowed in message, message
    assert _operation_count(rest_service, session) == operations
    # The session keeps its values.
    assert client.get(f"/v4/sessions/{session}").json()["properties"] == before


def test_valid_values_still_go_in_after_a_refusal(client: httpx.Client, session: str) -> None:
    response = _statements(client, session, {"statement": "SET 'execution.runtime-mode' = 'x'"})
    assert response.status_code == 400, response.text
    config = client.get(f"/v4/sessions/{session}").json()["properties"]
    assert config.get("execution.runtime-mode") != "x"
    run(client, session, "SET 'execution.runtime-mode' = 'streaming'")
    run(client, session, "SET 'table.exec.state.ttl' = '2 h'")
    config = client.get(f"/v4/sessions/{session}").json()["properties"]
    assert config["execution.runtime-mode"] == "streaming"
    assert config["table.exec.state.ttl"] == "2 h"
    # Spark's unquoted form is the same SET.
    response = _statements(client, session, {"statement": "SET table.dml-sync=perhaps"})
    assert response.status_code == 400 and "table.dml-sync" in response.text, response.text


@pytest.mark.parametrize(("key", "value", "allowed"), INVALID[:3])
def test_an_invalid_execution_config_value_is_refused_with_400(
    client: httpx.Client, session: str, key: str, value: str, allowed: str
) -> None:
    body = {"statement": "SELECT 1", "executionConfig": {key: value}}
    response = _statements(client, session, body)
    assert response.status_code == 400, response.text
    message = response.json()["errors"][0]
    assert key in message and allowed in message, message
    # A valid one runs the statement.
    body = {"statement": "SELECT 1", "executionConfig": {"execution.runtime-mode": "batch"}}
    response = _statements(client, session, body)
    assert response.status_code == 200, response.text


def test_configure_session_refuses_an_invalid_value_with_400(
    client: httpx.Client, session: str
) -> None:
    response = client.post(
        f"/v4/sessions/{session}/configure-session",
        json={"statement": "SET 'execution.runtime-mode' = 'sideways'"},
    )
    assert response.status_code == 400, response.text
    assert "execution.runtime-mode" in response.text
