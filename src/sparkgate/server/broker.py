"""A single-node Apache Kafka broker on this machine, to try the Kafka connectors.

Kafka's own broker (``org.apache.kafka:kafka_2.13``, the version of the
``kafka-clients`` Spark's Kafka connector uses) and its dependencies are
resolved once from Maven Central with the Ivy resolver pyspark ships, into
``~/.sparkgate/packages/kafka-broker``; the broker runs in KRaft mode (broker
and controller in one JVM) on loopback, its log directories in a temporary
directory unless ``--directory`` keeps them.

    python -m sparkgate.server.broker [--port 9092]

runs it in the foreground until Ctrl-C (``make kafka``). A table then names it
with ``'properties.bootstrap.servers' = '127.0.0.1:9092'``.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from sparkgate.server.foreground import free_port, until_stopped
from sparkgate.service.spark.java import find_java
from sparkgate.service.spark.packages import MAVEN_CENTRAL, retrieve

__all__ = ["KAFKA_VERSION", "Broker", "broker_jars", "main", "start_broker"]

log = logging.getLogger(__name__)

KAFKA_VERSION = "3.9.2"
_HOST = "127.0.0.1"
_START_TIMEOUT_S = 90.0


@dataclass(frozen=True)
class Broker:
    """A running broker: ``bootstrap`` is its ``host:port``; ``directory`` holds its
    configuration, console log and log directories (``logs``)."""

    bootstrap: str
    directory: Path


def broker_jars(cache: Path) -> list[Path]:
    """The broker's class path, resolved into ``cache`` the first time."""
    ready = cache / ".ready"
    if not ready.exists():
        shutil.rmtree(cache, ignore_errors=True)
        coordinate = f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}"
        log.info("Resolving Kafka's broker (%s) into %s; this happens once", coordinate, cache)
        retrieve(coordinate, MAVEN_CENTRAL, cache.parent / "ivy", cache)
        ready.touch()
    return sorted(cache.glob("*.jar"))


def _accepts(bootstrap: str) -> bool:
    host, _, port = bootstrap.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=1):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def start_broker(
    jars: Sequence[Path],
    *,
    port: int | None = None,
    directory: Path | None = None,
    ready: Callable[[str], bool] = _accepts,
) -> Iterator[Broker]:
    """Run a KRaft broker until the block ends; ``ready`` says when it answers
    (by default: its port accepts connections)."""
    java = str(find_java().path)
    root = directory or Path(tempfile.mkdtemp(prefix="sparkgate-kafka-"))
    root.mkdir(parents=True, exist_ok=True)
    port = port or free_port(_HOST)
    controller = free_port(_HOST)
    properties = root / "server.properties"
    properties.write_text(
        "process.roles=broker,controller\n"
        "node.id=1\n"
        f"controller.quorum.voters=1@{_HOST}:{controller}\n"
        f"listeners=PLAINTEXT://{_HOST}:{port},CONTROLLER://{_HOST}:{controller}\n"
        f"advertised.listeners=PLAINTEXT://{_HOST}:{port}\n"
        "controller.listener.names=CONTROLLER\n"
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
        f"log.dirs={root / 'logs'}\n"
        "offsets.topic.replication.factor=1\n"
        "transaction.state.log.replication.factor=1\n"
        "transaction.state.log.min.isr=1\n"
        "group.initial.rebalance.delay.ms=0\n"
        "num.partitions=1\n"
    )
    classpath = os.pathsep.join(str(j) for j in jars)
    process: subprocess.Popen[bytes] | None = None
    try:
        if not (root / "logs" / "meta.properties").exists():
            cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
            # One argument: an id may start with "-", which would read as an option.
            format_args = [f"--cluster-id={cluster_id}", "-c", str(properties)]
            subprocess.run(
                [java, "-cp", classpath, "kafka.tools.StorageTool", "format", *format_args],
                check=True,
                capture_output=True,
                timeout=120,
            )
        with (root / "console.log").open("ab") as console:
            process = subprocess.Popen(
                [java, "-Xmx512m", "-cp", classpath, "kafka.Kafka", str(properties)],
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        bootstrap = f"{_HOST}:{port}"
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not ready(bootstrap):
            if process.poll() is not None:
                tail = (root / "console.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the Kafka broker exited: {tail}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Kafka broker did not start in {_START_TIMEOUT_S:.0f} s")
            time.sleep(0.5)
        yield Broker(bootstrap, root)
    finally:
        if process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if directory is None:
            shutil.rmtree(root, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sparkgate.server.broker",
        description="Run a single-node Kafka broker (KRaft) on 127.0.0.1 until Ctrl-C.",
    )
    parser.add_argument("--port", type=int, default=9092)
    parser.add_argument(
        "--directory", type=Path, help="keep its topics here (default: a temporary directory)"
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path.home() / ".sparkgate" / "packages" / "kafka-broker",
        help="where the broker's jars are resolved to",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    with start_broker(broker_jars(args.cache), port=args.port, directory=args.directory) as b:
        print(
            f"Kafka broker running: {b.bootstrap} (files in {b.directory}).\n"
            f"A table reads it with 'properties.bootstrap.servers' = '{b.bootstrap}'.\n"
            "Ctrl-C stops it.",
            flush=True,
        )
        until_stopped()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
