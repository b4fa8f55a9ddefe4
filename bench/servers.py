"""Starting and stopping the servers under test, on free loopback ports.

Every server runs in its own process group (``start_new_session``), writes its
console to a log file in the run's work directory, and is stopped with
SIGTERM to the whole group, then SIGKILL. Every process started here is also
registered for :func:`stop_all`, which ``atexit`` and the runner's signal
handlers call, so a failing step never leaves a JVM behind.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import http.client
import importlib.util
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from bench.settings import SparkSettings

__all__ = [
    "ManagedProcess",
    "ServerStartError",
    "free_port",
    "port_accepts",
    "rest_endpoint_missing",
    "spark_home",
    "start_rest_gateway",
    "start_thrift_server",
    "stop_all",
    "thrift_server_jar",
]

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"

_live: list[ManagedProcess] = []
_live_lock = threading.Lock()


class ServerStartError(RuntimeError):
    """A server did not start; the message carries the end of its log."""


def free_port() -> int:
    """A port that is free on the loopback interface right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_accepts(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=timeout):
            return True
    except OSError:
        return False


class ManagedProcess:
    """A server subprocess in its own process group, console to ``log_file``."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        log_file: Path,
        cwd: Path,
        env: Mapping[str, str],
        pipes: bool = False,
    ) -> None:
        """``pipes``: stdin and stdout are pipes to this process (a client driven
        line by line); the console (stderr) still goes to ``log_file``."""
        self.name = name
        self.log_file = log_file
        log_file.parent.mkdir(parents=True, exist_ok=True)
        cwd.mkdir(parents=True, exist_ok=True)
        log.info("Starting %s", name)
        log.debug("%s: %s", name, " ".join(argv))
        with log_file.open("ab") as out:
            self.proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE if pipes else subprocess.DEVNULL,
                stdout=subprocess.PIPE if pipes else out,
                stderr=out if pipes else subprocess.STDOUT,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
            )
        with _live_lock:
            _live.append(self)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, max_lines: int = 40) -> str:
        try:
            text = self.log_file.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"(log unreadable: {exc})"
        return "\n".join(text.strip().splitlines()[-max_lines:]) or "(empty log)"

    def wait_ready(self, probe: Callable[[], bool], timeout: float) -> float:
        """Poll ``probe`` until it is true; returns the seconds it took.

        Raises:
            ServerStartError: the process exited, or ``timeout`` passed.
        """
        start = time.monotonic()
        while True:
            if not self.alive():
                raise ServerStartError(
                    f"{self.name} exited with code {self.proc.returncode} while starting; "
                    f"the end of its log:\n{self.tail()}"
                )
            with contextlib.suppress(Exception):
                if probe():
                    return time.monotonic() - start
            if time.monotonic() - start > timeout:
                raise ServerStartError(
                    f"{self.name} was not ready within {timeout:.0f} s; "
                    f"the end of its log:\n{self.tail()}"
                )
            time.sleep(0.5)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM to the process group, SIGKILL after ``timeout``; idempotent."""
        with _live_lock:
            if self in _live:
                _live.remove(self)
        if self.alive():
            log.info("Stopping %s", self.name)
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                log.warning("%s did not stop in %.0f s; killing it", self.name, timeout)
        # Children (the JVM under a launcher script) may outlive the leader.
        self._signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signum)


def stop_all() -> None:
    """Stop every server still running (called at exit and on signals)."""
    with _live_lock:
        live = list(_live)
    for process in reversed(live):
        try:
            process.stop(timeout=15)
        except Exception:  # keep stopping the others
            log.exception("Could not stop %s", process.name)


atexit.register(stop_all)


def spark_home() -> Path:
    """The Spark distribution inside the installed pyspark package."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def thrift_server_jar(home: Path) -> Path | None:
    """The hive-thriftserver jar shipped in pyspark's ``jars/``, if any."""
    found = sorted(glob.glob(str(home / "jars" / "spark-hive-thriftserver_*.jar")))
    return Path(found[0]) if found else None


