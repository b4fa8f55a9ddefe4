"""The REST endpoint's options, declared once (keys without the endpoint prefix).

The launcher hands the endpoint the keys under ``sql-gateway.endpoint.rest.``
with that prefix removed, as Flink does; :data:`OPTION_PREFIX` puts it back
for the documentation. :class:`RestSettings` is the resolved, typed view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sparkgate.api.config import (
    ConfigOption,
    Configuration,
    duration_option,
    int_option,
    list_option,
    memory_option,
    port_option,
    string_option,
)
from sparkgate.endpoints.tls import TLS_OPTIONS, TlsSettings

__all__ = [
    "ADDRESS",
    "BIND_ADDRESS",
    "BIND_PORT",
    "FETCH_MAX_ROWS",
    "FETCH_TIMEOUT",
    "HEADER_TIMEOUT",
    "KEEP_ALIVE_TIMEOUT",
    "MAX_BODY_SIZE",
    "OPTION_PREFIX",
    "PORT",
    "REST_OPTIONS",
    "RestSettings",
    "parse_port_range",
]

OPTION_PREFIX = "sql-gateway.endpoint.rest."


def parse_port_range(text: str) -> tuple[int, int]:
    """``8083`` or ``8083-8090`` (Flink's bind-port forms) -> inclusive bounds."""
    first, sep, last = text.strip().partition("-")
    try:
        low = int(first)
        high = int(last) if sep else low
    except ValueError:
        raise ValueError(
            f"cannot parse {text!r}; expected a port such as '8083' or a range such as '8083-8090'"
        ) from None
    if not 0 <= low <= 65535 or not 0 <= high <= 65535 or high < low:
        raise ValueError(f"invalid port or port range {text!r}: ports are 0-65535, low <= high")
    return low, high


def _format_port_range(value: tuple[int, int] | None) -> str:
    if value is None:
        return ""
    low, high = value
    return str(low) if low == high else f"{low}-{high}"


def _parse_optional_range(text: str) -> tuple[int, int] | None:
    return parse_port_range(text)


def _parse_optional_text(text: str) -> str | None:
    return text.strip() or None


def _format_optional_text(value: str | None) -> str:
    return value or ""


ADDRESS = string_option(
    "address",
    "127.0.0.1",
    "The address clients use to reach the REST endpoint (also the bind address unless "
    "`bind-address` is set).",
)
PORT = port_option(
    "port",
    8083,
    "The port clients use to reach the REST endpoint (also the bind port unless "
    "`bind-port` is set). 0 picks any free port.",
)
BIND_ADDRESS: ConfigOption[str | None] = ConfigOption(
    "bind-address",
    None,
    "The address the server binds to, e.g. 0.0.0.0 for every interface.",
    "String",
    _parse_optional_text,
    _format_optional_text,
    default_text="(the value of address)",
)
BIND_PORT: ConfigOption[tuple[int, int] | None] = ConfigOption(
    "bind-port",
    None,
    "The port, or a range such as `8083-8090`, the server binds to; the first free "
    "port of a range is used. 0 picks any free port.",
    "String",
    _parse_optional_range,
    _format_port_range,
    default_text="(the value of port)",
)
FETCH_TIMEOUT = duration_option(
    "fetch-timeout",
    timedelta(seconds=3),
    "How long a result fetch waits for data before it answers (long poll). A first "
    "fetch answers NOT_READY only after waiting this long; a later fetch answers an "
    "empty page. Keep it below clients' read timeouts (httpx: 5 s).",
    min_value=timedelta(0),
)
MAX_BODY_SIZE = memory_option(
    "max-body-size",
    10 * 1024 * 1024,
    "The largest request body accepted; larger requests are refused with HTTP 413.",
)
FETCH_MAX_ROWS = int_option(
    "fetch-max-rows",
    10000,
    "The most rows one result page holds. Bounds the memory and latency of a single "
    "response; a client walks the next-result URIs for the rest.",
    min_value=1,
)

CORS_ALLOWED_ORIGINS = list_option(
    "cors.allowed-origins",
    (),
    "Web origins (e.g. `https://notebook.example.com`) whose pages may call the REST API "
    "from a browser (CORS). Empty, the default, answers no cross-origin request: with "
    "JSON required on every request body, a page elsewhere cannot post to the gateway.",
)
HEADER_TIMEOUT = duration_option(
    "header-timeout",
    timedelta(seconds=20),
    "How long a client may take to send a request's line and headers, from the "
    "connection's opening or the first byte of a later request on it. A client past it "
    "(one that sends nothing, or its headers a byte at a time) gets 408 and its "
    "connection is closed; it holds no worker meanwhile.",
    min_value=timedelta(milliseconds=1),
)
KEEP_ALIVE_TIMEOUT = duration_option(
    "keep-alive-timeout",
    timedelta(seconds=5),
    "How long an idle keep-alive connection stays open after a response, waiting for "
    "the next request (whole seconds, rounded up). Best not below clients' own expiry of "
    "idle connections (httpx: 5 s), or they may send on a connection closed under them.",
    min_value=timedelta(seconds=1),
)

REST_OPTIONS: tuple[ConfigOption[Any], ...] = (
    ADDRESS,
    PORT,
    BIND_ADDRESS,
    BIND_PORT,
    FETCH_TIMEOUT,
    MAX_BODY_SIZE,
    FETCH_MAX_ROWS,
    CORS_ALLOWED_ORIGINS,
    HEADER_TIMEOUT,
    KEEP_ALIVE_TIMEOUT,
    *TLS_OPTIONS,
)


@dataclass(frozen=True)
class RestSettings:
    """The resolved options: bind address and ports default to the advertised ones."""

    address: str = "127.0.0.1"
    port: int = 8083
    bind_address: str = "127.0.0.1"
    bind_ports: tuple[int, int] = (8083, 8083)
    fetch_timeout: float = 3.0
    max_body_size: int = 10 * 1024 * 1024
    fetch_max_rows: int = 10000
    cors_allowed_origins: tuple[str, ...] = ()
    header_timeout: float = 20.0
    keep_alive_timeout: float = 5.0
    tls: TlsSettings = field(default_factory=TlsSettings)

    @classmethod
    def from_config(cls, config: Configuration) -> RestSettings:
        """Read the endpoint's own (prefix-less) keys; bad values raise ConfigurationError."""
        address = config.get(ADDRESS)
        port = config.get(PORT)
        return cls(
            address=address,
            port=port,
            bind_address=config.get(BIND_ADDRESS) or address,
            bind_ports=config.get(BIND_PORT) or (port, port),
            fetch_timeout=config.get(FETCH_TIMEOUT).total_seconds(),
            max_body_size=config.get(MAX_BODY_SIZE),
            fetch_max_rows=config.get(FETCH_MAX_ROWS),
            cors_allowed_origins=config.get(CORS_ALLOWED_ORIGINS),
            header_timeout=config.get(HEADER_TIMEOUT).total_seconds(),
            keep_alive_timeout=config.get(KEEP_ALIVE_TIMEOUT).total_seconds(),
            tls=TlsSettings.from_config(config, OPTION_PREFIX),
        )
