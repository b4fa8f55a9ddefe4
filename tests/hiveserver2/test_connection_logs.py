"""Failing HiveServer2 connections log a handful of lines, not one (or a traceback) each.

The real endpoint on loopback ports over the service double: no Spark needed.
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import struct
from collections import defaultdict
from collections.abc import Callable

import pytest

from sparkgate.endpoints.hiveserver2.endpoint import HiveServer2Endpoint
from sparkgate.endpoints.hiveserver2.options import HiveServer2Settings, TransportMode
from tests.doubles import FakeGatewayService

ATTEMPTS = 400
GONE = 30  # clients gone before their answer: each takes ~0.1 s to set up
_MORE = re.compile(r" \(and (\d+) more in the last \d+ s\)$")
_PEER = re.compile(r"\('127\.0\.0\.1', \d+\)")
# http.server's access log (DEBUG): a line per request, a failed one or not.
_ACCESS = re.compile(r"^HiveServer2 HTTP \('127\.0\.0\.1', \d+\): \"")


def _exchange(port: int, data: bytes) -> None:
    """Send ``data``, then read until the server closes (it has logged by then)."""
    with (
        socket.create_connection(("127.0.0.1", port), timeout=30) as sock,
        contextlib.suppress(OSError),
    ):
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(4096):
            pass


def _http_post(port: int, body: bytes, *, reset: bool = False) -> None:
    head = (
        b"POST /cliservice HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/x-thrift\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n"
    )
    if not reset:
        _exchange(port, head + body)
        return
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(head + body)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()  # gone before the answer (RST)


def test_repeated_connection_failures_log_a_handful_of_lines(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG, logger="sparkgate.endpoints.hiveserver2")
    settings = HiveServer2Settings(port=0, http_port=0, transport_mode=TransportMode.ALL)
    endpoint = HiveServer2Endpoint(FakeGatewayService(), settings)
    endpoint.start()
    binary, http = endpoint.binary_port, endpoint.http_port
    assert binary is not None and http is not None
    failures: dict[str, Callable[[], None]] = {
        "not Thrift": lambda: _exchange(binary, b"GET / HTTP/1.1\r\n\r\n"),
        "SASL": lambda: _exchange(binary, b"\x01\x00\x00\x00\x05XXXXX"),
        "bad version": lambda: _exchange(binary, b"\x80\x07\x00\x01garbage-garbage"),
        "HTTP body": lambda: _http_post(http, b"\x80\x01\x00\x01garbage"),
    }
    try:
        for fail in failures.values():
            for _ in range(ATTEMPTS):
                fail()
        for _ in range(GONE):
            _http_post(http, b"\x80\x01\x00\x01garbage", reset=True)
    finally:
        endpoint.stop()  # logs the counts held back
    lines = [
        r
        for r in caplog.records
        if r.name.startswith("sparkgate.endpoints.hiveserver2")
        and not _ACCESS.match(r.getMessage())
        and "listening on" not in r.getMessage()
        and "endpoint stopped" not in r.getMessage()
    ]
    by_kind: dict[str, list[str]] = defaultdict(list)
    for record in lines:
        text = _MORE.sub("", _PEER.sub("PEER", record.getMessage()))
        by_kind[text.split(":")[0]].append(record.getMessage())
    # ~4 x 400 failed connections (each logged once or twice before): a few lines a kind.
    assert len(lines) <= 3 * len(by_kind) <= 30, [r.getMessage() for r in lines]
    assert all(len(messages) <= 3 for messages in by_kind.values()), dict(by_kind)
    assert all(r.levelno <= logging.WARNING and r.exc_info is None for r in lines)
    counted = {
        kind: sum(1 + int(m[1]) if (m := _MORE.search(text)) else 1 for text in messages)
        for kind, messages in by_kind.items()
    }
    assert counted["HiveServer2 connection from PEER sent no Thrift (first byte 0x47)"] == (
        ATTEMPTS
    )
    assert counted["HiveServer2 connection from PEER refused"] == ATTEMPTS
    assert counted["HiveServer2 connection from PEER sent a malformed message"] == ATTEMPTS
    assert counted["HiveServer2 HTTP call from PEER could not be read"] >= ATTEMPTS
    # http.server used to print a traceback on stderr for each client gone before its answer.
    assert "Traceback" not in capfd.readouterr().err