def _base_env(work_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    conf_dir = work_dir / "spark-conf"
    conf_dir.mkdir(parents=True, exist_ok=True)
    # An empty conf dir: nothing from a machine-wide spark-defaults.conf leaks in.
    env["SPARK_CONF_DIR"] = str(conf_dir)
    env["SPARK_LOCAL_IP"] = HOST
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    return env


def start_thrift_server(
    work_dir: Path, spark: SparkSettings, port: int, *, auth: str = "NOSASL"
) -> ManagedProcess:
    """Spark's HiveThriftServer2 from the pyspark package, with its own Derby
    metastore and warehouse under ``work_dir``."""
    home = spark_home()
    submit = home / "bin" / "spark-submit"
    if not submit.exists():
        raise ServerStartError(f"spark-submit not found in the pyspark package ({submit.name})")
    if thrift_server_jar(home) is None:
        raise ServerStartError(
            "this pyspark package ships no spark-hive-thriftserver jar; "
            "the Thrift server target needs it in pyspark's jars/"
        )
    root = work_dir / "thrift"
    for sub in ("warehouse", "scratch", "resources", "oplogs", "local"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    metastore = root / "metastore_db"
    argv: list[str] = [str(submit)]
    if spark.driver_memory is not None:
        argv += ["--driver-memory", spark.driver_memory]
    conf = {
        **spark.conf(),
        "spark.app.name": "bench-thriftserver",
        "spark.sql.warehouse.dir": str(root / "warehouse"),
        "spark.local.dir": str(root / "local"),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={root}",
    }
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    argv += ["--class", THRIFT_SERVER_CLASS, "spark-internal"]
    hiveconf = {
        "hive.server2.thrift.port": str(port),
        "hive.server2.thrift.bind.host": HOST,
        "hive.server2.authentication": auth,
        "hive.server2.transport.mode": "binary",
        # One worker thread per connection; the default 500 would stall the
        # idle-sessions workload (1,000 sessions).
        "hive.server2.thrift.max.worker.threads": "2048",
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={metastore};create=true",
        "hive.exec.scratchdir": str(root / "scratch"),
        "hive.exec.local.scratchdir": str(root / "scratch"),
        "hive.downloaded.resources.dir": str(root / "resources"),
        "hive.server2.logging.operation.log.location": str(root / "oplogs"),
    }
    for key, value in hiveconf.items():
        argv += ["--hiveconf", f"{key}={value}"]
    env = _base_env(work_dir)
    env["SPARK_HOME"] = str(home)
    return ManagedProcess(
        "Spark Thrift server", argv, log_file=root / "console.log", cwd=root, env=env
    )


def rest_endpoint_missing() -> str | None:
    """Why sparkgate's REST endpoint cannot be benchmarked, or None if it can."""
    try:
        found = importlib.util.find_spec("sparkgate.endpoints.rest")
    except (ImportError, ValueError) as exc:
        return f"sparkgate.endpoints.rest cannot be imported ({exc})"
    if found is None:
        return "not available yet: sparkgate has no REST endpoint (sparkgate.endpoints.rest)"
    return None


def _rest_option_keys() -> set[str] | None:
    """Option keys the REST endpoint declares (without its prefix), when discoverable."""
    with contextlib.suppress(Exception):
        from importlib.metadata import entry_points

        for entry in entry_points(group="sparkgate.endpoints"):
            if entry.name != "rest":
                continue
            factory = entry.load()
            factory = factory() if isinstance(factory, type) else factory
            return {option.key for option in factory.options()}
    return None


def start_rest_gateway(
    work_dir: Path,
    spark: SparkSettings,
    port: int,
    *,
    extra_options: Mapping[str, str] | None = None,
    name: str = "gateway",
) -> ManagedProcess:
    """``sparkgate gateway start-foreground`` with the REST endpoint on ``port``.

    ``name`` keeps each gateway's data dir (and Derby metastore) apart.
    """
    root = work_dir / name
    options: dict[str, str] = {
        "sql-gateway.data-dir": str(root / "data"),
        "sql-gateway.endpoint.type": "rest",
        "sql-gateway.endpoint.rest.address": HOST,
        "sql-gateway.endpoint.rest.port": str(port),
        # Runs are interleaved across targets, so a session may sit idle for
        # minutes while the others fetch; Spark's Thrift server keeps idle
        # sessions for days, so the gateway must not expire them either.
        "sql-gateway.session.idle-timeout": "2 h",
        **spark.conf(),
    }
    declared = _rest_option_keys()
    if declared is not None and "bind-address" in declared:
        options["sql-gateway.endpoint.rest.bind-address"] = HOST
    options.update(extra_options or {})
    argv = [sys.executable, "-m", "sparkgate.cli", "gateway", "start-foreground"]
    argv += [f"-D{key}={value}" for key, value in options.items()]
    env = _base_env(work_dir)
    # Ignore the repository's conf/config.yaml: the benchmark sets what it needs.
    env["SPARKGATE_CONF_DIR"] = ""
    return ManagedProcess(
        "sparkgate gateway (REST)", argv, log_file=root / "console.log", cwd=root, env=env
    )


def http_responds(port: int, path: str = "/v4/info", timeout: float = 2.0) -> bool:
    """Whether an HTTP server on ``port`` answers ``GET path`` with a non-5xx status."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status < 500
    finally:
        conn.close()
