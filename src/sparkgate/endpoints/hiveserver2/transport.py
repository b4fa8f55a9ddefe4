"""The binary transport: Thrift over TCP, SASL PLAIN and NOSASL on one port.

Each connection gets a thread (as HiveServer2's ``TThreadPoolServer``), up to
``worker-threads`` at once once its handshake is done; more connections wait
for a free slot. A connection must send its first message (and finish SASL)
within ``handshake-timeout``, and one address may hold at most
``max-connections-per-address`` connections, so connections that never send a
byte are closed and never take a worker from a real client. The first
byte tells the kinds apart: ``0x01`` is a SASL ``START`` frame, ``0x80`` an
unframed binary-protocol message (NOSASL, as PyHive and impyla send it), and
``0x00`` a framed one (the high byte of a 4-byte frame length). When the
connection ends, the sessions it opened and did not close are closed, which
cancels whatever they still run. Connection failures are logged at most
once per kind per minute (:mod:`.connection_logs`). With TLS on, a connection
is a TLS one from its first byte (as Hive's ``TSSLTransport``): the handshake
must end within ``handshake-timeout`` too, and SASL runs inside it.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import threading
from collections.abc import Callable
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.protocol.TProtocol import TProtocolException
from thrift.transport import TSocket, TTransport

from sparkgate.endpoints.hiveserver2.sasl import START, AuthenticationError, negotiate_plain
from sparkgate.endpoints.tls import looks_like_tls

__all__ = ["BinaryServer", "PasswordCheck", "Session"]

log = logging.getLogger(__name__)

_UNFRAMED = 0x80
_FRAMED = 0x00

#: Serves one connection: (protocol, user, client address) -> runs until the client leaves.
Session = Callable[[Any, "str | None", str], None]
#: Checks a login: (user, password, client address) -> accepted.
PasswordCheck = Callable[[str, str, "str | None"], bool]


class _TlsConnection:
    """A TLS socket whose first byte can be peeked at (TLS sockets take no
    ``MSG_PEEK``): a peeked byte is kept and handed to the next read."""

    def __init__(self, sock: ssl.SSLSocket) -> None:
        self.sock = sock
        self._head = b""

    def recv(self, size: int, flags: int = 0) -> bytes:
        if flags & socket.MSG_PEEK:
            if not self._head:
                self._head = self.sock.recv(1)
            return self._head[:size]
        if self._head:
            head, self._head = self._head[:size], self._head[size:]
            return head
        return self.sock.recv(size)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


class BinaryServer:
    def __init__(
        self,
        host: str,
        port: int,
        *,
        serve: Session,
        check_password: PasswordCheck | None,
        allow_nosasl: bool,
        max_connections: int,
        max_message_size: int,
        handshake_timeout: float = 20.0,
        max_per_address: int = 0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self._serve = serve
        self._check = check_password
        self._allow_nosasl = allow_nosasl
        self._slots = threading.BoundedSemaphore(max_connections)
        self._max_message = max_message_size
        self._handshake_timeout = handshake_timeout
        self._max_per_address = max_per_address
        self._tls = tls
        self._per_address: dict[str, int] = {}
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def start(self) -> None:
        listener = socket.create_server((self.host, self.port), reuse_port=False, backlog=128)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._thread = threading.Thread(
            target=self._accept_loop, name=f"hiveserver2-binary-{self.port}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                # The TCP socket's own shutdown: a TLS socket's would drop its TLS
                # state under the thread reading from it.
                socket.socket.shutdown(conn, socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _accept_loop(self) -> None:
        listener = self._listener
        assert listener is not None
        while not self._stopping.is_set():
            try:
                conn, peer = listener.accept()
            except OSError:
                break
            if self._stopping.is_set():
                conn.close()
                break
            address = str(peer[0])
            with self._lock:
                held = self._per_address.get(address, 0)
                if self._max_per_address and held >= self._max_per_address:
                    refused = True
                else:
                    refused = False
                    self._per_address[address] = held + 1
                    self._connections.add(conn)
            if refused:
                log.debug("HiveServer2: %s holds %d connections already; closed", address, held)
                conn.close()
                continue
            threading.Thread(
                target=self._handle,
                args=(conn, peer),
                name=f"hiveserver2-conn-{peer[1]}",
                daemon=True,
            ).start()

    def _handle(self, raw: socket.socket, peer: Any) -> None:
        slot = False
        conn: Any = raw
        try:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            raw.settimeout(self._handshake_timeout)
            try:
                if self._tls is not None:
                    tls = self._start_tls(raw, peer)
                    if tls is None:
                        return
                    conn = tls
                first = conn.recv(1, socket.MSG_PEEK)
                if not first:
                    return
                protocol, user = self._open(conn, first[0], peer)
                if protocol is None:
                    return
                # The first message must come in time too (it is the client's OpenSession).
                if not conn.recv(1, socket.MSG_PEEK):
                    return
            except TimeoutError:
                log.debug("HiveServer2 connection from %s: no handshake in time; closed", peer)
                return
            conn.settimeout(None)
            self._slots.acquire()
            slot = True
            if self._stopping.is_set():
                return
            self._serve(protocol, user, str(peer[0]))
        except AuthenticationError as exc:
            log.info("HiveServer2 connection from %s refused: %s", peer, exc)
        except TProtocolException as exc:
            # Bytes that are not Thrift's binary protocol: the client's fault, not ours.
            log.info("HiveServer2 connection from %s sent a malformed message: %s", peer, exc)
        except (OSError, ConnectionError) as exc:
            log.debug("HiveServer2 connection from %s ended: %s", peer, exc)
        except Exception:
            log.exception("HiveServer2 connection from %s failed", peer)
        finally:
            address = str(peer[0])
            with self._lock:
                self._connections.discard(raw)
                self._connections.discard(getattr(conn, "sock", conn))
                left = self._per_address.get(address, 1) - 1
                if left > 0:
                    self._per_address[address] = left
                else:
                    self._per_address.pop(address, None)
            try:
                conn.close()
            finally:
                if slot:
                    self._slots.release()

    def _start_tls(self, raw: socket.socket, peer: Any) -> _TlsConnection | None:
        """The TLS handshake, within the socket's (handshake) timeout."""
        assert self._tls is not None
        try:
            tls = self._tls.wrap_socket(raw, server_side=True)
        except ssl.SSLError as exc:
            log.info("HiveServer2 connection from %s: TLS handshake failed: %s", peer, exc)
            return None
        with self._lock:  # stop() shuts the TLS socket down now (the raw one is detached)
            self._connections.discard(raw)
            self._connections.add(tls)
        return _TlsConnection(tls)

    def _open(self, conn: Any, first: int, peer: Any) -> tuple[Any, str | None]:
        sock = TSocket.TSocket()
        sock.setHandle(conn)
        user: str | None = None
        if first == START:
            check = self._check or (lambda _user, _password, _address: True)
            address = str(peer[0])
            user = negotiate_plain(conn, lambda name, password: check(name, password, address))
            transport: Any = TTransport.TFramedTransport(sock, self._max_message)
        elif not self._allow_nosasl:
            log.info(
                "HiveServer2 connection from %s refused: it does not use SASL, but the "
                "endpoint's authentication is PLAIN",
                peer,
            )
            return None, None
        elif first == _UNFRAMED:
            transport = TTransport.TBufferedTransport(sock)
        elif first == _FRAMED:
            transport = TTransport.TFramedTransport(sock, self._max_message)
        elif looks_like_tls(first) and self._tls is None:
            log.info(
                "HiveServer2 connection from %s starts a TLS handshake, but the endpoint "
                "serves no TLS (ssl.enabled is false)",
                peer,
            )
            return None, None
        else:
            log.info("HiveServer2 connection from %s sent no Thrift (first byte %#x)", peer, first)
            return None, None
        protocol = TBinaryProtocol(
            transport,
            string_length_limit=self._max_message,
            container_length_limit=self._max_message,
        )
        return protocol, user
