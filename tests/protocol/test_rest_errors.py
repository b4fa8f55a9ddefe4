"""REST error answers: which failure is which status, and the bodies Flink's clients read."""

from __future__ import annotations

from typing import Any

import pytest

from sparkgate.api.errors import (
    CatalogError,
    ConfigurationError,
    EngineUnavailableError,
    ExecutionError,
    FetchError,
    IllegalStateError,
    InvalidTokenError,
    OperationNotFoundError,
    SessionNotFoundError,
    SqlParseError,
    StatementError,
)
from sparkgate.endpoints.rest.errors import FLINK_GATEWAY_EXCEPTION, SERVER_SIDE_END
from tests.doubles import OK, Canned, FakeGatewayService, InProcessClient, rest_client

from .test_rest_results import SCHEMA, submit

# Fixed, so that every pytest-xdist worker collects the same test ids.
UNKNOWN = "5d2f6c1e-8a4b-4c3d-9e7f-0a1b2c3d4e5f"
MAX_BODY = 64 * 1024
_JSON = {"Content-Type": "application/json"}


def flink_client_reason(errors: list[str]) -> str:
    """What Flink's SQL client prints for an error body (its ``CliStrings.messageError``)."""
    message = "[" + ", ".join(errors) + "]"
    return message.split("Caused by:")[-1].split("\tat ")[0].strip()


# (method, path template, request kwargs, status, message fragment): refused by the endpoint.
CASES: list[tuple[str, str, dict[str, Any], int, str]] = [
    ("POST", "/v4/sessions", {"content": b"{not json", "headers": _JSON}, 400, "not valid JSON"),
    ("POST", "/v4/sessions", {"content": b"[1, 2]", "headers": _JSON}, 400, "a JSON object"),
    ("POST", "/v4/sessions", {"json": {"sessionName": 5}}, 400, "'sessionName' must be a string"),
    ("POST", "/v4/sessions", {"json": {"properties": {"a": 1}}}, 400, "strings to strings"),
    ("POST", "/v4/sessions", {"json": {"properties": []}}, 400, "must be an object"),
    ("POST", "/v4/sessions/{s}/statements", {"json": {}}, 400, "'statement' is required"),
    ("POST", "/v4/sessions/{s}/statements", {"json": {"statement": 1}}, 400, "must be a string"),
    (
        "POST",
        "/v4/sessions/{s}/statements",
        {"json": {"statement": "SELECT 1", "executionTimeout": "5"}},
        400,
        "must be an integer",
    ),
    (
        "POST",
        "/v4/sessions/{s}/statements",
        {"json": {"statement": "SELECT 1", "executionTimeout": -1}},
        400,
        "must not be negative",
    ),
    (
        "POST",
        "/v4/sessions/{s}/statements",
        {"json": {"statement": "SELECT 1", "executionConfig": {"k": True}}},
        400,
        "strings to strings",
    ),
    ("GET", "/v4/sessions/not-a-uuid", {}, 400, "not a UUID"),
    ("GET", "/v4/sessions/{s}/operations/bad/status", {}, 400, "not a UUID"),
    ("GET", "/v4/sessions/{s}/operations/{o}/result/0?rowFormat=CSV", {}, 400, "Invalid rowFormat"),
    ("GET", "/v4/sessions/{s}/operations/{o}/result/x?rowFormat=JSON", {}, 400, "token"),
    (
        "GET",
        "/v4/sessions/{s}/complete-statement",
        {"json": {"statement": "SELECT", "position": 99}},
        400,
        "'position'",
    ),
    ("POST", "/v4/sessions", {"content": b"x" * (MAX_BODY + 1), "headers": _JSON}, 413, "large"),
    (
        "POST",
        "/v4/sessions/{s}/statements",
        {"content": b" " * (4 * MAX_BODY), "headers": _JSON},
        413,
        "max-body",
    ),
    # Unknown handles: the service says so, the endpoint answers 404.
    ("GET", f"/v4/sessions/{UNKNOWN}", {}, 404, "does not exist"),
    ("POST", f"/v4/sessions/{UNKNOWN}/heartbeat", {}, 404, "does not exist"),
    ("POST", f"/v4/sessions/{UNKNOWN}/statements", {"json": {"statement": "SELECT 1"}}, 404, ""),
    ("GET", f"/v4/sessions/{{s}}/operations/{UNKNOWN}/status", {}, 404, "does not exist"),
    ("POST", f"/v4/sessions/{{s}}/operations/{UNKNOWN}/cancel", {}, 404, "does not exist"),
    ("DELETE", f"/v4/sessions/{{s}}/operations/{UNKNOWN}/close", {}, 404, "does not exist"),
    (
        "GET",
        f"/v4/sessions/{{s}}/operations/{UNKNOWN}/result/0?rowFormat=JSON",
        {},
        404,
        "does not exist",
    ),
]


@pytest.mark.parametrize(("method", "path", "kwargs", "status", "fragment"), CASES)
def test_error_cases(
    http: InProcessClient,
    service: FakeGatewayService,
    session: str,
    method: str,
    path: str,
    kwargs: dict[str, Any],
    status: int,
    fragment: str,
) -> None:
    service.results["SELECT 1"] = OK
    op = submit(http, session, "SELECT 1") if "{o}" in path else ""
    response = http.request(method, path.format(s=session, o=op), **kwargs)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["errors"] and all(isinstance(e, str) for e in body["errors"])
    assert fragment in body["errors"][0]


