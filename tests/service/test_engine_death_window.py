"""Between the engine's death and the health watch seeing it, a call into the dead
JVM fails with the broken connection; the client must get the documented 503
(EngineUnavailableError), never an internal error. The window is about 100 ms
wide (the soak met it with a HiveServer2 OpenSession): forced here."""

from __future__ import annotations

import pytest

from sparkgate.api.errors import EngineUnavailableError
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService


def _refused(*_args: object, **_kwargs: object) -> None:
    raise ConnectionRefusedError(111, "Connection refused")  # py4j to a dead JVM


@pytest.fixture
def dead_engine(
    service: SparkGatewayService, monkeypatch: pytest.MonkeyPatch
) -> SparkGatewayService:
    monkeypatch.setattr(service, "_owns_spark", True)
    monkeypatch.setattr(service, "_engine_alive", lambda: False)
    monkeypatch.setattr(service, "_engine_failure", lambda: "engine JVM killed by signal 9")
    return service


def test_open_session_in_the_window_is_a_503(
    dead_engine: SparkGatewayService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dead_engine._sessions, "open", _refused)
    with pytest.raises(EngineUnavailableError, match="The session was not opened: the Spark"):
        dead_engine.open_session(SessionEnvironment())


def test_a_statement_checked_in_the_window_is_a_503(
    service: SparkGatewayService, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = service.open_session(SessionEnvironment())
    try:
        monkeypatch.setattr(service, "_owns_spark", True)
        monkeypatch.setattr(service, "_engine_alive", lambda: False)
        monkeypatch.setattr(service, "_refuse_at_once", _refused)
        expected = "The statement was not submitted: the Spark engine stopped"
        with pytest.raises(EngineUnavailableError, match=expected):
            service.execute_statement(session, "SELECT 1")
    finally:
        monkeypatch.undo()
        service.close_session(session)
