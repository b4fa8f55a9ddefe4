"""The REST client tells a closed session from a closed operation by asking the gateway
(the session's heartbeat), not by reading the error's text."""

from __future__ import annotations

import httpx
import pytest

from sparkgate.api.errors import OperationNotFoundError, SessionNotFoundError
from sparkgate.client.rest import RestExecutor
from sparkgate.endpoints.rest.server import RestEndpoint


def test_closed_operation_then_closed_session(client_endpoint: RestEndpoint) -> None:
    executor = RestExecutor("127.0.0.1", client_endpoint.port)
    executor.open()
    try:
        operation = executor.submit("SELECT 1")
        executor.close_operation(operation)
        with pytest.raises(OperationNotFoundError):
            executor.fetch(operation, 0, 10, 0.0)
        session = executor._session_path()
        httpx.delete(f"http://127.0.0.1:{client_endpoint.port}/v1{session}").raise_for_status()
        with pytest.raises(SessionNotFoundError):
            executor.fetch(operation, 0, 10, 0.0)
        with pytest.raises(SessionNotFoundError):
            executor.heartbeat()
    finally:
        executor._session = None
