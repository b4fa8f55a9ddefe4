"""The REST endpoint's connections: a time limit on request headers, quiet failures.

uvicorn times out nothing before a request's headers are complete: its
keep-alive timer runs only between requests and stops at the first byte of the
next one, so a client that opens a connection and sends nothing, or sends its
headers a byte at a time (slowloris), held its connection for ever.
:func:`http_protocol` is uvicorn's h11 protocol with a timer from the
connection's opening, or from the first byte of a later request, to the end of
that request's headers; past ``header-timeout`` the client gets ``408`` and the
connection is closed. Idle keep-alive connections are uvicorn's
``timeout_keep_alive`` (``keep-alive-timeout``).

:func:`limit_connection_logs` rate-limits the log lines of connection-level
failures (bad requests, TLS or Thrift spoken to the HTTP port, closed slow
clients, refused accepts, writes to reset sockets) with
:mod:`sparkgate.endpoints.log_limits`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from sparkgate.endpoints.log_limits import Kind, flush_all, limit
from sparkgate.endpoints.rest.options import HEADER_TIMEOUT, OPTION_PREFIX

__all__ = ["LIMITED_LOGGERS", "flush_connection_logs", "http_protocol", "limit_connection_logs"]

log = logging.getLogger(__name__)

_SLOW_HEADERS = "REST connection from %s closed: its request headers took longer than %s"

_TIMEOUT_BODY = b"Request headers not received in time.\n"
_REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\n"
    b"content-length: " + str(len(_TIMEOUT_BODY)).encode("ascii") + b"\r\n\r\n" + _TIMEOUT_BODY
)

# Logger -> the connection-level failures it reports, all of them the client's doing.
_CONNECTION_FAILURES: dict[str, tuple[Kind, ...]] = {
    # uvicorn: garbage, TLS or Thrift sent to the HTTP port, headers too large.
    "uvicorn.error": (
        Kind("Invalid HTTP request received."),
        Kind("Unsupported upgrade request."),
        Kind("No supported WebSocket library detected."),
    ),
    # asyncio: accept() failing for want of file descriptors (ERROR with a traceback
    # each: 25,000 in 6 s once the process ran out), writes to connections the client
    # reset, broken transports.
    "asyncio": (
        Kind("socket.accept() out of system resource"),
        Kind("socket.send() raised exception."),
        Kind("Fatal error on transport"),
        Kind("Fatal read error on socket transport"),
        Kind("Fatal write error on socket transport"),
    ),
    __name__: (Kind(_SLOW_HEADERS),),
}

LIMITED_LOGGERS = tuple(_CONNECTION_FAILURES)
"""The loggers whose connection-level failures are rate-limited."""


def limit_connection_logs() -> None:
    """Rate-limit the REST endpoint's connection-level failure logs (idempotent)."""
    for name, kinds in _CONNECTION_FAILURES.items():
        limit(name, kinds)


def flush_connection_logs() -> None:
    """Log the counts held back now (the endpoint stops)."""
    flush_all(LIMITED_LOGGERS)


def http_protocol(header_timeout_s: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol whose requests must bring their headers within
    ``header_timeout_s``."""

    class HeaderTimeoutProtocol(_HeaderTimeoutProtocol):
        header_timeout = header_timeout_s

    return HeaderTimeoutProtocol


class _HeaderTimeoutProtocol(H11Protocol):
    header_timeout = 20.0

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._start_header_timer()

    def data_received(self, data: bytes) -> None:
        # The first byte of a request after an earlier one starts its clock.
        if self._header_timer is None and self._awaiting_request():
            self._start_header_timer()
        super().data_received(data)
        if self._header_timer is not None and not self._awaiting_request():
            self._stop_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_header_timer()
        super().connection_lost(exc)

    def _awaiting_request(self) -> bool:
        """No request line and headers yet of the connection's next request."""
        return self.conn.their_state is h11.IDLE

    def _start_header_timer(self) -> None:
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _stop_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.transport.is_closing():
            return
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "?"
        option = f"{OPTION_PREFIX}{HEADER_TIMEOUT.key} ({self.header_timeout:g} s)"
        log.info(_SLOW_HEADERS, client, option)
        self.transport.write(_REQUEST_TIMEOUT)
        self.transport.close()
