"""A Spark standalone cluster on this machine, made of the pyspark package's own classes.

A master and N workers on loopback, each a JVM started with pyspark's
``bin/spark-class`` (``org.apache.spark.deploy.master.Master``,
``org.apache.spark.deploy.worker.Worker``): the set-up of a real cluster, in
small, to try the gateway against executors in other JVMs. A gateway uses it
with ``-Dspark.master=spark://127.0.0.1:<port>``.

    python -m sparkgate.server.cluster [--workers 2] [--port 7077]

runs it in the foreground until Ctrl-C (``make cluster``). Executors run the
Python of this process (``PYSPARK_PYTHON``), so they have pyarrow.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from sparkgate.server.foreground import free_port, until_stopped
from sparkgate.service.spark.java import spark_home

__all__ = ["LocalCluster", "main"]

log = logging.getLogger(__name__)

_HOST = "127.0.0.1"
_START_TIMEOUT_S = 120.0


def _spark_class() -> Path:
    script = spark_home() / "bin" / "spark-class"
    if not script.exists():
        raise FileNotFoundError(f"pyspark has no {script}; reinstall pyspark")
    return script


class LocalCluster:
    """A standalone master and ``workers`` workers (``cores`` and ``memory`` each).

    Use as a context manager, or :meth:`start` and :meth:`stop`. Their logs and
    work directories go under ``directory`` (a temporary one unless given).
    """

    def __init__(
        self,
        workers: int = 2,
        *,
        cores: int = 1,
        memory: str = "1g",
        port: int = 0,
        webui_port: int = 0,
        directory: Path | None = None,
    ) -> None:
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.port = port or free_port(_HOST)
        self.webui_port = webui_port or free_port(_HOST)
        self._own_directory = directory is None
        self.directory = directory or Path(tempfile.mkdtemp(prefix="sparkgate-cluster-"))
        self._processes: list[subprocess.Popen[bytes]] = []

    @property
    def master_url(self) -> str:
        return f"spark://{_HOST}:{self.port}"

    @property
    def webui_url(self) -> str:
        return f"http://{_HOST}:{self.webui_port}"

    def _start(self, name: str, *args: str) -> None:
        env = {
            **os.environ,
            "SPARK_LOCAL_IP": _HOST,
            "SPARK_LOG_DIR": str(self.directory / "logs"),
            "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
            # The pyspark package is the Spark home: its jars, its scripts.
            "SPARK_HOME": str(_spark_class().parent.parent),
        }
        env.pop("SPARK_CONF_DIR", None)
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / f"{name}.log", "ab") as out:
            self._processes.append(
                subprocess.Popen(
                    [str(_spark_class()), *args],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    start_new_session=True,
                )
            )

    def start(self) -> LocalCluster:
        """Start the master, then the workers; return once every worker is ALIVE."""
        self._start(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host",
            _HOST,
            "--port",
            str(self.port),
            "--webui-port",
            str(self.webui_port),
        )
        for index in range(self.workers):
            work = self.directory / f"worker-{index}"
            work.mkdir(parents=True, exist_ok=True)
            self._start(
                f"worker-{index}",
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                _HOST,
                "--cores",
                str(self.cores),
                "--memory",
                self.memory,
                "--webui-port",
                str(free_port(_HOST)),
                "--work-dir",
                str(work),
                self.master_url,
            )
        self._wait_alive()
        log.info("Spark standalone cluster at %s (%d workers)", self.master_url, self.workers)
        return self

    def alive_workers(self) -> int:
        """Workers the master lists ALIVE (0 while it does not answer)."""
        try:
            with urllib.request.urlopen(f"{self.webui_url}/json/", timeout=2) as response:
                state = json.loads(response.read())
        except (OSError, ValueError):
            return 0
        return int(state.get("aliveworkers") or 0)

    def _wait_alive(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while self.alive_workers() < self.workers:
            for process in self._processes:
                if process.poll() is not None:
                    self.stop()
                    raise RuntimeError(
                        f"A Spark cluster process ended during start-up; see {self.directory}"
                    )
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"The Spark cluster did not start; see {self.directory}")
            time.sleep(0.25)

    def stop(self) -> None:
        """Stop the workers (and their executors), then the master."""
        for process in reversed(self._processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self._processes):
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        self._processes = []
        if self._own_directory:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sparkgate.server.cluster",
        description="Run a Spark standalone cluster (a master and workers) on 127.0.0.1.",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cores", type=int, default=1, help="cores of each worker")
    parser.add_argument("--memory", default="1g", help="memory of each worker")
    parser.add_argument("--port", type=int, default=7077, help="the master's port")
    parser.add_argument("--webui-port", type=int, default=8080, help="the master's web UI")
    parser.add_argument("--directory", type=Path, help="logs and work directories")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    cluster = LocalCluster(
        args.workers,
        cores=args.cores,
        memory=args.memory,
        port=args.port,
        webui_port=args.webui_port,
        directory=args.directory,
    )
    cluster.start()
    print(
        f"Spark standalone cluster running: {cluster.master_url} (web UI {cluster.webui_url}).\n"
        f"Start a gateway on it: make run ARGS=-Dspark.master={cluster.master_url}\n"
        "Ctrl-C stops it.",
        flush=True,
    )
    try:
        until_stopped()
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
