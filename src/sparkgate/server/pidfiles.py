"""Pid files: which gateways run on a data directory, and where they serve.

Every gateway, started in the foreground or in the background, writes
``<data-dir>/run/gateway-<pid>.json`` before it starts Spark, rewrites it with
its endpoint addresses once they serve, and removes it when it stops. An
embedded SQL client writes ``sql-client-<pid>.json`` the same way. A file
holds the pid, the addresses (with their ports), the start time and whether
it serves yet, so ``gateway stop`` can pick a gateway by data directory and
port, and a process can tell that another one holds the data directory's
embedded metastore. A file whose process is gone (killed, machine restarted)
is stale and ignored, then removed.
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
    "GATEWAY",
    "SQL_CLIENT",
    "RunningGateway",
    "is_gateway_process",
    "pid_file",
    "read_pid_file",
    "remove_pid_file",
    "running_gateways",
    "write_pid_file",
]

_SUFFIX = ".json"
#: The kinds of process that hold a data directory.
GATEWAY = "gateway"
SQL_CLIENT = "sql-client"


@dataclass(frozen=True)
class RunningGateway:
    """A live gateway as its pid file describes it."""

    pid: int
    addresses: tuple[str, ...]
    started: float
    kind: str = GATEWAY
    serving: bool = True

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
        if self.kind != GATEWAY:
            return f"pid {self.pid}"
        if not self.serving:
            return f"pid {self.pid} (starting)"
        return f"pid {self.pid} ({', '.join(self.addresses) or 'no endpoints'})"


def pid_file(data_dir: Path, pid: int, kind: str = GATEWAY) -> Path:
    return data_dir / "run" / f"{kind}-{pid}{_SUFFIX}"


def write_pid_file(
    data_dir: Path,
    pid: int,
    addresses: Sequence[str] = (),
    *,
    kind: str = GATEWAY,
    serving: bool = True,
    started: float | None = None,
) -> Path:
    """Record a process holding ``data_dir``; written whole, then renamed."""
    path = pid_file(data_dir, pid, kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    payload = {
        "pid": pid,
        "kind": kind,
        "addresses": list(addresses),
        "started": time.time() if started is None else started,
        "serving": serving,
    }
    partial.write_text(json.dumps(payload), encoding="utf-8")
    partial.replace(path)
    return path


def remove_pid_file(data_dir: Path, pid: int, kind: str = GATEWAY) -> None:
    pid_file(data_dir, pid, kind).unlink(missing_ok=True)


def read_pid_file(path: Path) -> RunningGateway | None:
    """The gateway a pid file names, or None if it is unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return RunningGateway(
            int(data["pid"]),
            tuple(str(a) for a in data["addresses"]),
            float(data["started"]),
            str(data.get("kind", GATEWAY)),
            bool(data.get("serving", True)),
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


def running_gateways(data_dir: Path, kinds: Sequence[str] = (GATEWAY,)) -> list[RunningGateway]:
    """The live processes of ``kinds`` on ``data_dir``, oldest first; stale files are removed."""
    run_dir = data_dir / "run"
    if not run_dir.is_dir():
        return []
    found: list[RunningGateway] = []
    for kind in kinds:
        for path in run_dir.glob(f"{kind}-*{_SUFFIX}"):
            gateway = read_pid_file(path)
            if gateway is None or gateway.kind != kind:
                continue
            if is_gateway_process(gateway.pid):
                found.append(gateway)
            else:
                path.unlink(missing_ok=True)
    return sorted(found, key=lambda g: g.started)
