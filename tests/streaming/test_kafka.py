"""Flink's ``kafka`` connector against a real Kafka broker (tests/kafka_broker.py).

Records are produced and consumed with confluent-kafka; the gateway reads and
writes them through Spark's Kafka source and sink, loaded into the shared
engine the first time a Kafka table is created.
"""

from __future__ import annotations

import json
import time
import uuid

import pytest

from sparkgate.api.errors import ExecutionError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.results import RowKind
from sparkgate.service.gateway import SparkGatewayService
from tests.kafka_broker import KafkaBroker

from .conftest import changes, name, run, wait_job


def _topic() -> str:
    return f"topic-{uuid.uuid4().hex[:8]}"


def _table(broker: KafkaBroker, topic: str, columns: str, **options: str) -> tuple[str, str]:
    table = name("kafka")
    opts = {
        "connector": "kafka",
        "topic": topic,
        "properties.bootstrap.servers": broker.bootstrap,
        "scan.startup.mode": "earliest-offset",
        "format": "json",
        **options,
    }
    with_clause = ", ".join(f"'{k}' = '{v}'" for k, v in opts.items())
    return table, f"CREATE TABLE {table} ({columns}) WITH ({with_clause})"


def _people(n: int) -> list[str]:
    return [json.dumps({"id": i, "name": f"n{i}", "score": i * 1.5}) for i in range(n)]


