"""Flink's ``kafka`` connector against a real Kafka broker (tests/kafka_broker.py).

Records are produced and consumed with confluent-kafka; the gateway reads and
writes them through Spark's Kafka source and sink, loaded into the shared
engine the first time a Kafka table is created.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sparkgate.api.errors import ExecutionError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.results import RowKind
from sparkgate.service.gateway import SparkGatewayService
from tests.kafka_broker import KafkaBroker
from tests.processes import free_port

from .conftest import changes, name, run, wait_for, wait_job


def _topic(broker: KafkaBroker | None = None, partitions: int = 1) -> str:
    """A new topic's name; created on ``broker`` when given."""
    topic = f"topic-{uuid.uuid4().hex[:8]}"
    if broker is not None:
        broker.create_topic(topic, partitions)
    return topic


# Each connector's options a test table has unless the test says otherwise.
_DEFAULTS = {
    "kafka": {"scan.startup.mode": "earliest-offset", "format": "json"},
    "upsert-kafka": {"key.format": "json", "value.format": "json"},
}


def _table(
    broker: KafkaBroker,
    topic_name: str,
    columns: str,
    connector: str = "kafka",
    **options: str | None,
) -> tuple[str, str]:
    """A new table's name and its DDL; an option given as None is left out
    (``topic`` too: ``topic=None``)."""
    table = name(connector.replace("-", "_"))
    opts: dict[str, str | None] = {
        "connector": connector,
        "topic": topic_name,
        "properties.bootstrap.servers": broker.bootstrap,
        **_DEFAULTS[connector],
        **options,
    }
    with_clause = ", ".join(f"'{k}' = '{v}'" for k, v in opts.items() if v is not None)
    return table, f"CREATE TABLE {table} ({columns}) WITH ({with_clause})"


def _people(n: int) -> list[str]:
    return [json.dumps({"id": i, "name": f"n{i}", "score": i * 1.5}) for i in range(n)]


def test_a_batch_select_reads_exactly_the_records_with_their_metadata(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic(kafka)
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
    topic = _topic(kafka)
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
    topic = _topic(kafka, partitions=2)
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
    topic = _topic(kafka)
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
    topic = _topic(kafka)
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
    topic = _topic(kafka)
    kafka.produce(topic, ['{"id": 1}', "not json", '{"id": 3}'])
    strict, ddl = _table(kafka, topic, "id BIGINT")
    run(stream_service, session, ddl)
    with pytest.raises(
        ExecutionError,
        match=rf"Failed to deserialize JSON record at topic {topic}, partition 0, offset 1: "
        "not json",
    ):
        run(stream_service, session, f"SELECT id FROM {strict}")
    lenient, ddl = _table(kafka, topic, "id BIGINT", **{"json.ignore-parse-errors": "true"})
    run(stream_service, session, ddl)
    rows = run(
        stream_service, session, f"SELECT id FROM {lenient} WHERE id IS NOT NULL ORDER BY id"
    )
    assert rows == [(1,), (3,)]
    # A field the record lacks is NULL, unless json.fail-on-missing-field says otherwise.
    fields = _topic(kafka)
    kafka.produce(fields, ['{"id": 1, "name": "a"}', '{"id": 2}'])
    lax, ddl = _table(kafka, fields, "id BIGINT, name STRING")
    run(stream_service, session, ddl)
    assert run(stream_service, session, f"SELECT id, name FROM {lax} ORDER BY id") == [
        (1, "a"),
        (2, None),
    ]
    exact, ddl = _table(
        kafka, fields, "id BIGINT, name STRING", **{"json.fail-on-missing-field": "true"}
    )
    run(stream_service, session, ddl)
    with pytest.raises(ExecutionError, match="offset 1: Could not find field with name name"):
        run(stream_service, session, f"SELECT id, name FROM {exact}")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"topic": None}, "requires the option 'topic' or 'topic-pattern'"),
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
    table, ddl = _table(kafka, "t", "id BIGINT", **options)
    with pytest.raises(ExecutionError, match=message):
        run(stream_service, session, ddl)
    assert not [r for r in run(stream_service, session, "SHOW TABLES") if r[-1] == table]


