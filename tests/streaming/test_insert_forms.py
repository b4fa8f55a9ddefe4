"""INSERTs with column lists and PARTITION clauses into connector tables (batch and
streaming) and into Spark tables from a stream; partitioned filesystem tables; an
OPTIONS hint after the target."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import ExecutionError, GatewayError
from sparkgate.api.handles import SessionHandle
from sparkgate.service.gateway import SparkGatewayService

from .conftest import name, run, wait_job

SOURCE = (
    "CREATE TABLE {t} (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
    "'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}', 'rows-per-second' = '40')"
)


def partitioned_sink(service: SparkGatewayService, session: SessionHandle, path: Path) -> str:
    table = name("part")
    run(
        service,
        session,
        f"CREATE TABLE {table} (id BIGINT, note STRING, dt STRING) PARTITIONED BY (dt) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')",
    )
    return table


def test_batch_insert_with_partition_and_column_list(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    src = name("src")
    run(stream_service, session, SOURCE.format(t=src, n=4))
    sink = partitioned_sink(stream_service, session, tmp_path / "out")
    run(
        stream_service,
        session,
        f"INSERT INTO {sink} PARTITION (dt = 'a') SELECT id, 'x' FROM {src}",
    )
    run(
        stream_service,
        session,
        f"INSERT INTO {sink} PARTITION (dt = 'b') (id) SELECT id FROM {src}",
    )
    run(stream_service, session, f"INSERT INTO {sink} (dt, id) SELECT 'c', id * 10 FROM {src}")
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if p.is_dir()) == [
        "dt=a",
        "dt=b",
        "dt=c",
    ]
    rows = run(stream_service, session, f"SELECT dt, id, note FROM {sink} ORDER BY dt, id")
    assert rows == [
        *[("a", i, "x") for i in range(1, 5)],
        *[("b", i, None) for i in range(1, 5)],
        *[("c", i * 10, None) for i in range(1, 5)],
    ]


def test_streaming_insert_with_partition_and_column_list(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    src = name("src")
    run(stream_service, session, SOURCE.format(t=src, n=20))
    sink = partitioned_sink(stream_service, session, tmp_path / "out")
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    [(job_id,)] = run(
        stream_service,
        session,
        f"INSERT INTO {sink} PARTITION (dt = 'today') (id) SELECT id FROM {src}",
    )
    wait_job(stream_service, session, job_id)
    run(stream_service, session, "SET 'execution.runtime-mode' = 'batch'")
    assert run(
        stream_service,
        session,
        f"SELECT dt, count(*), sum(id), count(note) FROM {sink} GROUP BY dt",
    ) == [("today", 20, 210, 0)]


def test_streaming_insert_into_a_spark_table_with_a_column_list(
    spark: SparkSession, stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    src, target = name("src"), name("native")
    run(stream_service, session, SOURCE.format(t=src, n=10))
    run(stream_service, session, f"CREATE TABLE {target} (a STRING, id BIGINT) USING parquet")
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    [(job_id,)] = run(
        stream_service, session, f"INSERT INTO {target} (id) SELECT id * 2 FROM {src}"
    )
    wait_job(stream_service, session, job_id)
    assert sorted(tuple(r) for r in spark.table(target).collect()) == [
        (None, 2 * i) for i in range(1, 11)
    ]


@pytest.mark.parametrize(
    ("insert", "message"),
    [
        ("INSERT INTO {t} (nope) SELECT 1", "Unknown target column 'nope'.*columns: id, note, dt"),
        ("INSERT INTO {t} PARTITION (dt = 'a') SELECT 1", "query has 1 columns.*takes 2"),
        ("INSERT INTO {t} (id, note) SELECT 1", "query has 1 columns.*takes 2 \\(id, note\\)"),
    ],
)
def test_mismatched_inserts_fail_clearly(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
    insert: str,
    message: str,
) -> None:
    src = name("src")
    run(stream_service, session, SOURCE.format(t=src, n=2))
    sink = partitioned_sink(stream_service, session, tmp_path / "out")
    with pytest.raises(ExecutionError, match=message):
        run(stream_service, session, insert.format(t=sink) + f" FROM {src}")
    with pytest.raises(ExecutionError, match="does not support PARTITIONED BY"):
        run(
            stream_service,
            session,
            f"CREATE TABLE {name()} (a INT) PARTITIONED BY (a) WITH ('connector' = 'datagen')",
        )


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_an_options_hint_after_the_target_is_its_options_for_that_insert(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path, mode: str
) -> None:
    """Flink's dynamic table options on a sink: ``INSERT INTO t /*+ OPTIONS(...) */``
    writes with the table's options and the hint's, for this INSERT only; the
    hinted options are checked as CREATE TABLE checks them."""
    src, sink = name("src"), name("hinted")
    run(stream_service, session, SOURCE.format(t=src, n=3))
    run(
        stream_service,
        session,
        f"CREATE TABLE {sink} (id BIGINT, note STRING) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'declared'}', 'format' = 'json')",
    )
    other = tmp_path / "hinted"
    hint = f"/*+ OPTIONS('path' = '{other}', 'format' = 'csv') */"
    run(stream_service, session, f"SET 'execution.runtime-mode' = '{mode}'")
    try:
        for bad, message in [
            (f"INSERT INTO {sink} /*+ OPTIONS('format' = 'x') */", "Unsupported format 'x'"),
            (f"INSERT INTO {sink} /*+ OPTIONS('path') */", "takes 'key' = 'value' pairs"),
            (f"INSERT INTO {sink} (id, note) {hint}", "follows its target table's name"),
        ]:
            with pytest.raises(GatewayError, match=re.escape(message)):
                run(stream_service, session, f"{bad} SELECT id, 'x' FROM {src}")
        rows = run(stream_service, session, f"INSERT INTO {sink} {hint} SELECT id, 'x' FROM {src}")
        if mode == "streaming":
            wait_job(stream_service, session, rows[0][0])
    finally:
        run(stream_service, session, "RESET 'execution.runtime-mode'")
    assert list((tmp_path / "declared").iterdir()) == []  # made empty by CREATE TABLE
    assert any(other.glob("*.csv"))
    assert run(stream_service, session, f"SELECT id, note FROM {sink} {hint} ORDER BY id") == [
        (1, "x"),
        (2, "x"),
        (3, "x"),
    ]
    assert run(stream_service, session, f"SELECT count(*) FROM {sink}") == [(0,)]


def test_an_options_hint_on_a_spark_table_target_changes_nothing(
    spark: SparkSession, stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    target = name("native")
    run(stream_service, session, f"CREATE TABLE {target} (id BIGINT) USING parquet")
    run(stream_service, session, f"INSERT INTO {target} /*+ OPTIONS('a' = 'b') */ VALUES (7)")
    assert [tuple(r) for r in spark.table(target).collect()] == [(7,)]


def test_the_partitions_the_gateway_writes_are_in_the_catalog_for_spark(
    spark: SparkSession, stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    """A partitioned filesystem table is a Spark file table too: after the gateway
    writes it, Spark reading the table (another client of the same metastore) sees
    the rows, and SHOW PARTITIONS lists them; an overwrite's removed ones go."""
    src = name("src")
    run(stream_service, session, SOURCE.format(t=src, n=2))
    sink = partitioned_sink(stream_service, session, tmp_path / "out")
    run(stream_service, session, f"INSERT INTO {sink} SELECT id, 'x', 'a' FROM {src}")
    insert_b = f"INSERT INTO {sink} PARTITION (dt = 'b') SELECT id, 'y' FROM {src}"
    run(stream_service, session, insert_b)
    assert sorted(tuple(r) for r in spark.table(sink).collect()) == [
        (1, "x", "a"),
        (1, "y", "b"),
        (2, "x", "a"),
        (2, "y", "b"),
    ]
    assert run(stream_service, session, f"SHOW PARTITIONS {sink}") == [("dt=a",), ("dt=b",)]
    run(stream_service, session, f"INSERT OVERWRITE {sink} SELECT id, 'z', 'c' FROM {src}")
    assert run(stream_service, session, f"SHOW PARTITIONS {sink}") == [("dt=c",)]
    assert sorted(tuple(r) for r in spark.table(sink).collect()) == [(1, "z", "c"), (2, "z", "c")]
