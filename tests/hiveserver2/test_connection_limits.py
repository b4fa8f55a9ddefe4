"""Connections that never send a byte cannot take the HiveServer2 endpoint away."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from sparkgate.service.gateway import SparkGatewayService

from .conftest import run_client, running_endpoint
from .test_clients import PASSWORD, PYHIVE_SCRIPT, USER


def _idle(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=30)


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


@pytest.mark.parametrize("scheme", ["binary", "http"])
def test_six_hundred_idle_connections_do_not_stop_a_client(
    hs2_service: SparkGatewayService, pyhive_python: Path, scheme: str
) -> None:
    with running_endpoint(hs2_service, worker_threads=50, handshake_timeout=3.0) as hs2:
        port = hs2.http_port if scheme == "http" else hs2.port
        idle = [_idle(port) for _ in range(600)]
        try:
            auth = "NONE" if scheme == "http" else "NOSASL"
            out = run_client(pyhive_python, PYHIVE_SCRIPT, str(port), auth, USER, PASSWORD, scheme)
            assert out["rows"] == [[0, "0"], [1, "1"], [2, "2"]]
            # The idle ones are closed once their handshake time is over.
            assert _closed_by_server(idle[0], 30) and _closed_by_server(idle[-1], 30)
        finally:
            for sock in idle:
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
