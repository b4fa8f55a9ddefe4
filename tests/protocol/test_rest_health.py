"""The probes: liveness while the process serves, readiness only while the engine is up;
an engine that is down answers new work with 503 and Retry-After."""

from __future__ import annotations

from sparkgate.api.health import EngineState, GatewayHealth
from tests.doubles import FakeGatewayService, InProcessClient


def test_ready_while_the_engine_is_up(http: InProcessClient) -> None:
    assert http.get("/health/live").json() == {"status": "UP"}
    ready = http.get("/health/ready")
    assert ready.status_code == 200
    assert ready.json() == {"status": "UP", "engine": "UP", "restarts": 0}


def test_not_ready_while_the_engine_restarts(
    http: InProcessClient, service: FakeGatewayService
) -> None:
    service.gateway_health = GatewayHealth(
        EngineState.RESTARTING, "engine JVM killed by signal 9", restarts=1
    )
    ready = http.get("/health/ready")
    assert ready.status_code == 503
    assert ready.headers["retry-after"] == "5"
    assert ready.json() == {
        "status": "DOWN",
        "engine": "RESTARTING",
        "restarts": 1,
        "cause": "engine JVM killed by signal 9",
    }
    # The process itself is alive: an orchestrator must not restart it for this.
    assert http.get("/health/live").status_code == 200
