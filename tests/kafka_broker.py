"""A real Apache Kafka broker for tests: a single KRaft node from Maven Central.

:func:`broker_jars` resolves ``org.apache.kafka:kafka_2.13`` (the version of the
``kafka-clients`` Spark's Kafka connector uses) and its dependencies once, with
the Ivy resolver pyspark ships, into the tests' shared cache. The ``kafka``
fixture (session scope) formats a KRaft log directory in a fresh temporary
directory, starts ``kafka.Kafka`` as broker and controller on two free loopback
ports, waits until it answers a metadata request, yields a :class:`KafkaBroker`,
and stops it after. Records are produced and consumed with ``confluent-kafka``.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.locks import cache_dir, exclusive
from tests.processes import free_port

__all__ = ["KafkaBroker", "broker_jars", "kafka"]

KAFKA_VERSION = "3.9.2"
_START_TIMEOUT_S = 90


@dataclass(frozen=True)
class KafkaBroker:
    """A running broker: ``bootstrap`` is its ``host:port``."""

    bootstrap: str
    log_dir: Path

    def create_topic(self, topic: str, partitions: int = 1) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        futures = admin.create_topics([NewTopic(topic, partitions, 1)])
        futures[topic].result(timeout=30)

    def produce(
        self,
        topic: str,
        values: Sequence[bytes | str | None],
        keys: Sequence[bytes | str | None] | None = None,
        headers: Sequence[dict[str, bytes]] | None = None,
        partition: int | None = None,
    ) -> None:
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 0})
        for i, value in enumerate(values):
            kwargs: dict[str, Any] = {"value": value}
            if keys is not None:
                kwargs["key"] = keys[i]
            if headers is not None:
                kwargs["headers"] = list(headers[i].items())
            if partition is not None:
                kwargs["partition"] = partition
            producer.produce(topic, **kwargs)
        assert producer.flush(30) == 0, "records left unsent"

    def consume_all(self, topic: str, timeout: float = 60.0) -> list[Any]:
        """Every record of ``topic`` now: up to each partition's end offset."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "-"})
        try:
            partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
            ends = {
                p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
                for p in partitions
            }
        finally:
            consumer.close()
        return self.consume(topic, sum(ends.values()), timeout)

    def consume(self, topic: str, count: int, timeout: float = 60.0) -> list[Any]:
        """``count`` records of ``topic`` from its start (fails if fewer come)."""
        from confluent_kafka import Consumer

        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"test-{uuid.uuid4().hex}",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe([topic])
        records: list[Any] = []
        deadline = time.monotonic() + timeout
        try:
            while len(records) < count and time.monotonic() < deadline:
                message = consumer.poll(0.5)
                if message is None:
                    continue
                assert message.error() is None, message.error()
                records.append(message)
            # Nothing beyond: a short wait for a record too many.
            extra = consumer.poll(1.0)
            if extra is not None and extra.error() is None:
                records.append(extra)
        finally:
            consumer.close()
        return records


def broker_jars() -> list[Path]:
    """The broker's class path, resolved once into the tests' cache."""
    target = cache_dir() / f"kafka-broker-{KAFKA_VERSION}"
    with exclusive(f"kafka-broker-{KAFKA_VERSION}"):
        ready = target / ".ready"
        if ready.exists():
            return sorted(target.glob("*.jar"))
        shutil.rmtree(target, ignore_errors=True)
        from sparkgate.service.spark.packages import MAVEN_CENTRAL, retrieve

        coordinate = f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}"
        retrieve(coordinate, MAVEN_CENTRAL, cache_dir() / "ivy", target)
        ready.touch()
        return sorted(target.glob("*.jar"))


def _answers(bootstrap: str) -> bool:
    from confluent_kafka.admin import AdminClient

    try:
        AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=2)
    except Exception:
        return False
    return True


@contextlib.contextmanager
def start_broker() -> Iterator[KafkaBroker]:
    from sparkgate.service.spark.java import find_java

    java = str(find_java().path)
    classpath = os.pathsep.join(str(j) for j in broker_jars())
    root = Path(tempfile.mkdtemp(prefix="sparkgate-kafka-"))
    port, controller = free_port(), free_port()
    properties = root / "server.properties"
    properties.write_text(
        "process.roles=broker,controller\n"
        "node.id=1\n"
        f"controller.quorum.voters=1@127.0.0.1:{controller}\n"
        f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}\n"
        f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}\n"
        "controller.listener.names=CONTROLLER\n"
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
        f"log.dirs={root / 'logs'}\n"
        "offsets.topic.replication.factor=1\n"
        "transaction.state.log.replication.factor=1\n"
        "transaction.state.log.min.isr=1\n"
        "group.initial.rebalance.delay.ms=0\n"
        "num.partitions=1\n"
    )
    subprocess.run(
        [
            java,
            "-cp",
            classpath,
            "kafka.tools.StorageTool",
            "format",
            # One argument: an id may start with "-", which would read as an option.
            "--cluster-id=" + base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("="),
            "-c",
            str(properties),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    console = (root / "console.log").open("wb")
    process = subprocess.Popen(
        [java, "-Xmx512m", "-cp", classpath, "kafka.Kafka", str(properties)],
        stdout=console,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    bootstrap = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not _answers(bootstrap):
            assert process.poll() is None, (root / "console.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the Kafka broker did not start"
            time.sleep(0.5)
        yield KafkaBroker(bootstrap, root / "logs")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        console.close()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def kafka() -> Iterator[KafkaBroker]:
    """A real Kafka broker for the whole run."""
    with start_broker() as broker:
        yield broker
