"""The gateway under soak: one ``sparkgate gateway start-foreground`` subprocess.

It runs in its own process group with its console in ``<work>/console.log``.
Its Spark JVM starts a session of its own (so a Ctrl-C to the terminal reaches
the gateway, which stops Spark in order), so stopping signals the gateway's
group first and then kills, by pid, every descendant seen still alive.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil  # type: ignore[import-untyped]

__all__ = ["Gateway", "GatewayStartError", "Memory", "free_port"]

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
_MB = 1024 * 1024


class GatewayStartError(RuntimeError):
    """The gateway did not become ready; the message ends with its console."""


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Memory:
    """Resident memory in MB: the gateway's Python, its engine JVM(s), the rest."""

    gateway_mb: float
    engine_mb: float
    workers_mb: float  # PySpark's Python workers under the JVM
    engine_pids: tuple[int, ...]


def _kind(process: psutil.Process, gateway_pid: int) -> str:
    """``engine`` (the JVM, a child of the gateway), ``worker`` (a Python under it), ``other``.

    By parent and name, not name alone: a process the JVM forks is briefly a
    copy of it (same name, same RSS) before it runs its program; counting it
    would double the engine for one sample.
    """
    name = process.name()
    if name == "java" and process.ppid() == gateway_pid:
        return "engine"
    if name.startswith("python") and process.ppid() != gateway_pid:
        return "worker"
    return "other"


class Gateway:
    """Start, probe, measure and stop one gateway with both endpoints."""

    def __init__(self, work_dir: Path, options: dict[str, str]) -> None:
        self.work_dir = work_dir
        self.data_dir = work_dir / "data"
        self.console = work_dir / "console.log"
        self.rest_port = free_port()
        self.hs2_port = free_port()
        self.url = f"http://{HOST}:{self.rest_port}"
        self.options = {
            "sql-gateway.data-dir": str(self.data_dir),
            "sql-gateway.endpoint.type": "rest,hiveserver2",
            "sql-gateway.endpoint.rest.port": str(self.rest_port),
            "sql-gateway.endpoint.hiveserver2.port": str(self.hs2_port),
            **options,
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self._seen: dict[int, psutil.Process] = {}

    def start(self) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "sparkgate.cli", "gateway", "start-foreground"]
        argv += [f"-D{key}={value}" for key, value in self.options.items()]
        # An empty conf dir: the repository's conf/config.yaml must not change the defaults.
        env = {**os.environ, "SPARKGATE_CONF_DIR": ""}
        log.info("Starting the gateway (REST %s, HiveServer2 port %d)", self.url, self.hs2_port)
        log.debug("argv: %s", argv)
        with self.console.open("ab") as out:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.work_dir,
                env=env,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        assert self.proc is not None, "not started"
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_ready(self, timeout_s: float) -> float:
        """Seconds until ``/health/ready`` answered 200; raises if it never does."""
        start = time.monotonic()
        with httpx.Client(base_url=self.url, timeout=5) as http:
            while time.monotonic() - start < timeout_s:
                if not self.alive():
                    raise GatewayStartError(f"the gateway exited while starting:\n{self.tail()}")
                with contextlib.suppress(httpx.HTTPError):
                    if http.get("/health/ready").status_code == 200:
                        return time.monotonic() - start
                time.sleep(1.0)
        raise GatewayStartError(f"the gateway was not ready in {timeout_s:.0f} s:\n{self.tail()}")

    def tail(self, lines: int = 40) -> str:
        try:
            text = self.console.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"(console unreadable: {exc})"
        return "\n".join(text.splitlines()[-lines:])

    def count_in_console(self, needle: str) -> int:
        with contextlib.suppress(OSError):
            text = self.console.read_text(encoding="utf-8", errors="replace")
            return text.count(needle)
        return 0

    def memory(self) -> Memory | None:
        """RSS of the gateway, its engine JVM and other descendants; None once it is gone."""
        try:
            root = psutil.Process(self.pid)
            gateway_mb = root.memory_info().rss / _MB
            children = root.children(recursive=True)
        except psutil.Error:
            return None
        self._seen = {child.pid: child for child in children}
        engine_mb = workers_mb = 0.0
        engines: list[int] = []
        for child in children:
            with contextlib.suppress(psutil.Error):
                kind = _kind(child, self.pid)
                if kind == "engine":
                    engine_mb += child.memory_info().rss / _MB
                    engines.append(child.pid)
                elif kind == "worker":
                    workers_mb += child.memory_info().rss / _MB
        return Memory(gateway_mb, engine_mb, workers_mb, tuple(engines))

    def engine_jvm(self) -> psutil.Process | None:
        """The engine: the gateway's child JVM running Spark's ``SparkSubmit``; None if
        there is none (the gateway is gone, or its engine is down)."""
        try:
            children = psutil.Process(self.pid).children(recursive=True)
        except psutil.Error:
            return None
        for child in children:
            with contextlib.suppress(psutil.Error):
                if _kind(child, self.pid) == "engine" and any(
                    "org.apache.spark.deploy.SparkSubmit" in arg for arg in child.cmdline()
                ):
                    return child
        return None

    def live_heap_mb(self, pid: int) -> float | None:
        """The heap of engine JVM ``pid`` in use after a full collection (``jcmd``
        of its JDK: ``GC.run``, then ``GC.heap_info``); None without a jcmd."""
        try:
            jcmd = Path(psutil.Process(pid).exe()).resolve().parent / "jcmd"
        except psutil.Error:
            return None
        if not jcmd.exists():
            return None
        try:
            subprocess.run([str(jcmd), str(pid), "GC.run"], capture_output=True, timeout=60)
            info = subprocess.run(
                [str(jcmd), str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=60
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        # "garbage-first heap   total 262144K, used 91234K [...": the first such line.
        used = re.search(r"total \d+K, used (\d+)K", info)
        return None if used is None else int(used.group(1)) / 1024

    def stop(self, timeout_s: float = 60.0) -> None:
        """SIGTERM to the gateway's group, SIGKILL after ``timeout_s``; idempotent."""
        if self.proc is None:
            return
        self.memory()  # note the current descendants before they are orphaned
        if self.alive():
            log.info("Stopping the gateway (pid %d)", self.pid)
            self._signal_group(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                log.warning("The gateway did not stop in %.0f s; killing it", timeout_s)
        self._signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        self._kill_leftovers()

    def _signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signum)

    def _kill_leftovers(self) -> None:
        """Kill the descendants (JVMs, Python workers) that outlived the gateway."""
        for process in self._seen.values():
            with contextlib.suppress(psutil.Error):
                if process.is_running():  # also checks the pid was not reused
                    command = " ".join(process.cmdline())[:200]
                    log.warning("Killing leftover pid %d: %s", process.pid, command)
                    process.kill()