# (service method that fails, its exception, the route's call, status)
_SESSION_CALL = ("GET", "/v4/sessions/{s}")
_EXECUTE_CALL = ("POST", "/v4/sessions/{s}/statements")
_FETCH_CALL = ("GET", "/v4/sessions/{s}/operations/{o}/result/0")
MAPPING: list[tuple[str, BaseException, tuple[str, str], int]] = [
    ("get_session_config", SessionNotFoundError("Session x does not exist."), _SESSION_CALL, 404),
    ("get_session_config", CatalogError("no such catalog"), _SESSION_CALL, 404),
    ("get_session_config", ConfigurationError("bad value"), _SESSION_CALL, 400),
    ("execute_statement", OperationNotFoundError("gone"), _EXECUTE_CALL, 404),
    ("execute_statement", SqlParseError("Syntax error at 1:8"), _EXECUTE_CALL, 400),
    ("execute_statement", StatementError("not here"), _EXECUTE_CALL, 400),
    ("execute_statement", IllegalStateError("not now"), _EXECUTE_CALL, 409),
    ("fetch_results", InvalidTokenError("token 7"), _FETCH_CALL, 400),
    ("fetch_results", FetchError("cannot fetch"), _FETCH_CALL, 400),
]


@pytest.mark.parametrize(("method", "error", "call", "status"), MAPPING)
def test_gateway_errors_map_to_their_status_with_the_message(
    http: InProcessClient,
    service: FakeGatewayService,
    session: str,
    method: str,
    error: BaseException,
    call: tuple[str, str],
    status: int,
) -> None:
    service.results["SELECT 1"] = OK
    op = submit(http, session, "SELECT 1")
    service.failures[method] = error
    response = http.request(
        call[0], call[1].format(s=session, o=op), json={"statement": "SELECT 1"}
    )
    assert response.status_code == status, response.text
    assert response.json() == {"errors": [str(error)]}


def test_session_limit_is_503_with_retry_after() -> None:
    with rest_client(FakeGatewayService(max_sessions=1)) as (http, _):
        assert http.post("/v4/sessions").status_code == 200
        response = http.post("/v4/sessions")
        assert response.status_code == 503
        assert response.headers["retry-after"]
        assert "maximum" in response.json()["errors"][0]


def test_a_statement_that_fails_while_running_is_a_500_with_the_root_cause(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    error = ExecutionError(
        "Table or view not found: nope",
        causes=(
            "org.apache.spark.sql.AnalysisException: [TABLE_OR_VIEW_NOT_FOUND] nope",
            "java.lang.IllegalStateException: the root cause",
        ),
        error_class="TABLE_OR_VIEW_NOT_FOUND",
    )
    service.results["SELECT * FROM nope"] = Canned.failing(error)
    op = submit(http, session, "SELECT * FROM nope")
    base = f"/v4/sessions/{session}/operations/{op}"
    assert http.get(base + "/status").json() == {"status": "ERROR"}
    response = http.get(base + "/result/0?rowFormat=JSON")
    assert response.status_code == 500
    errors = response.json()["errors"]
    assert errors[0] == "Internal server error."
    head = errors[1].splitlines()
    assert head[1] == f"{FLINK_GATEWAY_EXCEPTION}: Failed to fetchResults."
    assert errors[1].endswith(SERVER_SIDE_END)
    assert flink_client_reason(errors) == "java.lang.IllegalStateException: the root cause"


def test_statement_error_while_fetching_is_a_500_not_a_400(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.results["SELECT 1"] = Canned.query(SCHEMA, [(1, "a")])
    op = submit(http, session, "SELECT 1")
    service.failures["fetch_results"] = StatementError("the query's source went away")
    response = http.get(f"/v4/sessions/{session}/operations/{op}/result/0")
    assert response.status_code == 500
    errors = response.json()["errors"]
    assert flink_client_reason(errors) == "StatementError: the query's source went away"


def test_unexpected_failure_is_500_and_the_endpoint_keeps_serving(
    http: InProcessClient, service: FakeGatewayService
) -> None:
    service.failures["get_gateway_info"] = RuntimeError("boom")
    response = http.get("/v4/info")
    assert response.status_code == 500
    errors = response.json()["errors"]
    assert errors[0] == "Internal server error."
    assert "\nCaused by: builtins.RuntimeError: boom\n\tat " in errors[1]
    assert flink_client_reason(errors) == "builtins.RuntimeError: boom"
    # The gateway's own frames, innermost first, under the outermost exception.
    head = errors[1].split("\nCaused by: ")[0].splitlines()
    assert head[1].endswith("Failed to getInfo.")
    frame = "\tat sparkgate.endpoints.rest.handlers.get_info(handlers.py:"
    assert any(line.startswith(frame) for line in head[2:])
    del service.failures["get_gateway_info"]
    assert http.get("/v4/info").status_code == 200


def test_a_statement_the_service_refuses_is_400_with_its_message(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.results["SET a=1; SET b=2"] = Canned(
        refused=StatementError("configure-session takes one statement at a time.")
    )
    response = http.post(
        f"/v4/sessions/{session}/configure-session", json={"statement": "SET a=1; SET b=2"}
    )
    assert response.status_code == 400
    assert response.json() == {"errors": ["configure-session takes one statement at a time."]}


def test_an_engine_down_is_503_with_its_retry_after() -> None:
    with rest_client(FakeGatewayService()) as (client, service):
        service.failures["open_session"] = EngineUnavailableError(
            "The Spark engine is restarting (engine JVM exited with 52); retry shortly.", 7
        )
        response = client.post("/v4/sessions", json={})
        assert response.status_code == 503
        assert response.headers["retry-after"] == "7"
        assert "restarting" in response.json()["errors"][0]
