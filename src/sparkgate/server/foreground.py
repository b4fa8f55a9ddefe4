"""What the try-out servers run in the foreground share (``make cluster``, ``make kafka``)."""

from __future__ import annotations

import signal
import socket
import threading

__all__ = ["free_port", "until_stopped"]


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def until_stopped() -> None:
    """Wait for Ctrl-C or SIGTERM, either an expected stop."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
