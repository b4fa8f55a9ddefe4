"""The gateway's authentication on the HiveServer2 endpoint: PyHive logs in with
SASL PLAIN (binary) and HTTP Basic against the gateway's password file, a wrong
password or a NOSASL connection is refused, and another user's session handle
is refused on every call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from TCLIService import ttypes

from sparkgate.api.auth import Principal
from sparkgate.api.config import Configuration
from sparkgate.api.errors import ConfigurationError
from sparkgate.endpoints.hiveserver2.endpoint import HiveServer2Endpoint
from sparkgate.endpoints.hiveserver2.handler import (
    CLIServiceHandler,
    ConnectionContext,
    HiveServer2Core,
)
from sparkgate.endpoints.hiveserver2.options import AuthMode, HiveServer2Settings
from sparkgate.security.authentication import Authentication
from sparkgate.service.gateway import SparkGatewayService
from tests.doubles import FakeGatewayService
from tests.service.conftest import make_service

from .conftest import PASSWORD, USER, Running, run_client, running_endpoint
from .test_clients import PYHIVE_SCRIPT

OK_STATUS = ttypes.TStatusCode.SUCCESS_STATUS


@pytest.fixture(scope="module")
def authenticated_service(spark: Any, password_file: Path) -> Iterator[SparkGatewayService]:
    service = make_service(
        spark,
        **{
            "sql-gateway.authentication": "password",
            "sql-gateway.authentication.password.file": str(password_file),
        },
    )
    yield service
    service.stop()


@pytest.fixture(scope="module")
def hs2_gateway_auth(authenticated_service: SparkGatewayService) -> Iterator[Running]:
    with running_endpoint(authenticated_service) as running:  # its own mode: NONE
        yield running


@pytest.mark.parametrize(("auth", "scheme"), [("CUSTOM", "binary"), ("NONE", "http")])
def test_pyhive_logs_in_with_the_gateway_password(
    hs2_gateway_auth: Running, pyhive_python: Path, auth: str, scheme: str
) -> None:
    port = hs2_gateway_auth.http_port if scheme == "http" else hs2_gateway_auth.port
    out = run_client(pyhive_python, PYHIVE_SCRIPT, str(port), auth, USER, PASSWORD, scheme)
    assert out.get("rows") == [[0, "0"], [1, "1"], [2, "2"]], out


@pytest.mark.parametrize(
    ("auth", "scheme", "password"),
    [("CUSTOM", "binary", "wrong"), ("NONE", "http", "wrong"), ("NOSASL", "binary", "")],
)
def test_wrong_or_missing_credentials_are_refused(
    hs2_gateway_auth: Running, pyhive_python: Path, auth: str, scheme: str, password: str
) -> None:
    port = hs2_gateway_auth.http_port if scheme == "http" else hs2_gateway_auth.port
    out = run_client(pyhive_python, PYHIVE_SCRIPT, str(port), auth, USER, password, scheme)
    assert "rows" not in out and "error" in out, out
    if auth == "CUSTOM":
        assert f"authentication failed for user '{USER}'" in out["error"]
    # The endpoint keeps serving the right password.
    good = run_client(
        pyhive_python, PYHIVE_SCRIPT, str(hs2_gateway_auth.port), "CUSTOM", USER, PASSWORD, "binary"
    )
    assert good.get("rows") == [[0, "0"], [1, "1"], [2, "2"]]


def test_nosasl_with_gateway_authentication_does_not_start(
    authenticated_service: SparkGatewayService,
) -> None:
    with pytest.raises(ConfigurationError, match="NOSASL"):
        HiveServer2Endpoint(
            authenticated_service,
            HiveServer2Settings(port=0, http_port=0, authentication=AuthMode.NOSASL),
        )


def _handler(service: FakeGatewayService, principal: Principal) -> CLIServiceHandler:
    core = HiveServer2Core(service, HiveServer2Settings(fetch_timeout=0.0))
    return CLIServiceHandler(core, ConnectionContext(principal.name, principal=principal))


def test_another_users_session_handle_is_refused(tmp_path: Path) -> None:
    users = tmp_path / "users"
    users.write_text("", encoding="utf-8")
    authentication = Authentication.from_config(
        ("password",),
        ("ops",),
        Configuration({"sql-gateway.authentication.password.file": str(users)}),
        str(tmp_path),
    )
    service = FakeGatewayService(authentication=authentication)
    ann = _handler(service, Principal("ann", mechanism="password"))
    bob = _handler(service, Principal("bob", mechanism="password"))
    ops = _handler(service, Principal("ops", mechanism="password", admin=True))
    opened = ann.OpenSession(ttypes.TOpenSessionReq(client_protocol=9, username="ignored"))
    assert opened.status.statusCode == OK_STATUS
    handle = opened.sessionHandle
    assert next(iter(service.sessions.values())).environment.user == "ann"
    request = ttypes.TExecuteStatementReq(sessionHandle=handle, statement="SELECT 1")
    refused = bob.ExecuteStatement(request)
    assert refused.status.statusCode != OK_STATUS
    assert "another user" in refused.status.errorMessage
    closed = bob.CloseSession(ttypes.TCloseSessionReq(sessionHandle=handle))
    assert closed.status.statusCode != OK_STATUS and service.sessions
    info = ops.GetInfo(
        ttypes.TGetInfoReq(sessionHandle=handle, infoType=ttypes.TGetInfoType.CLI_DBMS_NAME)
    )
    assert info.status.statusCode == OK_STATUS
    assert (
        ann.CloseSession(ttypes.TCloseSessionReq(sessionHandle=handle)).status.statusCode
        == OK_STATUS
    )