def test_a_batch_select_reads_exactly_the_records_with_their_metadata(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic()
    kafka.create_topic(topic)
    kafka.produce(topic, _people(25), headers=[{"h": f"v{i}".encode()} for i in range(25)])
    table, ddl = _table(
        kafka,
        topic,
        "id BIGINT, name STRING, score DOUBLE, "
        "`topic` STRING METADATA VIRTUAL, `partition` INT METADATA VIRTUAL, "
        "`offset` BIGINT METADATA VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', "
        "tt STRING METADATA FROM 'timestamp-type', hs MAP<STRING, BYTES> METADATA FROM 'headers'",
    )
    run(stream_service, session, ddl)
    rows = run(
        stream_service,
        session,
        f"SELECT id, name, score, `topic`, `partition`, `offset`, ts IS NOT NULL, tt, "
        f"CAST(hs['h'] AS STRING) FROM {table} ORDER BY id",
    )
    assert rows == [
        (i, f"n{i}", i * 1.5, topic, 0, i, True, "CreateTime", f"v{i}") for i in range(25)
    ]


def test_a_streaming_select_shows_the_records_as_inserts(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic()
    kafka.create_topic(topic)
    kafka.produce(topic, _people(10))
    table, ddl = _table(kafka, topic, "id BIGINT, name STRING, score DOUBLE")
    run(stream_service, session, ddl)
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    op = stream_service.execute_statement(session, f"SELECT id, name FROM {table}")
    produced = []

    def more_then_all(out: list[object]) -> bool:
        if len(out) >= 10 and not produced:
            # Records produced while the stream runs arrive too.
            kafka.produce(topic, _people(12)[10:])
            produced.append(True)
        return len(out) >= 12

    try:
        got = changes(stream_service, session, op, until=more_then_all)
    finally:
        stream_service.close_operation(session, op)
    assert all(kind is RowKind.INSERT for kind, _ in got)
    assert sorted(row for _, row in got) == [(i, f"n{i}") for i in range(12)]


def test_insert_writes_keyed_json_records_a_consumer_reads(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic()
    kafka.create_topic(topic, partitions=2)
    table, ddl = _table(
        kafka,
        topic,
        "id BIGINT, name STRING",
        **{"key.format": "json", "key.fields": "id", "value.fields-include": "EXCEPT_KEY"},
    )
    run(stream_service, session, ddl)
    run(
        stream_service,
        session,
        f"INSERT INTO {table} SELECT id, concat('n', id) FROM range(0, 40)",
    )
    records = kafka.consume(topic, 40)
    assert len(records) == 40
    got = sorted((json.loads(r.key())["id"], json.loads(r.value())) for r in records)
    assert got == [(i, {"name": f"n{i}"}) for i in range(40)]
    # And the table reads them back, key and value joined again.
    assert run(stream_service, session, f"SELECT count(*), sum(id) FROM {table}") == [
        (40, sum(range(40)))
    ]


def test_startup_and_bounded_modes_pick_the_records(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic()
    kafka.create_topic(topic)
    kafka.produce(topic, _people(5))
    time.sleep(0.05)
    middle = int(time.time() * 1000)
    time.sleep(0.05)
    kafka.produce(topic, _people(10)[5:])
    cases = {
        "latest-offset": ({"scan.startup.mode": "latest-offset"}, []),
        "timestamp": (
            {"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": str(middle)},
            list(range(5, 10)),
        ),
        "specific-offsets": (
            {
                "scan.startup.mode": "specific-offsets",
                "scan.startup.specific-offsets": "partition:0,offset:7",
            },
            [7, 8, 9],
        ),
        "bounded by offsets": (
            {
                "scan.bounded.mode": "specific-offsets",
                "scan.bounded.specific-offsets": "partition:0,offset:3",
            },
            [0, 1, 2],
        ),
        "bounded by time": (
            {"scan.bounded.mode": "timestamp", "scan.bounded.timestamp-millis": str(middle)},
            [0, 1, 2, 3, 4],
        ),
    }
    for label, (options, expected) in cases.items():
        table, ddl = _table(kafka, topic, "id BIGINT, name STRING, score DOUBLE", **options)
        run(stream_service, session, ddl)
        got = [r[0] for r in run(stream_service, session, f"SELECT id FROM {table} ORDER BY id")]
        assert got == expected, label


def test_raw_and_csv_formats(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic()
    kafka.create_topic(topic)
    kafka.produce(topic, ["1|a", "2|b"])
    raw, ddl = _table(kafka, topic, "line STRING", format="raw")
    run(stream_service, session, ddl)
    assert run(stream_service, session, f"SELECT line FROM {raw} ORDER BY line") == [
        ("1|a",),
        ("2|b",),
    ]
    csv, ddl = _table(
        kafka, topic, "id INT, tag STRING", format="csv", **{"csv.field-delimiter": "|"}
    )
    run(stream_service, session, ddl)
    assert run(stream_service, session, f"SELECT id, tag FROM {csv} ORDER BY id") == [
        (1, "a"),
        (2, "b"),
    ]


def test_a_record_that_does_not_parse_fails_or_is_skipped(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic()
    kafka.create_topic(topic)
    kafka.produce(topic, ['{"id": 1}', "not json", '{"id": 3}'])
    strict, ddl = _table(kafka, topic, "id BIGINT")
    run(stream_service, session, ddl)
    with pytest.raises(ExecutionError, match=r"(?i)malformed|parse"):
        run(stream_service, session, f"SELECT id FROM {strict}")
    lenient, ddl = _table(kafka, topic, "id BIGINT", **{"json.ignore-parse-errors": "true"})
    run(stream_service, session, ddl)
    rows = run(
        stream_service, session, f"SELECT id FROM {lenient} WHERE id IS NOT NULL ORDER BY id"
    )
    assert rows == [(1,), (3,)]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"topic": ""}, "requires the option 'topic' or 'topic-pattern'"),
        (
            {"properties.bootstrap.servers": None},
            "requires the option 'properties.bootstrap.servers'",
        ),
        ({"format": None}, "requires the option 'format' or 'value.format'"),
        ({"format": "protobuf"}, "Unsupported value format 'protobuf'"),
        ({"scan.startup.mode": "timestamp"}, "'scan.startup.timestamp-millis' is required"),
        (
            {"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "p0"},
            "should follow the format",
        ),
        ({"sink.delivery-guarantee": "exactly-once"}, "writes at least once"),
        ({"key.fields": "id"}, "'key.fields' needs 'key.format'"),
    ],
)
def test_a_bad_definition_is_refused_at_create_table(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    kafka: KafkaBroker,
    options: dict[str, str | None],
    message: str,
) -> None:
    table, _ = _table(kafka, "t", "id BIGINT")
    opts = {
        "connector": "kafka",
        "topic": "t",
        "properties.bootstrap.servers": kafka.bootstrap,
        "format": "json",
    }
    for key, value in options.items():
        if value is None:
            opts.pop(key)
        else:
            opts[key] = value
    with_clause = ", ".join(f"'{k}' = '{v}'" for k, v in opts.items())
    with pytest.raises(ExecutionError, match=message):
        run(stream_service, session, f"CREATE TABLE {table} (id BIGINT) WITH ({with_clause})")
    assert not [r for r in run(stream_service, session, "SHOW TABLES") if r[-1] == table]


def test_a_streaming_insert_is_a_job_writing_every_row_and_a_changelog_is_refused(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic()
    kafka.create_topic(topic)
    source = name("gen")
    run(
        stream_service,
        session,
        f"CREATE TABLE {source} (id BIGINT) WITH ('connector' = 'datagen', "
        "'number-of-rows' = '30', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
        "'fields.id.end' = '30')",
    )
    sink, ddl = _table(kafka, topic, "id BIGINT, doubled BIGINT")
    run(stream_service, session, ddl)
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    [(job_id,)] = run(
        stream_service, session, f"INSERT INTO {sink} SELECT id, id * 2 FROM {source}"
    )
    wait_job(stream_service, session, str(job_id))
    records = kafka.consume(topic, 30)
    assert sorted(json.loads(r.value())["id"] for r in records) == list(range(1, 31))
    # Kafka's sink appends: an updating query is refused as it starts.
    with pytest.raises(
        ExecutionError, match=r"output mode: append\. This output mode is not supported"
    ):
        run(
            stream_service,
            session,
            f"INSERT INTO {sink} SELECT id % 3, count(*) FROM {source} GROUP BY id % 3",
        )
