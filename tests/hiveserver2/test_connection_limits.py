"""Connections that never send a byte cannot take the HiveServer2 endpoint away."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from sparkgate.service.gateway import SparkGatewayService

from .conftest import run_client, running_endpoint, wait_for
from .test_clients import PASSWORD, PYHIVE_SCRIPT, USER


def _idle(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=30)


def _idle_ones(port: int, count: int) -> list[socket.socket]:
    """``count`` connections that never send a byte, a little apart: a tight loop
    outruns the HTTP server's accept loop, whose listen backlog (socketserver's 5)
    then drops SYNs and costs each overflowing connect a 1 s retransmission."""
    idle = []
    for _ in range(count):
        idle.append(_idle(port))
        time.sleep(0.002)
    return idle


def _still_open(sock: socket.socket) -> bool:
    """Whether the server has neither closed nor reset ``sock`` (without waiting)."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True  # nothing to read, no EOF: held open
    except ConnectionResetError:
        return False
    finally:
        sock.settimeout(30)


def _connection_threads() -> int:
    """The endpoint's threads serving a connection (one for each it holds, a
    handshake included): binary ``hiveserver2-conn-<port>``, HTTP socketserver's."""
    return sum(
        1
        for thread in threading.enumerate()
        if thread.name.startswith("hiveserver2-conn-")
        or thread.name.endswith("(process_request_thread)")
    )


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


# Far longer than the client's run (a PyHive process starting and a first statement
# on Spark: up to ~15 s on a loaded machine), so the idle connections are still held
# by the server, each in its handshake, while the client is served.
_LONG_HANDSHAKE = 90.0


@pytest.mark.parametrize("scheme", ["binary", "http"])
def test_six_hundred_idle_connections_do_not_stop_a_client(
    hs2_service: SparkGatewayService, pyhive_python: Path, scheme: str
) -> None:
    with running_endpoint(hs2_service, worker_threads=50, handshake_timeout=_LONG_HANDSHAKE) as hs2:
        port = hs2.http_port if scheme == "http" else hs2.port
        before = _connection_threads()
        opened = time.monotonic()
        idle = _idle_ones(port, 600)
        try:
            # All accepted: the server holds 600, more than its 50 worker threads.
            assert wait_for(lambda: _connection_threads() - before >= 600, 30), (
                _connection_threads() - before
            )
            auth = "NONE" if scheme == "http" else "NOSASL"
            out = run_client(pyhive_python, PYHIVE_SCRIPT, str(port), auth, USER, PASSWORD, scheme)
            assert out["rows"] == [[0, "0"], [1, "1"], [2, "2"]]
            # ... and the client was served while it still held every one of them.
            elapsed = time.monotonic() - opened
            assert elapsed < _LONG_HANDSHAKE, f"the client took {elapsed:.0f} s: inconclusive"
            closed = [i for i, sock in enumerate(idle) if not _still_open(sock)]
            assert closed == [], f"{len(closed)} idle connections were closed"
            assert _connection_threads() - before >= 600
        finally:
            for sock in idle:
                sock.close()


@pytest.mark.parametrize("scheme", ["binary", "http"])
def test_an_idle_connection_is_closed_after_the_handshake_time(
    hs2_service: SparkGatewayService, scheme: str
) -> None:
    with running_endpoint(hs2_service, handshake_timeout=2.0) as hs2:
        sock = _idle(hs2.http_port if scheme == "http" else hs2.port)
        try:
            started = time.monotonic()
            assert _still_open(sock)
            assert _closed_by_server(sock, 30)
            assert time.monotonic() - started >= 1.5
            assert not _still_open(sock)
        finally:
            sock.close()


def test_an_http_request_that_stalls_is_cut(hs2_service: SparkGatewayService) -> None:
    with running_endpoint(hs2_service, handshake_timeout=2.0) as hs2:
        sock = _idle(hs2.http_port)
        try:
            sock.sendall(b"POST /cliservice HTTP/1.1\r\nHost: x\r\n")  # headers never end
            assert _closed_by_server(sock, 30)
        finally:
            sock.close()


@pytest.mark.parametrize("scheme", ["binary", "http"])
def test_one_address_holds_at_most_its_cap(hs2_service: SparkGatewayService, scheme: str) -> None:
    with running_endpoint(hs2_service, max_connections_per_address=5) as hs2:
        port = hs2.http_port if scheme == "http" else hs2.port
        held = [_idle(port) for _ in range(5)]
        try:
            time.sleep(0.5)
            extra = _idle(port)
            assert _closed_by_server(extra, 10), "the sixth connection is closed at once"
            extra.close()
            assert not _closed_by_server(held[0], 0.5), "the first five are kept"
        finally:
            for sock in held:
                sock.close()
