"""A real Apache Kafka broker for tests: a single KRaft node from Maven Central.

:func:`broker_jars` resolves ``org.apache.kafka:kafka_2.13`` (the version of the
``kafka-clients`` Spark's Kafka connector uses) and its dependencies once into the
tests' shared cache. The ``kafka`` fixture (session scope) runs the broker users
try the connectors with (``sparkgate.server.broker``, ``make kafka``) on free
loopback ports in a fresh temporary directory, waits until it answers a metadata
request, yields a :class:`KafkaBroker`, and stops it after. Records are produced
and consumed with ``confluent-kafka``.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sparkgate.server.broker import KAFKA_VERSION
from sparkgate.server.broker import broker_jars as jars_into
from sparkgate.server.broker import start_broker as run_broker
from tests.locks import cache_dir, exclusive

__all__ = ["KafkaBroker", "broker_jars", "kafka"]


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
    with exclusive(f"kafka-broker-{KAFKA_VERSION}"):
        return jars_into(cache_dir() / f"kafka-broker-{KAFKA_VERSION}")


def _answers(bootstrap: str) -> bool:
    from confluent_kafka.admin import AdminClient

    try:
        AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=2)
    except Exception:
        return False
    return True


@contextlib.contextmanager
def start_broker() -> Iterator[KafkaBroker]:
    """The product's try-out broker (``sparkgate.server.broker``) on free ports, in a
    temporary directory, ready once it answers a metadata request."""
    with run_broker(broker_jars(), ready=_answers) as broker:
        yield KafkaBroker(broker.bootstrap, broker.directory / "logs")


@pytest.fixture(scope="session")
def kafka() -> Iterator[KafkaBroker]:
    """A real Kafka broker for the whole run."""
    with start_broker() as broker:
        yield broker
