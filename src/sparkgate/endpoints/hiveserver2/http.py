"""The HTTP transport: Thrift binary-protocol messages POSTed to ``/cliservice``.

Each request carries one Thrift call in its body and gets the reply in its
response (``application/x-thrift``), on a keep-alive HTTP/1.1 connection,
as Hive's HTTP mode. Credentials come with every request as HTTP Basic
authentication; with ``PLAIN`` they are checked against the password file and
a wrong one is answered 401. Sessions are not tied to connections here (an
HTTP client may use several): they end with CloseSession or the idle timeout.
A connection holds a worker slot only while one of its calls runs: one that
sends nothing, or sends a request slowly, or stays idle between requests for
``handshake-timeout`` is closed, and each client address may hold at most
``max-connections-per-address`` connections, so idle or slow connections
cannot keep real clients out.
Connection failures are logged at most once per kind per minute
(:mod:`.connection_logs`), never as a traceback on stderr. With TLS on, each
connection's handshake runs on its own thread, within ``handshake-timeout``
(HTTPS, as Hive's ``hive.server2.use.SSL`` in HTTP mode).
"""

from __future__ import annotations

import base64
import binascii
import logging
import ssl
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.protocol.TProtocol import TProtocolException
from thrift.transport import TTransport

__all__ = ["HttpServer"]

log = logging.getLogger(__name__)

#: Runs one Thrift call: (input protocol, output protocol, user, client address) -> None.
CallRunner = Callable[[Any, Any, "str | None", str], None]


def _basic_credentials(header: str | None) -> tuple[str, str] | None:
    if not header or not header.lower().startswith("basic "):
        return None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, _, password = decoded.partition(":")
    return user, password


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # The listen backlog, as the binary transport's: socketserver's 5 makes each
    # connection past it in a burst wait for the client's SYN retry (about 1 s).
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], owner: HttpServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def verify_request(self, request: Any, client_address: Any) -> bool:
        """Refuse a connection past the per-address cap (closed at once)."""
        owner = self.owner
        address = str(client_address[0])
        with owner.lock:
            held = owner.per_address.get(address, 0)
            if owner.max_per_address and held >= owner.max_per_address:
                log.info("HiveServer2 HTTP: %s holds %d connections already", address, held)
                return False
            owner.per_address[address] = held + 1
        return True

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            owner = self.owner
            address = str(client_address[0])
            with owner.lock:
                left = owner.per_address.get(address, 1) - 1
                if left > 0:
                    owner.per_address[address] = left
                else:
                    owner.per_address.pop(address, None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # socketserver prints a traceback to stderr for each connection that fails,
        # e.g. each client gone before its answer was written.
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):
            log.debug("HiveServer2 HTTP connection from %s ended: %s", client_address, exc)
        else:
            log.exception("HiveServer2 HTTP connection from %s failed", client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        # Every read and write of the connection: a request line, headers or body
        # that stall, or a kept-alive connection idle this long, end it.
        self.request.settimeout(self.server.owner.handshake_timeout)
        tls = self.server.owner.tls
        if tls is not None:
            # The handshake, here on the connection's thread; an SSLError ends the
            # connection quietly (handle_error: an OSError).
            self.request = tls.wrap_socket(self.request, server_side=True)
        super().setup()

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            if isinstance(self.request, ssl.SSLSocket):
                self.request.close()  # the server closes the TCP socket it accepted, not this

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("HiveServer2 HTTP %s: " + format, self.client_address, *args)

    def _plain(self, status: int, message: str, extra: dict[str, str] | None = None) -> None:
        body = message.encode("utf-8")
        self.send_response(status)
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._plain(405, "HiveServer2 over HTTP takes Thrift calls as POST requests.\n")

    def do_POST(self) -> None:
        owner = self.server.owner
        if self.path.split("?", 1)[0].strip("/") != owner.path:
            self._plain(404, f"Not found: the Thrift path is /{owner.path}\n")
            return
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if length < 0 or length > owner.max_message_size:
            self.close_connection = True
            self._plain(413, "Request body too large or without a valid Content-Length.\n")
            return
        body = self.rfile.read(length)
        credentials = _basic_credentials(self.headers.get("Authorization"))
        user = credentials[0] if credentials else None
        address = str(self.client_address[0])
        if owner.check_password is not None and (
            credentials is None or not owner.check_password(*credentials, address)
        ):
            who = f" for user '{credentials[0]}'" if credentials else ""
            self._plain(
                401,
                f"Authentication failed{who}: wrong or missing user name and password.\n",
                {"WWW-Authenticate": 'Basic realm="sparkgate"'},
            )
            return
        itrans = TTransport.TMemoryBuffer(body)
        otrans = TTransport.TMemoryBuffer()
        iprot = TBinaryProtocol(
            itrans,
            string_length_limit=owner.max_message_size,
            container_length_limit=owner.max_message_size,
        )
        oprot = TBinaryProtocol(otrans)
        try:
            with owner.slots:  # the worker slot: held while the call runs, not while idle
                owner.run_call(iprot, oprot, user or None, address)
        except (TTransport.TTransportException, TProtocolException) as exc:
            # A body that is not one Thrift call: the client's doing, no traceback.
            peer = self.client_address
            log.warning("HiveServer2 HTTP call from %s could not be read: %s", peer, exc)
            self._plain(500, "The Thrift call could not be processed.\n")
            return
        except Exception:
            log.exception("HiveServer2 HTTP call failed")
            self._plain(500, "The Thrift call could not be processed.\n")
            return
        reply = otrans.getvalue()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-thrift")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


class HttpServer:
    def __init__(
        self,
        host: str,
        port: int,
        path: str,
        *,
        run_call: CallRunner,
        check_password: Callable[[str, str, str | None], bool] | None,
        max_connections: int,
        max_message_size: int,
        handshake_timeout: float = 20.0,
        max_per_address: int = 0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.path = path.strip("/")
        self.run_call = run_call
        self.check_password = check_password
        self.max_message_size = max_message_size
        self.slots = threading.BoundedSemaphore(max_connections)
        self.handshake_timeout = handshake_timeout
        self.max_per_address = max_per_address
        self.tls = tls
        self.lock = threading.Lock()
        self.per_address: dict[str, int] = {}
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        server = _Server((self.host, self.port), self)
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name=f"hiveserver2-http-{self.port}",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
