"""Invalid values of the gateway's typed options over HiveServer2: refused at
OpenSession, and at ExecuteStatement (a SET, or ``confOverlay``) before any
operation is made, with a message naming the key and what it takes."""

from __future__ import annotations

from typing import Any

import pytest
from TCLIService import ttypes

from tests.hiveserver2.conftest import RawClient

__all__: list[str] = []

OK = ttypes.TStatusCode.SUCCESS_STATUS
ERROR = ttypes.TStatusCode.ERROR_STATUS
PROTOCOL = ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10

INVALID = [
    ("execution.runtime-mode", "sideways", "'batch', 'streaming'"),
    ("sql-gateway.session.idle-timeout", "banana", "cannot parse"),
    ("table.exec.state.ttl", "x", "cannot parse"),
]


def _execute(
    client: RawClient,
    session: Any,
    statement: str,
    overlay: dict[str, str] | None = None,
    *,
    run_async: bool = False,
) -> Any:
    return client.ExecuteStatement(
        ttypes.TExecuteStatementReq(
            sessionHandle=session, statement=statement, confOverlay=overlay, runAsync=run_async
        )
    )


def _value(client: RawClient, session: Any, key: str) -> Any:
    """What ``SET key`` answers."""
    resp = _execute(client, session, f"SET '{key}'")
    assert resp.status.statusCode == OK, resp.status
    fetched = client.FetchResults(
        ttypes.TFetchResultsReq(
            operationHandle=resp.operationHandle,
            orientation=ttypes.TFetchOrientation.FETCH_NEXT,
            maxRows=10,
        )
    )
    assert fetched.status.statusCode == OK, fetched.status
    values = fetched.results.columns[1].stringVal.values
    client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=resp.operationHandle))
    return values[0]


@pytest.mark.parametrize("run_async", [True, False])
@pytest.mark.parametrize(("key", "value", "allowed"), INVALID)
def test_a_set_of_an_invalid_value_is_refused_at_execute_statement(
    client: RawClient, session: Any, key: str, value: str, allowed: str, run_async: bool
) -> None:
    before = _value(client, session, key)
    resp = _execute(client, session, f"SET '{key}' = '{value}'", run_async=run_async)
    # Refused at once, even asynchronously: no operation to poll.
    assert resp.status.statusCode == ERROR, resp.status
    assert resp.operationHandle is None
    message = resp.status.errorMessage
    assert key in message and repr(value) in message and allowed in message, message
    assert _value(client, session, key) == before


def test_valid_values_still_go_in_after_a_refusal(client: RawClient, session: Any) -> None:
    resp = _execute(client, session, "SET 'table.exec.state.ttl' = 'x'", run_async=True)
    assert resp.status.statusCode == ERROR, resp.status
    resp = _execute(client, session, "SET 'table.exec.state.ttl' = '2 h'")
    assert resp.status.statusCode == OK, resp.status
    assert _value(client, session, "table.exec.state.ttl") == "2 h"


@pytest.mark.parametrize(("key", "value", "allowed"), INVALID)
def test_an_invalid_conf_overlay_value_is_refused_at_execute_statement(
    client: RawClient, session: Any, key: str, value: str, allowed: str
) -> None:
    resp = _execute(client, session, "SELECT 1", {key: value}, run_async=True)
    assert resp.status.statusCode == ERROR, resp.status
    assert resp.operationHandle is None
    message = resp.status.errorMessage
    assert key in message and allowed in message, message


@pytest.mark.parametrize(("key", "value", "allowed"), INVALID)
def test_an_invalid_value_is_refused_at_open_session(
    client: RawClient, key: str, value: str, allowed: str
) -> None:
    for name in (key, f"set:hiveconf:{key}"):
        resp = client.OpenSession(
            ttypes.TOpenSessionReq(client_protocol=PROTOCOL, configuration={name: value})
        )
        assert resp.status.statusCode == ERROR, resp.status
        message = resp.status.errorMessage
        assert key in message and repr(value) in message and allowed in message, message