def test_a_streaming_insert_is_a_job_writing_every_row_and_a_changelog_is_refused(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic(kafka)
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


# -- upsert-kafka --------------------------------------------------------------------


def test_upsert_kafka_reads_a_changelog_and_a_tombstone_deletes(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    kafka: KafkaBroker,
    tmp_path: Path,
) -> None:
    topic = _topic(kafka)
    keys = [json.dumps({"k": k}) for k in ("a", "b", "a", "b", "c")]
    values = [
        json.dumps({"k": "a", "v": 1}),
        json.dumps({"k": "b", "v": 2}),
        json.dumps({"k": "a", "v": 3}),
        None,  # a tombstone: b is gone
        json.dumps({"k": "c", "v": 5}),
    ]
    kafka.produce(topic, values, keys=keys)
    table, ddl = _table(
        kafka, topic, "k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED", "upsert-kafka"
    )
    run(stream_service, session, ddl)
    # Batch: the table as it is now, each key's last row.
    assert run(stream_service, session, f"SELECT k, v FROM {table} ORDER BY k") == [
        ("a", 3),
        ("c", 5),
    ]
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    op = stream_service.execute_statement(session, f"SELECT * FROM {table}")
    try:
        got = changes(stream_service, session, op, until=lambda out: len(out) >= 6)
    finally:
        stream_service.close_operation(session, op)
    per_key = {key: [(kind, row) for kind, row in got if row[0] == key] for key in ("a", "b", "c")}
    assert per_key == {
        "a": [
            (RowKind.INSERT, ("a", 1)),
            (RowKind.UPDATE_BEFORE, ("a", 1)),
            (RowKind.UPDATE_AFTER, ("a", 3)),
        ],
        "b": [(RowKind.INSERT, ("b", 2)), (RowKind.DELETE, ("b", 2))],
        "c": [(RowKind.INSERT, ("c", 5))],
    }
    # Only SELECT * keeps each row's kind in a streaming query over it.
    with pytest.raises(ExecutionError, match="keeps every row's kind only as"):
        run(stream_service, session, f"SELECT v FROM {table}")
    # The changelog into another upsert-kafka table: upserts, and the tombstone.
    copy_topic = _topic(kafka)
    copy, ddl = _table(
        kafka, copy_topic, "k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED", "upsert-kafka"
    )
    run(stream_service, session, ddl)
    [(job_id,)] = run(stream_service, session, f"INSERT INTO {copy} SELECT * FROM {table}")
    try:
        records = kafka.consume(copy_topic, 5)
    finally:
        run(stream_service, session, f"STOP JOB '{job_id}'")
    written = [
        (json.loads(r.key())["k"], None if r.value() is None else json.loads(r.value())["v"])
        for r in records
    ]
    assert {k: [v for key, v in written if key == k] for k in "abc"} == {
        "a": [1, 3],
        "b": [2, None],
        "c": [5],
    }
    # A sink that only appends cannot take the changes.
    files = name("files")
    run(
        stream_service,
        session,
        f"CREATE TABLE {files} (k STRING, v INT) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'files'}', 'format' = 'json')",
    )
    with pytest.raises(ExecutionError, match="doesn't support consuming update and delete"):
        run(stream_service, session, f"INSERT INTO {files} SELECT * FROM {table}")


def test_a_streaming_group_by_into_upsert_kafka_leaves_the_batch_truth_per_key(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic(kafka, partitions=2)
    source = name("gen")
    run(
        stream_service,
        session,
        f"CREATE TABLE {source} (id BIGINT) WITH ('connector' = 'datagen', "
        "'number-of-rows' = '60', 'rows-per-second' = '20', 'fields.id.kind' = 'sequence', "
        "'fields.id.start' = '1', 'fields.id.end' = '60')",
    )
    sink, ddl = _table(
        kafka,
        topic,
        "bucket BIGINT, n BIGINT, total BIGINT, PRIMARY KEY (bucket) NOT ENFORCED",
        "upsert-kafka",
        **{"value.fields-include": "EXCEPT_KEY"},
    )
    run(stream_service, session, ddl)
    truth: dict[int, tuple[int, int]] = {}
    for i in range(1, 61):
        n, t = truth.get(i % 5, (0, 0))
        truth[i % 5] = (n + 1, t + i)
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    [(job_id,)] = run(
        stream_service,
        session,
        f"INSERT INTO {sink} SELECT id % 5, count(*), sum(id) FROM {source} GROUP BY id % 5",
    )
    wait_job(stream_service, session, str(job_id))
    records = kafka.consume_all(topic)
    last: dict[int, dict[str, int]] = {}
    for record in sorted(records, key=lambda r: (r.partition(), r.offset())):
        last[json.loads(record.key())["bucket"]] = json.loads(record.value())
    assert {k: (v["n"], v["total"]) for k, v in last.items()} == truth
    run(stream_service, session, "SET 'execution.runtime-mode' = 'batch'")
    assert sorted(run(stream_service, session, f"SELECT * FROM {sink}")) == sorted(
        (k, n, t) for k, (n, t) in truth.items()
    )


@pytest.mark.parametrize(
    ("columns", "options", "message"),
    [
        ("k STRING, v INT", {}, "require to define a PRIMARY KEY constraint"),
        (
            "k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED",
            {"key.format": None},
            "Missing required options are:\n\nkey.format",
        ),
        (
            "k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED",
            {"scan.startup.mode": "earliest-offset"},
            "Unsupported option 'scan.startup.mode' for connector 'upsert-kafka'",
        ),
    ],
)
def test_a_bad_upsert_kafka_definition_is_refused_at_create_table(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    kafka: KafkaBroker,
    columns: str,
    options: dict[str, str | None],
    message: str,
) -> None:
    _, ddl = _table(kafka, "t", columns, "upsert-kafka", **options)
    with pytest.raises(ExecutionError, match=message):
        run(stream_service, session, ddl)


def test_unreachable_bootstrap_servers_fail_within_seconds_and_harm_nothing(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    port = free_port()  # nothing listens there
    table, ddl = _table(
        kafka, "t", "id BIGINT", **{"properties.bootstrap.servers": f"127.0.0.1:{port}"}
    )
    run(stream_service, session, ddl)
    # Refused by the gateway's probe, not after Kafka's client's minutes of retries.
    with pytest.raises(ExecutionError, match=rf"127\.0\.0\.1:{port}.*refused"):
        run(stream_service, session, f"SELECT * FROM {table}")
    with pytest.raises(ExecutionError, match="can be reached"):
        run(stream_service, session, f"INSERT INTO {table} VALUES (1)")
    assert run(stream_service, session, "SELECT 1") == [(1,)]


def test_a_missing_topic_is_flinks_metadata_error(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    missing = _topic()
    table, ddl = _table(kafka, missing, "id BIGINT")
    run(stream_service, session, ddl)
    with pytest.raises(ExecutionError, match=rf"Failed to get metadata for topics \[{missing}\]"):
        run(stream_service, session, f"SELECT * FROM {table}")


def test_show_create_table_prints_the_ddl_with_the_jaas_config_masked(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    jaas = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="u" password="pw-9x7q"'
    )
    table, ddl = _table(
        kafka,
        "t",
        "id BIGINT, ts TIMESTAMP(3) METADATA FROM 'timestamp', WATERMARK FOR ts AS ts",
        **{"properties.sasl.jaas.config": jaas},
    )
    run(stream_service, session, ddl)
    [(text,)] = run(stream_service, session, f"SHOW CREATE TABLE {table}")
    assert "pw-9x7q" not in text
    assert "'properties.sasl.jaas.config' = '****'" in text
    assert "`ts` TIMESTAMP(3) METADATA FROM 'timestamp'" in text
    assert "'connector' = 'kafka'" in text


def test_fixed_partitioner_and_csv_writes_with_quote_and_null_literal(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic(kafka, partitions=3)
    table, ddl = _table(
        kafka,
        topic,
        "id INT, tag STRING",
        format="csv",
        **{
            "sink.partitioner": "fixed",
            "csv.quote-character": "'",
            "csv.null-literal": "N/A",
            "csv.field-delimiter": ";",
        },
    )
    run(stream_service, session, ddl.replace("'''", "''''"))
    # One writing task (a single-partition frame): every record in one partition.
    run(
        stream_service,
        session,
        f"INSERT INTO {table} SELECT /*+ COALESCE(1) */ id, "
        "CASE WHEN id = 2 THEN NULL ELSE concat('a;', id) END FROM range(0, 6) AS r(id)",
    )
    records = kafka.consume(topic, 6)
    assert len({r.partition() for r in records}) == 1
    values = sorted(r.value().decode() for r in records)
    assert "2;N/A" in values
    assert "1;'a;1'" in values
    # And read back through the same options.
    assert run(stream_service, session, f"SELECT id, tag FROM {table} ORDER BY id") == [
        (i, None if i == 2 else f"a;{i}") for i in range(6)
    ]


def test_stop_with_savepoint_then_resume_continues_at_the_exact_offsets(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    source_topic, sink_topic = _topic(), _topic()
    kafka.create_topic(source_topic, partitions=2)
    kafka.create_topic(sink_topic)
    kafka.produce(source_topic, [json.dumps({"id": i}) for i in range(20)])
    source, ddl = _table(kafka, source_topic, "id BIGINT")
    run(stream_service, session, ddl)
    sink, ddl = _table(kafka, sink_topic, "id BIGINT")
    run(stream_service, session, ddl)
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    insert = f"INSERT INTO {sink} SELECT id FROM {source}"
    [(first,)] = run(stream_service, session, insert)
    assert len(kafka.consume(sink_topic, 20)) == 20
    [(savepoint,)] = run(stream_service, session, f"STOP JOB '{first}' WITH SAVEPOINT")
    # Records arriving while no job runs are read by the resumed job, from where
    # the first one stopped: the source's offsets are in the savepoint.
    kafka.produce(source_topic, [json.dumps({"id": i}) for i in range(20, 35)])
    run(stream_service, session, f"SET 'execution.savepoint.path' = '{savepoint}'")
    [(resumed,)] = run(stream_service, session, insert)
    try:
        records = kafka.consume(sink_topic, 35)
    finally:
        run(stream_service, session, f"STOP JOB '{resumed}'")
    ids = sorted(json.loads(r.value())["id"] for r in records)
    # At least once, and a stop with a savepoint ends on a finished micro-batch:
    # no record lost and none written twice.
    assert ids == list(range(35))


def test_a_stream_from_kafka_reaches_the_batch_truth_in_files_and_a_materialized_table(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    kafka: KafkaBroker,
    tmp_path: Path,
) -> None:
    topic = _topic(kafka, partitions=2)
    kafka.produce(topic, _people(30))
    source, ddl = _table(kafka, topic, "id BIGINT, name STRING, score DOUBLE")
    run(stream_service, session, ddl)
    files = name("files")
    run(
        stream_service,
        session,
        f"CREATE TABLE {files} (id BIGINT, name STRING) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'files'}', 'format' = 'parquet')",
    )
    mt = name("mt")
    run(
        stream_service,
        session,
        f"CREATE MATERIALIZED TABLE {mt} (PRIMARY KEY (bucket) NOT ENFORCED) "
        f"FRESHNESS = INTERVAL '1' SECOND AS SELECT id % 4 AS bucket, count(*) AS n, "
        f"sum(score) AS total FROM {source} GROUP BY id % 4",
    )
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    [(job_id,)] = run(stream_service, session, f"INSERT INTO {files} SELECT id, name FROM {source}")
    kafka.produce(topic, _people(45)[30:])  # and records arriving while they run

    def batch(query: str) -> list[tuple[object, ...]]:
        run(stream_service, session, "SET 'execution.runtime-mode' = 'batch'")
        try:
            return sorted(run(stream_service, session, query))
        finally:
            run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")

    try:
        want = [(i, f"n{i}") for i in range(45)]
        assert wait_for(lambda: batch(f"SELECT * FROM {files}") == want, 90)
        truth = [(b, len(range(b, 45, 4)), sum(i * 1.5 for i in range(b, 45, 4))) for b in range(4)]
        assert wait_for(lambda: batch(f"SELECT * FROM {mt}") == truth, 90)
        assert batch(f"SELECT id % 4, count(*), sum(score) FROM {source} GROUP BY id % 4") == truth
    finally:
        run(stream_service, session, f"STOP JOB '{job_id}'")
        run(stream_service, session, f"DROP MATERIALIZED TABLE {mt}")


def _zigzag(n: int) -> bytes:
    """Avro's long: zig-zag, then base-128 varint."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        byte = z & 0x7F
        z >>= 7
        if z:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _avro_record(id_: int, name: str | None) -> bytes:
    """Flink's avro layout of (id BIGINT NOT NULL, name STRING): a nullable field is
    the union ["null", type], so its branch index comes first."""
    if name is None:
        return _zigzag(id_) + _zigzag(0)
    text = name.encode()
    return _zigzag(id_) + _zigzag(1) + _zigzag(len(text)) + text


def test_avro_values_in_flinks_layout_are_read_and_written(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic(kafka)
    kafka.produce(topic, [_avro_record(1, "one"), _avro_record(2, None)])
    table, ddl = _table(kafka, topic, "id BIGINT NOT NULL, name STRING", format="avro")
    run(stream_service, session, ddl)
    assert run(stream_service, session, f"SELECT id, name FROM {table} ORDER BY id") == [
        (1, "one"),
        (2, None),
    ]
    run(stream_service, session, f"INSERT INTO {table} VALUES (3, 'three'), (-4, NULL)")
    written = {r.value() for r in kafka.consume(topic, 4)[2:]}
    assert written == {_avro_record(3, "three"), _avro_record(-4, None)}
    # Decimals and timestamps through Avro's logical types, keyed by an Avro key.
    typed_topic = _topic(kafka)
    typed, ddl = _table(
        kafka,
        typed_topic,
        "k INT, amount DECIMAL(10, 2), at TIMESTAMP(3), day DATE, PRIMARY KEY (k) NOT ENFORCED",
        "upsert-kafka",
        **{"key.format": "avro", "value.format": "avro"},
    )
    run(stream_service, session, ddl)
    for values in (
        "(1, 12.34, TIMESTAMP '2024-01-02 03:04:05.678', DATE '2024-01-02')",
        "(1, 56.78, TIMESTAMP '2024-02-03 04:05:06.789', DATE '2024-02-03')",
    ):
        run(stream_service, session, f"INSERT INTO {typed} VALUES {values}")
    rows = run(
        stream_service,
        session,
        f"SELECT k, CAST(amount AS STRING), CAST(at AS STRING), CAST(day AS STRING) FROM {typed}",
    )
    assert rows == [(1, "56.78", "2024-02-03 04:05:06.789", "2024-02-03")]


# Flink's avro layout of nested types, written out by hand (Avro's binary rules):
# a nullable value is the union ["null", type] (branch 0: null, 1: the value), an
# array or a map its items in one block (count, items) ended by an empty block, a
# ROW its fields in order.
def _avro_string(text: str) -> bytes:
    data = text.encode()
    return _zigzag(len(data)) + data


def _avro_nullable(value: Any, encode: Callable[[Any], bytes]) -> bytes:
    return _zigzag(0) if value is None else _zigzag(1) + encode(value)


def _avro_block(items: list[bytes]) -> bytes:
    return (_zigzag(len(items)) + b"".join(items) if items else b"") + _zigzag(0)


def _avro_decimal(value: Decimal, scale: int) -> bytes:
    """A decimal's unscaled value as the shortest two's-complement bytes."""
    unscaled = int(value.scaleb(scale))
    data = unscaled.to_bytes(
        (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1, "big", signed=True
    )
    return _zigzag(len(data)) + data


_EPOCH = datetime(1970, 1, 1)

Owner = tuple[str | None, date | None, datetime | None]
Item = tuple[str | None, Decimal | None]


def _avro_owner(owner: Owner) -> bytes:
    """ROW<name STRING, born DATE, at TIMESTAMP(3)>: a date as days, a timestamp
    as milliseconds since the epoch (Flink's legacy timestamp-millis, zone-less)."""
    name, born, at = owner
    return (
        _avro_nullable(name, _avro_string)
        + _avro_nullable(born, lambda d: _zigzag((d - _EPOCH.date()).days))
        + _avro_nullable(at, lambda t: _zigzag((t - _EPOCH) // timedelta(milliseconds=1)))
    )


def _avro_nested(
    id_: int,
    tags: list[str | None] | None,
    scores: dict[str, int | None] | None,
    owner: Owner | None,
    items: list[Item | None] | None,
) -> bytes:
    """Flink's avro layout of (id BIGINT NOT NULL, tags ARRAY<STRING>, scores
    MAP<STRING, INT>, owner ROW<...> (:func:`_avro_owner`), items ARRAY<ROW<sku
    STRING, price DECIMAL(10, 2)>>)."""

    def item(row: Item) -> bytes:
        sku, price = row
        return _avro_nullable(sku, _avro_string) + _avro_nullable(
            price, lambda p: _avro_decimal(p, 2)
        )

    def tag(value: str | None) -> bytes:
        return _avro_nullable(value, _avro_string)

    def score(entry: tuple[str, int | None]) -> bytes:
        return _avro_string(entry[0]) + _avro_nullable(entry[1], _zigzag)

    return (
        _zigzag(id_)
        + _avro_nullable(tags, lambda ts: _avro_block([tag(t) for t in ts]))
        + _avro_nullable(scores, lambda m: _avro_block([score(e) for e in m.items()]))
        + _avro_nullable(owner, _avro_owner)
        + _avro_nullable(items, lambda rows: _avro_block([_avro_nullable(r, item) for r in rows]))
    )


_NESTED_COLUMNS = (
    "id BIGINT NOT NULL, tags ARRAY<STRING>, scores MAP<STRING, INT>, "
    "owner ROW<name STRING, born DATE, at TIMESTAMP(3)>, "
    "items ARRAY<ROW<sku STRING, price DECIMAL(10, 2)>>"
)


def test_avro_arrays_maps_and_rows_in_flinks_layout_are_read_and_written(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    # Flink's TIMESTAMP is zone-less: read and shown in UTC it is what Flink wrote.
    run(stream_service, session, "SET 'table.local-time-zone' = 'UTC'")
    at = datetime(2024, 1, 2, 3, 4, 5, 678000)
    records = {
        1: (
            ["a", None, "c"],
            {"x": 1},
            ("ann", date(2024, 1, 2), at),
            [("s1", Decimal("12.34")), None, ("s2", Decimal("-0.50"))],
        ),
        2: (None, None, None, None),
        3: ([], {}, (None, None, None), []),
        4: (["d"], {"y": None}, ("bob", None, None), [("s3", None)]),
        # Read only: a map's entries are written in a hash map's order.
        5: (None, {"p": 1, "q": 2}, None, None),
    }
    topic = _topic(kafka)
    kafka.produce(topic, [_avro_nested(i, *values) for i, values in records.items()])
    table, ddl = _table(kafka, topic, _NESTED_COLUMNS, format="avro")
    run(stream_service, session, ddl)
    utc = at.replace(tzinfo=timezone.utc)
    nobody = {"name": None, "born": None, "at": None}
    rows = run(stream_service, session, f"SELECT * FROM {table} ORDER BY id")
    # A map comes as its entries, in no particular order (Avro reads a hash map).
    shown = [
        (i, tags, scores if scores is None else dict(scores), *rest)
        for i, tags, scores, *rest in rows
    ]
    assert shown == [
        (
            1,
            ["a", None, "c"],
            {"x": 1},
            {"name": "ann", "born": date(2024, 1, 2), "at": utc},
            [
                {"sku": "s1", "price": Decimal("12.34")},
                None,
                {"sku": "s2", "price": Decimal("-0.50")},
            ],
        ),
        (2, None, None, None, None),
        (3, [], {}, nobody, []),
        (4, ["d"], {"y": None}, {**nobody, "name": "bob"}, [{"sku": "s3", "price": None}]),
        (5, None, {"p": 1, "q": 2}, None, None),
    ]
    # Written back, with the owner as an Avro key too: the bytes Flink writes.
    out_topic = _topic(kafka)
    out, ddl = _table(
        kafka,
        out_topic,
        _NESTED_COLUMNS,
        format="avro",
        **{"key.format": "avro", "key.fields": "owner"},
    )
    run(stream_service, session, ddl)
    run(stream_service, session, f"INSERT INTO {out} SELECT * FROM {table} WHERE id < 5")
    written = {(r.key(), r.value()) for r in kafka.consume(out_topic, 4)}
    assert written == {
        (_avro_nullable(values[2], _avro_owner), _avro_nested(i, *values))
        for i, values in records.items()
        if i < 5
    }


def test_persisted_metadata_columns_are_written_and_virtual_ones_only_read(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    topic = _topic(kafka)
    table, ddl = _table(
        kafka,
        topic,
        "id BIGINT, hs MAP<STRING, BYTES> METADATA FROM 'headers', "
        "ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL, "
        "epoch INT METADATA FROM 'leader-epoch' VIRTUAL",
    )
    run(stream_service, session, ddl)
    # An INSERT gives the headers (persisted), not the virtual columns.
    run(
        stream_service,
        session,
        f"INSERT INTO {table} SELECT id, map('trace', CAST(concat('t', id) AS BINARY)) "
        "FROM range(0, 3) AS r(id)",
    )
    records = kafka.consume(topic, 3)
    assert sorted((r.headers() or [])[0][1] for r in records) == [b"t0", b"t1", b"t2"]
    rows = run(
        stream_service,
        session,
        f"SELECT id, CAST(hs['trace'] AS STRING), ts IS NOT NULL, epoch FROM {table} ORDER BY id",
    )
    assert rows == [(i, f"t{i}", True, None) for i in range(3)]
    [(text,)] = run(stream_service, session, f"SHOW CREATE TABLE {table}")
    assert "`ts` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL" in text
    assert "METADATA FROM 'headers',\n" in text  # persisted: no VIRTUAL
    # A persisted timestamp cannot be written by Spark's sink: refused, naming why.
    stamped, ddl = _table(kafka, topic, "id BIGINT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'")
    run(stream_service, session, ddl)
    assert len(run(stream_service, session, f"SELECT id, ts FROM {stamped}")) == 3
    with pytest.raises(ExecutionError, match="declare it METADATA FROM 'timestamp' VIRTUAL"):
        run(
            stream_service,
            session,
            f"INSERT INTO {stamped} VALUES (9, TIMESTAMP '2024-01-01 00:00:00')",
        )


def test_the_readmes_kafka_example_runs_as_written(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker
) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("### Kafka", 1)[1]
    block = section.split("```sql\n", 1)[1].split("```", 1)[0]
    lines = [line.split("--")[0].rstrip() for line in block.splitlines()]
    statements = [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
    assert len(statements) == 6
    jobs = []
    for statement in statements:
        rows = run(stream_service, session, statement.replace("127.0.0.1:9092", kafka.bootstrap))
        if statement.startswith("SELECT"):
            assert [r[:2] for r in rows] == [(1, Decimal("9.99"))]
        if statement.startswith("INSERT INTO totals"):
            jobs.append(str(rows[0][0]))

    def totals() -> list[tuple[object, ...]]:
        try:
            return run(stream_service, session, "SELECT * FROM totals")
        except ExecutionError:  # no topic before the job's first write creates it
            return []

    try:
        run(stream_service, session, "SET 'execution.runtime-mode' = 'batch'")
        assert wait_for(lambda: totals() == [(1, Decimal("9.99"))], 60)
    finally:
        for job in jobs:
            run(stream_service, session, f"STOP JOB '{job}'")


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_a_statement_set_writes_two_kafka_tables_in_one_job(
    stream_service: SparkGatewayService, session: SessionHandle, kafka: KafkaBroker, mode: str
) -> None:
    source = name("gen")
    run(
        stream_service,
        session,
        f"CREATE TABLE {source} (id BIGINT) WITH ('connector' = 'datagen', "
        "'number-of-rows' = '20', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
        "'fields.id.end' = '20')",
    )
    topics, sinks = [], []
    for _ in range(2):
        topic = _topic(kafka)
        table, ddl = _table(kafka, topic, "id BIGINT")
        run(stream_service, session, ddl)
        topics.append(topic)
        sinks.append(table)
    run(stream_service, session, f"SET 'execution.runtime-mode' = '{mode}'")
    evens, odds = sinks
    [(job_id,)] = run(
        stream_service,
        session,
        f"EXECUTE STATEMENT SET BEGIN "
        f"INSERT INTO {evens} SELECT id FROM {source} WHERE id % 2 = 0; "
        f"INSERT INTO {odds} SELECT id FROM {source} WHERE id % 2 = 1; END",
    )
    wait_job(stream_service, session, str(job_id))
    got = [sorted(json.loads(r.value())["id"] for r in kafka.consume(t, 10)) for t in topics]
    assert got == [list(range(2, 21, 2)), list(range(1, 20, 2))]
