"""Helpers for tests that run the real gateway in a subprocess."""

from __future__ import annotations

import socket
import subprocess
import time

__all__ = ["free_port", "read_until_running"]


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def read_until_running(proc: subprocess.Popen[str], timeout: float) -> list[str]:
    """The gateway's output lines up to the one saying it serves; fails if it exits first."""
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    for line in proc.stdout:
        lines.append(line)
        if "is running on Spark" in line:
            return lines
        assert time.monotonic() < deadline, "".join(lines)
    raise AssertionError("gateway exited early:\n" + "".join(lines))
