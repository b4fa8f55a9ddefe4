"""The REST endpoint: the app served by uvicorn on a thread of its own.

The endpoint binds its socket itself before uvicorn starts, so a port range
(``8083-8090``) takes the first free port and port 0 any free one, and
:attr:`RestEndpoint.address` reports the port really bound. Off the main
thread uvicorn installs no signal handlers: the launcher owns the signals.
Connections run uvicorn's h11 protocol with a time limit on request headers,
and their failures are logged at a limited rate (:mod:`.connections`).
"""

from __future__ import annotations

import errno
import logging
import math
import socket
import ssl
import threading
import time
from typing import Any

import uvicorn

from sparkgate.api.errors import EndpointError
from sparkgate.api.service import GatewayService
from sparkgate.endpoints.rest.app import create_app
from sparkgate.endpoints.rest.connections import (
    flush_connection_logs,
    http_protocol,
    limit_connection_logs,
)
from sparkgate.endpoints.rest.options import OPTION_PREFIX, RestSettings

__all__ = ["RestEndpoint", "bind_socket"]

log = logging.getLogger(__name__)

_STARTUP_TIMEOUT = 30.0
_SHUTDOWN_TIMEOUT = 10.0


def bind_socket(host: str, ports: tuple[int, int]) -> socket.socket:
    """A listening-ready socket on the first free port of ``ports`` (inclusive)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    last_error: OSError | None = None
    for port in range(ports[0], ports[1] + 1):
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted connections
        # only when the listening socket says TCP. Without it every keep-alive
        # response waits ~40 ms for the client's delayed ACK (Nagle).
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            last_error = exc
            if exc.errno != errno.EADDRINUSE:
                break
            continue
        sock.set_inheritable(True)
        return sock
    span = str(ports[0]) if ports[0] == ports[1] else f"{ports[0]}-{ports[1]}"
    raise EndpointError(f"The REST endpoint could not bind {host}:{span}: {last_error}")


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


class _Config(uvicorn.Config):
    """uvicorn's configuration serving TLS with a context built by the endpoint
    (uvicorn builds its own from PEM files only)."""

    def __init__(self, *args: Any, tls: ssl.SSLContext | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tls = tls

    def load(self) -> None:
        super().load()
        if self._tls is not None:
            self.ssl = self._tls


class RestEndpoint:
    """Flink's SqlGatewayRestEndpoint on Starlette + uvicorn."""

    def __init__(self, service: GatewayService, settings: RestSettings) -> None:
        self.settings = settings
        self._service = service
        # Built now: a bad certificate or password stops the gateway's start.
        self._tls = settings.tls.server_context(OPTION_PREFIX)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        self._lock = threading.Lock()

    @property
    def port(self) -> int:
        """The bound port (the configured one before start)."""
        return self._port if self._port is not None else self.settings.port

    @property
    def address(self) -> str:
        scheme = "https" if self._tls is not None else "http"
        return f"{scheme}://{_url_host(self.settings.address)}:{self.port}"

    def start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            sock = bind_socket(self.settings.bind_address, self.settings.bind_ports)
            self._port = sock.getsockname()[1]
            limit_connection_logs()
            config = _Config(
                create_app(self._service, self.settings),
                tls=self._tls,
                http=http_protocol(self.settings.header_timeout),
                timeout_keep_alive=max(1, math.ceil(self.settings.keep_alive_timeout)),
                log_config=None,
                access_log=False,
                lifespan="off",
                # Long polls end within fetch-timeout; do not wait much longer.
                timeout_graceful_shutdown=int(self.settings.fetch_timeout) + 2,
            )
            server = uvicorn.Server(config)
            thread = threading.Thread(
                target=self._serve, args=(server, sock), name="sparkgate-rest", daemon=True
            )
            self._server, self._thread = server, thread
            thread.start()
            deadline = time.monotonic() + _STARTUP_TIMEOUT
            while not server.started and thread.is_alive() and time.monotonic() < deadline:
                time.sleep(0.01)
            if not server.started:
                self._stop_locked()
                raise EndpointError(
                    f"The REST endpoint did not start on {self.settings.bind_address}:{self._port}."
                )
        log.info(
            "REST endpoint listening on %s:%d (clients use %s)",
            self.settings.bind_address,
            self._port,
            self.address,
        )

    @staticmethod
    def _serve(server: uvicorn.Server, sock: socket.socket) -> None:
        try:
            server.run(sockets=[sock])
        except BaseException:
            log.exception("The REST endpoint stopped unexpectedly")
        finally:
            sock.close()

    def stop(self) -> None:
        with self._lock:
            self._stop_locked()

    def _stop_locked(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(_SHUTDOWN_TIMEOUT)
        if thread.is_alive():
            server.force_exit = True
            thread.join(_SHUTDOWN_TIMEOUT)
        flush_connection_logs()
        log.info("REST endpoint stopped")
