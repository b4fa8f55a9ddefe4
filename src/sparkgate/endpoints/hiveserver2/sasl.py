"""The server side of Thrift's SASL transport, for the PLAIN mechanism.

Thrift SASL (what Hive, PyHive, impyla and the Hive JDBC driver speak on
HiveServer2's binary port) starts with negotiation frames of one status byte,
a 4-byte big-endian length and a payload:

* the client sends ``START`` with the mechanism name (``PLAIN``), then ``OK``
  (or ``COMPLETE``, as the Java client does) with ``authzid\\0user\\0password``;
* the server answers ``COMPLETE`` (empty payload) to accept, or ``BAD`` with
  a message the client shows to refuse.

Without a negotiated security layer (PLAIN has none) every later message is
an ordinary Thrift frame: a 4-byte length and the payload.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "START",
    "AuthenticationError",
    "SaslStatus",
    "negotiate_plain",
    "recv_exact",
]

log = logging.getLogger(__name__)


class SaslStatus(enum.IntEnum):
    START = 1
    OK = 2
    BAD = 3
    ERROR = 4
    COMPLETE = 5


#: The first byte of a SASL client's first frame.
START = SaslStatus.START.value

_HEADER = struct.Struct(">BI")
_MAX_NEGOTIATION_FRAME = 64 * 1024


class AuthenticationError(Exception):
    """SASL negotiation failed; the message was sent to the client."""


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str


def recv_exact(sock: socket.socket, size: int) -> bytes:
    """Read exactly ``size`` bytes; ``ConnectionError`` at end of stream."""
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = sock.recv(remaining)
        if not chunk:
            raise ConnectionError("the client closed the connection during SASL negotiation")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _read_frame(sock: socket.socket) -> tuple[int, bytes]:
    status, length = _HEADER.unpack(recv_exact(sock, _HEADER.size))
    if length > _MAX_NEGOTIATION_FRAME:
        raise AuthenticationError(f"SASL negotiation frame of {length} bytes is too large")
    return status, recv_exact(sock, length)


def _send_frame(sock: socket.socket, status: SaslStatus, payload: bytes) -> None:
    sock.sendall(_HEADER.pack(status.value, len(payload)) + payload)


def _refuse(sock: socket.socket, message: str) -> AuthenticationError:
    with contextlib.suppress(OSError):
        _send_frame(sock, SaslStatus.BAD, message.encode("utf-8"))
    return AuthenticationError(message)


def _parse_plain(payload: bytes) -> Credentials:
    parts = payload.split(b"\x00")
    if len(parts) != 3:
        raise ValueError("a PLAIN response is 'authzid NUL user NUL password'")
    _authzid, user, password = (p.decode("utf-8") for p in parts)
    return Credentials(user, password)


def negotiate_plain(sock: socket.socket, check: Callable[[str, str], bool]) -> str:
    """Run the server side of SASL PLAIN on a fresh connection; returns the user.

    ``check(user, password)`` decides; a refusal is sent to the client as a
    ``BAD`` frame and raised as :class:`AuthenticationError`.
    """
    status, mechanism = _read_frame(sock)
    if status != SaslStatus.START:
        raise _refuse(sock, f"SASL negotiation must begin with START, not status {status}")
    name = mechanism.decode("utf-8", "replace").strip().upper()
    if name != "PLAIN":
        raise _refuse(sock, f"Unsupported SASL mechanism {name!r}: this server accepts PLAIN only")
    status, response = _read_frame(sock)
    if status not in (SaslStatus.OK, SaslStatus.COMPLETE):
        raise _refuse(sock, f"Unexpected SASL status {status} during PLAIN negotiation")
    try:
        credentials = _parse_plain(response)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _refuse(sock, f"Malformed PLAIN response: {exc}") from None
    if not check(credentials.user, credentials.password):
        log.info("HiveServer2 login refused for user %r", credentials.user)
        raise _refuse(
            sock,
            f"Error validating the login: authentication failed for user "
            f"'{credentials.user}' (wrong user name or password)",
        )
    _send_frame(sock, SaslStatus.COMPLETE, b"")
    return credentials.user
