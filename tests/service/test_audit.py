"""The audit log: JSON lines under the data dir with who, from where, which
session, the statement (secrets masked), its outcome, rows and duration;
refused logins without the password; rotation; off when configured so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.auth import Credentials
from sparkgate.api.errors import AuthenticationError, GatewayError
from sparkgate.api.session import SessionEnvironment
from sparkgate.security.passwords import hash_password

from .conftest import fetch_all, service_on, unique_name


def _records(data_dir: Path) -> list[dict[str, Any]]:
    path = data_dir / "log" / "audit.log"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_sessions_statements_are_recorded_with_user_address_outcome_and_rows(
    spark: SparkSession, tmp_path: Path
) -> None:
    with service_on(spark, tmp_path) as service:
        environment = SessionEnvironment(user="ann", client_address="10.1.2.3")
        session = service.open_session(environment)
        ok = service.execute_statement(session, "SELECT id FROM range(3)")
        assert len(fetch_all(service, session, ok)[1]) == 3
        service.close_operation(session, ok)
        table = unique_name("audited")
        failed = service.execute_statement(
            session,
            f"CREATE TABLE {table} (a INT) USING jdbc OPTIONS (url 'jdbc:none:x', "
            "dbtable 't', password 'hunter2-secret')",
        )
        with pytest.raises(GatewayError):
            fetch_all(service, session, failed)
        with pytest.raises(GatewayError, match="reflect"):  # a host statement: off by default
            service.execute_statement(session, "SELECT reflect('java.lang.System', 'exit', 3)")
        service.close_session(session)  # closes the failed statement's operation too

    records = _records(tmp_path)
    text = (tmp_path / "log" / "audit.log").read_text(encoding="utf-8")
    assert "hunter2-secret" not in text
    events = [r["event"] for r in records]
    assert events[0] == "session-opened" and events[-1] == "session-closed"
    for record in records:
        assert record["user"] == "ann" and record["address"] == "10.1.2.3", record
        assert record["session"] == str(session)
        assert record["ts"].endswith("+00:00")
    submitted = [r for r in records if r["event"] == "statement"]
    assert [r["statement"].split()[0] for r in submitted] == ["SELECT", "CREATE", "SELECT"]
    assert "password '***'" in submitted[1]["statement"] or "***" in submitted[1]["statement"]
    assert (
        submitted[2]["outcome"] == "REFUSED" and "allowed-host-statements" in submitted[2]["error"]
    )
    closed = {r["operation"]: r for r in records if r["event"] == "statement-closed"}
    assert closed[str(ok)]["outcome"] == "FINISHED" and closed[str(ok)]["rows"] == 3
    assert closed[str(ok)]["duration_ms"] >= 0
    assert closed[str(failed)]["outcome"] == "ERROR" and closed[str(failed)]["error"]
    assert "hunter2-secret" not in closed[str(failed)]["error"]


def test_a_refused_login_is_recorded_without_the_password(
    spark: SparkSession, tmp_path: Path
) -> None:
    users = tmp_path / "users"
    users.write_text(f"ann:{hash_password('right-one', iterations=1000)}\n", encoding="utf-8")
    options = {
        "sql-gateway.authentication": "password",
        "sql-gateway.authentication.password.file": str(users),
    }
    with service_on(spark, tmp_path / "data", **options) as service:
        with pytest.raises(AuthenticationError):
            service.authenticate(Credentials("ann", "wrong-one", address="192.0.2.7"))
        assert service.authenticate(Credentials("ann", "right-one", address="192.0.2.7"))
    [refused] = [r for r in _records(tmp_path / "data") if r["event"] == "login-refused"]
    assert refused["user"] == "ann" and refused["address"] == "192.0.2.7"
    assert "wrong-one" not in json.dumps(refused) and refused["reason"]


def test_the_log_rotates_and_can_be_turned_off(spark: SparkSession, tmp_path: Path) -> None:
    small = {"sql-gateway.audit.max-file-size": "1 kb", "sql-gateway.audit.max-files": "2"}
    with service_on(spark, tmp_path / "rotated", **small) as service:
        for _ in range(30):
            service.close_session(service.open_session(SessionEnvironment(user="bob")))
    logs = sorted(p.name for p in (tmp_path / "rotated" / "log").glob("audit.log*"))
    assert logs == ["audit.log", "audit.log.1", "audit.log.2"]
    assert all(p.stat().st_size <= 1024 for p in (tmp_path / "rotated" / "log").glob("audit*"))

    with service_on(spark, tmp_path / "off", **{"sql-gateway.audit.enabled": "false"}) as service:
        service.close_session(service.open_session(SessionEnvironment(user="bob")))
    assert not (tmp_path / "off" / "log" / "audit.log").exists()
