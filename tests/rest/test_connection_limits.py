"""Slow and failing connections cannot hold the REST endpoint nor flood its log.

The real endpoint (uvicorn on a loopback port) over the service double: the
limits are the HTTP server's, no Spark needed.
"""

from __future__ import annotations

import logging
import re
import socket
import struct
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from sparkgate.endpoints.rest.connections import LIMITED_LOGGERS
from sparkgate.endpoints.rest.server import RestEndpoint
from tests.doubles import FakeGatewayService

from .conftest import settings

HEADER_TIMEOUT = 1.0
KEEP_ALIVE_TIMEOUT = 1.0
# Generous: the machine may be busy with other test runs.
SLACK = 4.0

_INFO = b"GET /v1/info HTTP/1.1\r\nHost: gateway\r\n\r\n"
# What uvicorn and asyncio log when a server starts and stops.
_LIFE_CYCLE = ("Using selector", "Started server", "Shutting down", "Finished server", "Waiting")
_MORE = re.compile(r"\(and (\d+) more in the last \d+ s\)")


@pytest.fixture
def limited() -> Iterator[RestEndpoint]:
    server = RestEndpoint(
        FakeGatewayService(),
        settings(header_timeout=HEADER_TIMEOUT, keep_alive_timeout=KEEP_ALIVE_TIMEOUT),
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _connect(endpoint: RestEndpoint) -> socket.socket:
    return socket.create_connection(("127.0.0.1", endpoint.port), timeout=30)


def _read_until_closed(sock: socket.socket, within: float) -> tuple[bytes, float]:
    """What the server sends until it closes the connection, and when it closed it."""
    started = time.monotonic()
    sock.settimeout(within)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except ConnectionResetError:
        pass
    return received, time.monotonic() - started


def _trickle(sock: socket.socket, data: bytes, stop: threading.Event, every: float = 0.05) -> None:
    """Send ``data`` a byte at a time (slowloris) until it is sent, refused or ``stop``."""
    try:
        for byte in data:
            if stop.is_set():
                return
            sock.sendall(bytes([byte]))
            time.sleep(every)
    except OSError:
        return  # closed by the server: what the test waits for


def test_slow_headers_are_cut_while_a_normal_client_is_served(limited: RestEndpoint) -> None:
    slow = _connect(limited)
    stop = threading.Event()
    # 200 header bytes at 20 per second: 10 s, far past the header timeout.
    headers = b"GET /v1/info HTTP/1.1\r\nHost: gateway\r\nX-Slow: " + b"s" * 160
    trickler = threading.Thread(target=_trickle, args=(slow, headers, stop), daemon=True)
    started = time.monotonic()
    trickler.start()
    try:
        with httpx.Client(base_url=limited.address, timeout=10) as client:
            while time.monotonic() - started < HEADER_TIMEOUT * 1.5:
                response = client.get("/v1/info")
                assert response.status_code == 200
                time.sleep(0.1)
        received, _ = _read_until_closed(slow, HEADER_TIMEOUT + SLACK)
        closed_after = time.monotonic() - started
    finally:
        stop.set()
        slow.close()
        trickler.join(10)
    assert received.startswith(b"HTTP/1.1 408 "), received
    assert closed_after < HEADER_TIMEOUT + SLACK


def test_a_connection_that_sends_nothing_is_closed(limited: RestEndpoint) -> None:
    with _connect(limited) as idle:
        received, after = _read_until_closed(idle, HEADER_TIMEOUT + SLACK)
    assert received.startswith(b"HTTP/1.1 408 ")
    assert HEADER_TIMEOUT * 0.8 < after < HEADER_TIMEOUT + SLACK


def test_slow_headers_of_a_later_request_on_a_kept_connection_are_cut(
    limited: RestEndpoint,
) -> None:
    with _connect(limited) as sock:
        sock.sendall(_INFO)
        first = sock.recv(4096)
        assert first.startswith(b"HTTP/1.1 200 ")
        sock.sendall(b"GET /v1/info HTTP/1.1\r\n")  # ... and the rest never comes
        received, after = _read_until_closed(sock, HEADER_TIMEOUT + SLACK)
    assert b"HTTP/1.1 408 " in received
    assert after < HEADER_TIMEOUT + SLACK


def test_headers_in_time_and_a_slow_body_are_served(limited: RestEndpoint) -> None:
    """The limit is on the headers only: a request whose body takes longer is served."""
    body = b'{"sessionName": "slow-body"}'
    head = (
        b"POST /v1/sessions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
    )
    with _connect(limited) as sock:
        sock.sendall(head)
        time.sleep(HEADER_TIMEOUT * 1.5)
        sock.sendall(body)
        sock.settimeout(SLACK)
        response = sock.recv(4096)
    assert response.startswith(b"HTTP/1.1 200 "), response


def test_an_idle_keep_alive_connection_is_closed(limited: RestEndpoint) -> None:
    with _connect(limited) as sock:
        sock.sendall(_INFO)
        received, after = _read_until_closed(sock, KEEP_ALIVE_TIMEOUT + SLACK)
    assert received.startswith(b"HTTP/1.1 200 ") and b"408" not in received
    assert after < KEEP_ALIVE_TIMEOUT + SLACK


def _garbage(port: int) -> None:
    # TLS's first bytes, as a client that expects HTTPS sends them.
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n")


def _reset(port: int) -> None:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"GET /v1/info HTTP/1.1\r\nHo")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()  # RST


def test_two_thousand_failed_connections_log_a_handful_of_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    endpoint = RestEndpoint(FakeGatewayService(), settings())
    endpoint.start()
    try:
        for _ in range(1000):
            _garbage(endpoint.port)
            _reset(endpoint.port)
        # The endpoint still answers, and has read every bad request by now.
        assert httpx.get(endpoint.address + "/v1/info", timeout=30).status_code == 200
        time.sleep(1)
    finally:
        endpoint.stop()  # logs the counts held back
    lines = [
        r
        for r in caplog.records
        if r.name in LIMITED_LOGGERS and not r.getMessage().startswith(_LIFE_CYCLE)
    ]
    bad = [r for r in lines if r.getMessage().startswith("Invalid HTTP request received.")]
    assert len(lines) <= 5, [r.getMessage() for r in lines]
    assert 1 <= len(bad) <= 3
    assert all(r.levelno <= logging.WARNING and r.exc_info is None for r in lines)
    counted = len(bad) + sum(int(m[1]) for r in bad if (m := _MORE.search(r.getMessage())))
    assert counted >= 990, [r.getMessage() for r in bad]
