"""Pid files: which gateways run on a data directory, and where they serve.

Every gateway, started in the foreground or in the background, writes
``<data-dir>/run/gateway-<pid>.json`` once its endpoints serve, and removes it
when it stops. The file holds the pid, the endpoint addresses (with their
ports) and the start time, so ``gateway stop`` can pick a gateway by data
directory and port, and the embedded SQL client can tell that a gateway holds
the data directory's metastore. A file whose process is gone (killed, machine
restarted) is stale and ignored, then removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

__all__ = [
    "RunningGateway",
    "is_gateway_process",
    "pid_file",
    "read_pid_file",
    "remove_pid_file",
    "running_gateways",
    "write_pid_file",
]

_PREFIX = "gateway-"
_SUFFIX = ".json"


@dataclass(frozen=True)
class RunningGateway:
    """A live gateway as its pid file describes it."""

    pid: int
    addresses: tuple[str, ...]
    started: float

    @property
    def ports(self) -> tuple[int, ...]:
        """The port of every endpoint address (``http://127.0.0.1:8083`` -> 8083)."""
        found: list[int] = []
        for address in self.addresses:
            with contextlib.suppress(ValueError):
                port = urlsplit(address).port
                if port is not None:
                    found.append(port)
        return tuple(found)

    def describe(self) -> str:
        return f"pid {self.pid} ({', '.join(self.addresses) or 'no endpoints'})"


def pid_file(data_dir: Path, pid: int) -> Path:
    return data_dir / "run" / f"{_PREFIX}{pid}{_SUFFIX}"


def write_pid_file(data_dir: Path, pid: int, addresses: Sequence[str]) -> Path:
    """Record a gateway that serves ``addresses``; written whole, then renamed."""
    path = pid_file(data_dir, pid)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    payload = {"pid": pid, "addresses": list(addresses), "started": time.time()}
    partial.write_text(json.dumps(payload), encoding="utf-8")
    partial.replace(path)
    return path


def remove_pid_file(data_dir: Path, pid: int) -> None:
    pid_file(data_dir, pid).unlink(missing_ok=True)


def read_pid_file(path: Path) -> RunningGateway | None:
    """The gateway a pid file names, or None if it is unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return RunningGateway(
            int(data["pid"]), tuple(str(a) for a in data["addresses"]), float(data["started"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def is_gateway_process(pid: int) -> bool:
    """Whether ``pid`` runs, and (where /proc tells) is a sparkgate process, not a reused pid."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc (macOS): the pid is all we have
    return b"sparkgate" in cmdline


def running_gateways(data_dir: Path) -> list[RunningGateway]:
    """The live gateways of ``data_dir``, oldest first; stale pid files are removed."""
    run_dir = data_dir / "run"
    if not run_dir.is_dir():
        return []
    found: list[RunningGateway] = []
    for path in run_dir.glob(f"{_PREFIX}*{_SUFFIX}"):
        gateway = read_pid_file(path)
        if gateway is None:
            continue
        if is_gateway_process(gateway.pid):
            found.append(gateway)
        else:
            path.unlink(missing_ok=True)
    return sorted(found, key=lambda g: g.started)
