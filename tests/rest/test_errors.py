"""Error answers: status codes and {"errors": [...]} bodies, while healthy clients go on."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.service.gateway import SparkGatewayService
from tests.service.conftest import make_service

from .conftest import MAX_BODY, flink_client_reason, rows, run, settings, submit

# Fixed, so that every pytest-xdist worker collects the same test ids.
UNKNOWN = "5d2f6c1e-8a4b-4c3d-9e7f-0a1b2c3d4e5f"


@pytest.fixture
def healthy(endpoint: RestEndpoint) -> Iterator[list[str]]:
    """A client running queries on its own session throughout the test."""
    failures: list[str] = []
    stop = threading.Event()

    def loop() -> None:
        with httpx.Client(base_url=endpoint.address, timeout=120) as http:
            handle = http.post("/v4/sessions", json={}).json()["sessionHandle"]
            while not stop.is_set():
                try:
                    got = rows(run(http, handle, "SELECT 5 AS five"))
                    if got != [[5]]:
                        failures.append(f"wrong rows {got}")
                except Exception as exc:  # recorded, asserted by the test
                    failures.append(repr(exc))
            http.delete(f"/v4/sessions/{handle}")

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield failures
    stop.set()
    thread.join(120)
    assert not thread.is_alive()
    assert failures == []


_JSON = {"Content-Type": "application/json"}

# (method, path template, request kwargs, status, message fragment)
CASES: list[tuple[str, str, dict[str, Any], int, str]] = [
    ("POST", "/v4/sessions", {"content": b"{not json", "headers": _JSON}, 400, "not valid JSON"),
    (
        "POST",
        "/v4/sessions",
        {"content": b"[1, 2]", "headers": _JSON},
        400,
        "must be a JSON object",
    ),
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
    ("GET", "/v4/sessions/{s}/operations/{o}/result/0?rowFormat=CSV", {}, 400, "Invalid rowFormat"),
    ("GET", "/v4/sessions/{s}/operations/{o}/result/7?rowFormat=JSON", {}, 400, "token"),
    ("GET", "/v4/sessions/{s}/operations/{o}/result/x?rowFormat=JSON", {}, 400, "token"),
    (
        "POST",
        "/v4/sessions/{s}/configure-session",
        {"json": {"statement": "SELECT 1"}},
        400,
        "configure-session",
    ),
    (
        "POST",
        "/v4/sessions/{s}/configure-session",
        {"json": {"statement": "SET a=1; SET b=2"}},
        400,
        "one statement",
    ),
    (
        "GET",
        "/v4/sessions/{s}/complete-statement",
        {"json": {"statement": "SELECT", "position": 99}},
        400,
        "'position'",
    ),
    (
        "POST",
        "/v4/sessions",
        {"content": b"x" * (MAX_BODY + 1), "headers": _JSON},
        413,
        "too large",
    ),
    (
        "POST",
        "/v4/sessions/{s}/statements",
        {"content": b" " * (4 * MAX_BODY), "headers": _JSON},
        413,
        "max-body",
    ),
]


@pytest.mark.parametrize(("method", "path", "kwargs", "status", "fragment"), CASES)
def test_error_cases(
    client: httpx.Client,
    session: str,
    healthy: list[str],
    method: str,
    path: str,
    kwargs: dict[str, Any],
    status: int,
    fragment: str,
) -> None:
    op = submit(client, session, "SELECT 1") if "{o}" in path else ""
    response = client.request(method, path.format(s=session, o=op), **kwargs)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["errors"] and all(isinstance(e, str) for e in body["errors"])
    assert fragment in body["errors"][0]


def test_chunked_body_over_the_limit_is_refused(client: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(8):
            yield b" " * (MAX_BODY // 4)

    response = client.post(
        "/v4/sessions", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert "too large" in response.json()["errors"][0]


def test_session_limit_is_503(spark: Any) -> None:
    service = make_service(spark, **{"sql-gateway.session.max-num": "1"})
    server = RestEndpoint(service, settings())
    server.start()
    try:
        with httpx.Client(base_url=server.address, timeout=60) as http:
            assert http.post("/v4/sessions").status_code == 200
            response = http.post("/v4/sessions")
            assert response.status_code == 503
            assert response.headers["retry-after"]
            assert "maximum" in response.json()["errors"][0]
    finally:
        server.stop()
        service.stop()


def test_unexpected_failure_is_500_and_server_keeps_serving(
    client: httpx.Client, rest_service: SparkGatewayService, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(rest_service, "get_gateway_info", broken)
    response = client.get("/v4/info")
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
    monkeypatch.undo()
    assert client.get("/v4/info").status_code == 200


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None],
)
def test_a_body_that_is_not_json_is_415(
    client: httpx.Client, session: str, content_type: str | None
) -> None:
    """What a page of another site can post without a CORS preflight never runs."""
    headers = {"Content-Type": content_type} if content_type else {}
    before = client.get(f"/v4/sessions/{session}").json()["properties"]
    response = client.post(
        f"/v4/sessions/{session}/configure-session",
        content=b"{\"statement\": \"SET 'planted' = 'yes'\"}",
        headers=headers,
    )
    assert response.status_code == 415, response.text
    assert "application/json" in response.json()["errors"][0]
    assert client.get(f"/v4/sessions/{session}").json()["properties"] == before
    # JSON (with a charset, as Flink's clients send it) and body-less calls are served.
    ok = client.post(
        f"/v4/sessions/{session}/heartbeat",
        content=b"{}",
        headers={"Content-Type": "application/json; charset=UTF-8"},
    )
    assert ok.status_code == 200
    assert client.post(f"/v4/sessions/{session}/heartbeat").status_code == 200


def test_cors_is_closed_by_default(client: httpx.Client) -> None:
    preflight = client.options(
        "/v4/sessions",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert "access-control-allow-origin" not in preflight.headers
    response = client.get("/v4/info", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in response.headers


def test_cors_answers_configured_origins_only(rest_service: Any) -> None:
    server = RestEndpoint(rest_service, settings(cors_allowed_origins=("https://app.example",)))
    server.start()
    try:
        with httpx.Client(base_url=server.address, timeout=60) as http:
            ok = http.options(
                "/v4/sessions",
                headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
            )
            assert ok.headers.get("access-control-allow-origin") == "https://app.example"
            other = http.get("/v4/info", headers={"Origin": "https://evil.example"})
            assert "access-control-allow-origin" not in other.headers
    finally:
        server.stop()


def test_a_statement_over_the_length_limit_is_400_before_parsing(spark: Any) -> None:
    service = make_service(spark, **{"sql-gateway.statement.max-length": "1000"})
    server = RestEndpoint(service, settings(max_body_size=1 << 20))
    server.start()
    try:
        with httpx.Client(base_url=server.address, timeout=60) as http:
            session = http.post("/v4/sessions", json={}).json()["sessionHandle"]
            long = "SELECT 1 AS x" + " " * 1000 + "-- padding"
            response = http.post(f"/v4/sessions/{session}/statements", json={"statement": long})
            assert response.status_code == 400, response.text
            assert "sql-gateway.statement.max-length (1000)" in response.json()["errors"][0]
            # The session serves the next statement.
            assert rows(run(http, session, "SELECT 2 AS y")) == [[2]]
    finally:
        server.stop()
        service.stop()
