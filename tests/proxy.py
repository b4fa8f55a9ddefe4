"""A round-robin TCP proxy, as the simplest load balancer in front of gateways.

Each client connection goes to the next backend in turn; a backend that refuses
the connection is skipped (a balancer's health check, at its crudest). Bytes
are relayed both ways until either side closes.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
from collections.abc import Sequence

__all__ = ["RoundRobinProxy"]


class RoundRobinProxy:
    """Listens on a free loopback port (:attr:`port`) until :meth:`stop`."""

    def __init__(self, backends: Sequence[tuple[str, int]]) -> None:
        self.backends = list(backends)
        self._turns = itertools.cycle(range(len(self.backends)))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.connections = [0] * len(self.backends)  # accepted, per backend
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="proxy", daemon=True)

    def __enter__(self) -> RoundRobinProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._closing.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        self._thread.join(5)

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _connect(self) -> socket.socket | None:
        with self._lock:
            first = next(self._turns)
        for step in range(len(self.backends)):
            index = (first + step) % len(self.backends)
            try:
                upstream = socket.create_connection(self.backends[index], timeout=5)
            except OSError:
                continue
            upstream.settimeout(None)
            with self._lock:
                self.connections[index] += 1
            return upstream
        return None

    def _serve(self, client: socket.socket) -> None:
        upstream = self._connect()
        if upstream is None:
            client.close()
            return
        pumps = [
            threading.Thread(target=_pump, args=(client, upstream), daemon=True),
            threading.Thread(target=_pump, args=(upstream, client), daemon=True),
        ]
        for pump in pumps:
            pump.start()


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, target):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                end.close()
