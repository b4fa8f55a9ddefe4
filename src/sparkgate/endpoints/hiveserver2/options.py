"""The HiveServer2 endpoint's options, declared once (keys without the endpoint prefix).

The launcher hands the endpoint the keys under ``sql-gateway.endpoint.hiveserver2.``
with that prefix removed, as Flink does; :data:`OPTION_PREFIX` puts it back for
the documentation. :class:`HiveServer2Settings` is the resolved, typed view.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from sparkgate.api.config import (
    ConfigOption,
    Configuration,
    duration_option,
    int_option,
    memory_option,
    port_option,
    string_option,
)
from sparkgate.endpoints.tls import TLS_OPTIONS, TlsSettings

__all__ = [
    "AUTHENTICATION",
    "BIND_ADDRESS",
    "FETCH_FIRST_MAX_ROWS",
    "FETCH_MAX_ROWS",
    "FETCH_TIMEOUT",
    "HIVESERVER2_OPTIONS",
    "HOST",
    "HTTP_PATH",
    "HTTP_PORT",
    "MAX_MESSAGE_SIZE",
    "OPTION_PREFIX",
    "PASSWORD_FILE",
    "PORT",
    "TRANSPORT_MODE",
    "WORKER_THREADS",
    "AuthMode",
    "HiveServer2Settings",
    "TransportMode",
]

OPTION_PREFIX = "sql-gateway.endpoint.hiveserver2."


class TransportMode(enum.Enum):
    BINARY = "binary"
    HTTP = "http"
    ALL = "all"


class AuthMode(enum.Enum):
    NONE = "NONE"
    NOSASL = "NOSASL"
    PLAIN = "PLAIN"


def _enum_option(
    key: str, default: enum.Enum, description: str, kind: type[enum.Enum]
) -> ConfigOption[Any]:
    choices = ", ".join(str(member.value) for member in kind)

    def parse(text: str) -> enum.Enum:
        wanted = text.strip()
        for member in kind:
            if str(member.value).lower() == wanted.lower():
                return member
        raise ValueError(f"cannot parse {text!r}; expected one of {choices}")

    def fmt(value: enum.Enum) -> str:
        return str(value.value)

    return ConfigOption(key, default, description, "Enum", parse, fmt)


def _parse_optional_path(text: str) -> Path | None:
    return Path(text.strip()).expanduser() if text.strip() else None


def _format_optional_path(value: Path | None) -> str:
    return "" if value is None else str(value)


HOST = string_option(
    "host",
    "127.0.0.1",
    "The address the HiveServer2 endpoint binds to (both transports), e.g. 0.0.0.0 "
    "for every interface.",
)
BIND_ADDRESS: ConfigOption[str | None] = ConfigOption(
    "bind-address",
    None,
    "Overrides `host` as the bind address (the name Flink's HiveServer2 endpoint uses).",
    "String",
    lambda text: text.strip() or None,
    lambda value: value or "",
    default_text="(the value of host)",
)
PORT = port_option(
    "port",
    10000,
    "The port of the binary Thrift transport (SASL PLAIN and NOSASL clients share it). "
    "0 picks any free port.",
)
TRANSPORT_MODE: ConfigOption[TransportMode] = _enum_option(
    "transport-mode",
    TransportMode.BINARY,
    "Which transports to serve: `binary` (Thrift over TCP on `port`), `http` (Thrift "
    "over HTTP on `http.port`), or `all` (both).",
    TransportMode,
)
HTTP_PORT = port_option(
    "http.port",
    10001,
    "The port of the HTTP transport. 0 picks any free port.",
)
HTTP_PATH = string_option(
    "http.path",
    "cliservice",
    "The URL path of the HTTP transport (Hive's `hive.server2.thrift.http.path`).",
)
AUTHENTICATION: ConfigOption[AuthMode] = _enum_option(
    "authentication",
    AuthMode.NONE,
    "How clients authenticate: `NONE` (any user name, SASL or not), `NOSASL` (the "
    "same; Hive's name for clients that skip SASL) or `PLAIN` (SASL PLAIN, or HTTP "
    "Basic, checked against `password-file`).",
    AuthMode,
)
PASSWORD_FILE: ConfigOption[Path | None] = ConfigOption(
    "password-file",
    None,
    "The password file for `PLAIN`: one `user:pbkdf2_sha256:iterations:salt:hash` line "
    "per user. Add users with `python -m sparkgate.security.passwords`.",
    "Path",
    _parse_optional_path,
    _format_optional_path,
    default_text="(none)",
)
WORKER_THREADS = int_option(
    "worker-threads",
    500,
    "The most client connections (binary) or requests (HTTP) served at once.",
    min_value=1,
)
FETCH_TIMEOUT = duration_option(
    "fetch-timeout",
    timedelta(minutes=5),
    "How long one FetchResults waits for the first row of its page. HiveServer2 "
    "clients stop at an empty page, so a fetch waits for rows or the end of the "
    "result; past this it answers an empty page.",
    min_value=timedelta(0),
)
FETCH_MAX_ROWS = int_option(
    "fetch-max-rows",
    100_000,
    "The most rows one FetchResults returns, whatever the client asks for.",
    min_value=1,
)
FETCH_FIRST_MAX_ROWS = int_option(
    "fetch-first.max-rows",
    100_000,
    "FETCH_FIRST replays a result from its start. The endpoint keeps the rows needed "
    "for that only for metadata results and for operations whose client fetched "
    "with FETCH_FIRST first, up to this many rows; past it FETCH_FIRST fails.",
    min_value=0,
)
MAX_MESSAGE_SIZE = memory_option(
    "max-message-size",
    100 * 1024 * 1024,
    "The largest Thrift message (or HTTP body) accepted; larger ones close the "
    "connection (HTTP: status 413).",
)

HANDSHAKE_TIMEOUT = duration_option(
    "handshake-timeout",
    timedelta(seconds=20),
    "A binary connection that has not sent its first Thrift message or finished its "
    "SASL handshake in this time is closed; an HTTP connection whose request stalls, "
    "or that stays idle between requests, this long is closed. Connections hold a "
    "worker thread only after their handshake (HTTP: while a call runs), so idle raw "
    "connections cannot starve real clients.",
    min_value=timedelta(milliseconds=100),
)
MAX_CONNECTIONS_PER_ADDRESS = int_option(
    "max-connections-per-address",
    1000,
    "The most connections one client address may hold open at once, per transport "
    "(those still handshaking included); more are closed at once. 0: no limit.",
    min_value=0,
)

HIVESERVER2_OPTIONS: tuple[ConfigOption[Any], ...] = (
    HOST,
    BIND_ADDRESS,
    PORT,
    TRANSPORT_MODE,
    HTTP_PORT,
    HTTP_PATH,
    AUTHENTICATION,
    PASSWORD_FILE,
    WORKER_THREADS,
    FETCH_TIMEOUT,
    FETCH_MAX_ROWS,
    FETCH_FIRST_MAX_ROWS,
    MAX_MESSAGE_SIZE,
    HANDSHAKE_TIMEOUT,
    MAX_CONNECTIONS_PER_ADDRESS,
    *TLS_OPTIONS,
)


@dataclass(frozen=True)
class HiveServer2Settings:
    """The resolved options."""

    host: str = "127.0.0.1"
    port: int = 10000
    transport_mode: TransportMode = TransportMode.BINARY
    http_port: int = 10001
    http_path: str = "cliservice"
    authentication: AuthMode = AuthMode.NONE
    password_file: Path | None = None
    worker_threads: int = 500
    fetch_timeout: float = 300.0
    fetch_max_rows: int = 100_000
    fetch_first_max_rows: int = 100_000
    max_message_size: int = 100 * 1024 * 1024
    handshake_timeout: float = 20.0
    max_connections_per_address: int = 1000
    tls: TlsSettings = field(default_factory=TlsSettings)

    @property
    def serves_binary(self) -> bool:
        return self.transport_mode in (TransportMode.BINARY, TransportMode.ALL)

    @property
    def serves_http(self) -> bool:
        return self.transport_mode in (TransportMode.HTTP, TransportMode.ALL)

    @classmethod
    def from_config(cls, config: Configuration) -> HiveServer2Settings:
        """Read the endpoint's own (prefix-less) keys; bad values raise ConfigurationError."""
        return cls(
            host=config.get(BIND_ADDRESS) or config.get(HOST),
            port=config.get(PORT),
            transport_mode=config.get(TRANSPORT_MODE),
            http_port=config.get(HTTP_PORT),
            http_path=config.get(HTTP_PATH).strip("/"),
            authentication=config.get(AUTHENTICATION),
            password_file=config.get(PASSWORD_FILE),
            worker_threads=config.get(WORKER_THREADS),
            fetch_timeout=config.get(FETCH_TIMEOUT).total_seconds(),
            fetch_max_rows=config.get(FETCH_MAX_ROWS),
            fetch_first_max_rows=config.get(FETCH_FIRST_MAX_ROWS),
            max_message_size=config.get(MAX_MESSAGE_SIZE),
            handshake_timeout=config.get(HANDSHAKE_TIMEOUT).total_seconds(),
            max_connections_per_address=config.get(MAX_CONNECTIONS_PER_ADDRESS),
            tls=TlsSettings.from_config(config, OPTION_PREFIX),
        )
