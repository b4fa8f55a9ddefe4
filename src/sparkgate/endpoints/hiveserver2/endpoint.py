"""The HiveServer2 endpoint plug-in: factory, and the endpoint's life cycle.

Registered under the entry-point group ``sparkgate.endpoints`` as
``hiveserver2``; started with ``-Dsql-gateway.endpoint.type=hiveserver2`` (or
``rest;hiveserver2``). ``start()`` binds the transports the options ask for
and returns once they accept; ``stop()`` undoes that in reverse order and may
be called any number of times.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from thrift.transport.TTransport import TTransportException

from sparkgate.api.auth import Credentials, Principal
from sparkgate.api.config import ConfigOption
from sparkgate.api.endpoint import Endpoint, EndpointContext
from sparkgate.api.errors import AuthenticationError, ConfigurationError, EndpointError
from sparkgate.api.service import GatewayService
from sparkgate.endpoints.hiveserver2.connection_logs import (
    flush_connection_logs,
    limit_connection_logs,
)
from sparkgate.endpoints.hiveserver2.handler import (
    ENDPOINT_ID,
    CLIServiceHandler,
    ConnectionContext,
    HiveServer2Core,
)
from sparkgate.endpoints.hiveserver2.http import HttpServer
from sparkgate.endpoints.hiveserver2.options import (
    HIVESERVER2_OPTIONS,
    OPTION_PREFIX,
    AuthMode,
    HiveServer2Settings,
)
from sparkgate.endpoints.hiveserver2.processor import CLIServiceProcessor
from sparkgate.endpoints.hiveserver2.transport import BinaryServer, PasswordCheck
from sparkgate.security.passwords import PasswordFile

__all__ = ["HiveServer2Endpoint", "HiveServer2EndpointFactory"]


def _gateway_authentication_on(service: GatewayService) -> bool:
    """Whether the gateway checks credentials: it refuses a call without any."""
    try:
        service.authenticate(Credentials())
    except AuthenticationError:
        return True
    return False


log = logging.getLogger(__name__)


class HiveServer2Endpoint:
    """HiveServer2's Thrift TCLIService in front of a GatewayService."""

    def __init__(self, service: GatewayService, settings: HiveServer2Settings) -> None:
        self.settings = settings
        self.service = service
        self.core = HiveServer2Core(service, settings)
        # The gateway's authentication, when on, checks every login (SASL PLAIN, HTTP
        # Basic); the endpoint's own password file is the older way, alone.
        self.gateway_authentication = _gateway_authentication_on(service)
        if self.gateway_authentication and settings.authentication is AuthMode.NOSASL:
            raise ConfigurationError(
                "sql-gateway.endpoint.hiveserver2.authentication is NOSASL, which carries no "
                "credentials, but sql-gateway.authentication is on: use PLAIN (or NONE)."
            )
        self._check = self._password_check(settings)
        # Built now: a bad certificate or password stops the gateway's start.
        self._tls = settings.tls.server_context(OPTION_PREFIX)
        # Principals proven by logins, by user name (their admin flag goes with them).
        self._principals: dict[str, Principal] = {}
        self._binary: BinaryServer | None = None
        self._http: HttpServer | None = None
        self._started = False

    @property
    def _plain(self) -> bool:
        return self.gateway_authentication or self.settings.authentication is AuthMode.PLAIN

    def _password_check(self, settings: HiveServer2Settings) -> PasswordCheck | None:
        if self.gateway_authentication:
            return self._login
        if settings.authentication is not AuthMode.PLAIN:
            return None
        if settings.password_file is None:
            raise ConfigurationError(
                "sql-gateway.endpoint.hiveserver2.authentication is PLAIN but neither "
                "sql-gateway.authentication nor sql-gateway.endpoint.hiveserver2.password-file "
                "is set."
            )
        try:
            passwords = PasswordFile(settings.password_file)
        except OSError as exc:
            raise ConfigurationError(
                f"Cannot read the HiveServer2 password file {settings.password_file}: {exc}"
            ) from exc
        return lambda user, password, _address: passwords.check(user, password)

    def _login(self, user: str, password: str, address: str | None = None) -> bool:
        try:
            credentials = Credentials(user=user, password=password, address=address)
            principal = self.service.authenticate(credentials)
        except AuthenticationError:
            return False
        if principal is None:
            return False
        self._principals[principal.name] = principal
        return True

    def _principal(self, user: str | None) -> Principal | None:
        if not self.gateway_authentication or user is None:
            return None
        return self._principals.get(user)

    # -- serving ---------------------------------------------------------------
    def _serve_connection(self, protocol: Any, user: str | None, address: str) -> None:
        context = ConnectionContext(user, principal=self._principal(user), address=address)
        handler = CLIServiceHandler(self.core, context)
        processor = CLIServiceProcessor(handler)
        try:
            while True:
                processor.process(protocol, protocol)
        except TTransportException as exc:
            if exc.type != TTransportException.END_OF_FILE:
                log.debug("HiveServer2 connection ended: %s", exc)
        finally:
            handler.connection_closed()

    def _run_http_call(self, iprot: Any, oprot: Any, user: str | None, address: str) -> None:
        context = ConnectionContext(
            user, closes_sessions=False, principal=self._principal(user), address=address
        )
        CLIServiceProcessor(CLIServiceHandler(self.core, context)).process(iprot, oprot)

    # -- life cycle -------------------------------------------------------------
    def start(self) -> None:
        if self._started:
            return
        settings = self.settings
        limit_connection_logs()
        try:
            if settings.serves_binary:
                self._binary = BinaryServer(
                    settings.host,
                    settings.port,
                    serve=self._serve_connection,
                    check_password=self._check,
                    allow_nosasl=not self._plain,
                    max_connections=settings.worker_threads,
                    max_message_size=settings.max_message_size,
                    handshake_timeout=settings.handshake_timeout,
                    max_per_address=settings.max_connections_per_address,
                    tls=self._tls,
                )
                self._binary.start()
                log.info(
                    "HiveServer2 binary transport listening on %s%s",
                    self.binary_address,
                    " (TLS)" if self._tls is not None else "",
                )
            if settings.serves_http:
                self._http = HttpServer(
                    settings.host,
                    settings.http_port,
                    settings.http_path,
                    run_call=self._run_http_call,
                    check_password=self._check,
                    max_connections=settings.worker_threads,
                    max_message_size=settings.max_message_size,
                    handshake_timeout=settings.handshake_timeout,
                    max_per_address=settings.max_connections_per_address,
                    tls=self._tls,
                )
                self._http.start()
                log.info("HiveServer2 HTTP transport listening on %s", self.http_address)
        except OSError as exc:
            self.stop()
            raise EndpointError(f"The HiveServer2 endpoint could not start: {exc}") from exc
        self._started = True

    def stop(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            http.stop()
        binary, self._binary = self._binary, None
        if binary is not None:
            binary.stop()
        self.core.close()
        flush_connection_logs()
        if self._started:
            log.info("HiveServer2 endpoint stopped")
        self._started = False

    @property
    def binary_port(self) -> int | None:
        return self._binary.port if self._binary is not None else None

    @property
    def http_port(self) -> int | None:
        return self._http.port if self._http is not None else None

    @property
    def binary_address(self) -> str:
        return f"thrift://{self.settings.host}:{self.binary_port}"

    @property
    def http_address(self) -> str:
        scheme = "https" if self._tls is not None else "http"
        return f"{scheme}://{self.settings.host}:{self.http_port}/{self.settings.http_path}"

    @property
    def address(self) -> str:
        if self._binary is not None or self._http is None:
            return f"thrift://{self.settings.host}:{self.binary_port or self.settings.port}"
        return self.http_address


class HiveServer2EndpointFactory:
    """The ``hiveserver2`` endpoint plug-in."""

    identifier = ENDPOINT_ID

    def options(self) -> Sequence[ConfigOption[Any]]:
        return HIVESERVER2_OPTIONS

    def create(self, context: EndpointContext) -> Endpoint:
        settings = HiveServer2Settings.from_config(context.config)
        return HiveServer2Endpoint(context.service, settings)
