"""Helpers for tests that run the real gateway in a subprocess."""

from __future__ import annotations

import contextlib
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import httpx

__all__ = ["foreground_gateway", "free_port", "read_until_running"]


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


@contextlib.contextmanager
def foreground_gateway(
    options: Sequence[str],
    *,
    port: int,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float = 240,
    ca: Path | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``sparkgate gateway start-foreground OPTIONS`` serving REST on ``port``.

    Yields its URL and process once REST answers; its output goes to
    ``cwd/console.log``; it is stopped (SIGTERM, then SIGKILL) on exit. With
    ``ca``, REST serves HTTPS under a certificate that CA signed.
    """
    with (cwd / "console.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "sparkgate.cli", "gateway", "start-foreground", *options],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=dict(env),
        )
        url = f"{'https' if ca else 'http'}://127.0.0.1:{port}"
        verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=ca) if ca else True
        deadline = time.monotonic() + timeout
        try:
            while True:
                assert process.poll() is None, (cwd / "console.log").read_text()
                try:
                    response = httpx.get(f"{url}/v1/api_versions", timeout=2, verify=verify)
                    if response.status_code in (200, 401):  # 401: it serves, with authentication
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "the gateway did not start in time"
                time.sleep(0.2)
            yield url, process
        finally:
            process.terminate()
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
