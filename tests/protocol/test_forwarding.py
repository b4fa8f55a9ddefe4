"""Calls on a session another gateway of the service serves are forwarded to it
(endpoints/rest/forwarding.py): two real REST endpoints on loopback ports, each
over a service double that says which gateway serves which session."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from sparkgate.api.handles import SessionHandle
from sparkgate.endpoints.rest.server import RestEndpoint
from tests.doubles import OK, FakeGatewayService
from tests.processes import free_port
from tests.rest.conftest import settings


@pytest.fixture
def pair() -> Iterator[tuple[FakeGatewayService, str, FakeGatewayService, str]]:
    """Two gateways: (service, URL) each."""
    ends = []
    for _ in range(2):
        service = FakeGatewayService()
        endpoint = RestEndpoint(service, settings())
        endpoint.start()
        ends.append((service, endpoint))
    try:
        (a, a_end), (b, b_end) = ends
        yield a, f"http://127.0.0.1:{a_end.port}", b, f"http://127.0.0.1:{b_end.port}"
    finally:
        for _, endpoint in ends:
            endpoint.stop()


def test_a_call_on_another_gateways_session_is_answered_by_it(
    pair: tuple[FakeGatewayService, str, FakeGatewayService, str],
) -> None:
    a, a_url, b, b_url = pair
    handle = httpx.post(f"{b_url}/v4/sessions", json={"sessionName": "on-b"}).json()[
        "sessionHandle"
    ]
    a.owners[SessionHandle.parse(handle)] = b_url
    b.results["SELECT 42"] = OK
    a.calls.clear()
    b.calls.clear()
    with httpx.Client(base_url=a_url) as client:
        config = client.get(f"/v4/sessions/{handle}", headers={"Authorization": "Bearer t0k"})
        assert config.status_code == 200, config.text
        assert config.headers["content-type"].startswith("application/json")
        submitted = client.post(
            f"/v4/sessions/{handle}/statements",
            json={"statement": "SELECT 42", "executionConfig": {"k": "v"}},
        )
        assert submitted.status_code == 200, submitted.text
        missing = client.get(f"/v4/sessions/{handle}/operations/{'0' * 32}/status")
    # Served by b, as sent: a only routed them.
    assert [c.name for c in a.calls] == []
    assert [c.name for c in b.calls if c.name != "authorize_session"][:3] == [
        "get_session_config",
        "execute_statement",
        "get_operation_info",
    ]
    (statement,) = b.called("execute_statement")
    assert statement.args[1] == "SELECT 42"
    assert statement.kwargs["config"] == {"k": "v"}
    # b's own answers come back as they were, errors too.
    assert missing.status_code == 404
    assert "does not exist" in missing.text


def test_a_forwarded_call_is_never_forwarded_again(
    pair: tuple[FakeGatewayService, str, FakeGatewayService, str],
) -> None:
    a, a_url, b, b_url = pair
    handle = SessionHandle.create()
    # Each believes the other serves it (a record moving between them).
    a.owners[handle] = b_url
    b.owners[handle] = a_url
    answer = httpx.get(f"{a_url}/v4/sessions/{handle}", timeout=10)
    assert answer.status_code == 404, answer.text
    assert [c.name for c in b.calls] == ["get_session_config"]


def test_a_gateway_that_does_not_answer_is_a_503_to_retry(
    pair: tuple[FakeGatewayService, str, FakeGatewayService, str],
) -> None:
    a, a_url, _, _ = pair
    handle = SessionHandle.create()
    a.owners[handle] = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    answer = httpx.post(f"{a_url}/v4/sessions/{handle}/statements", json={"statement": "SELECT 1"})
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"] == "5"
    assert "does not answer" in answer.text
    assert "sql-gateway.state.lease" in answer.text
    assert a.calls == []
