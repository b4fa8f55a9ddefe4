"""Connector tables in batch mode: created, stored in the catalog, read and written."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import ExecutionError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.streaming import resolve

from .conftest import changes, make_service, name, run


def datagen(table: str, rows: int = 10, extra: str = "") -> str:
    return (
        f"CREATE TABLE {table} (id BIGINT, k INT, s STRING, pt AS PROCTIME(), twice AS id * 2) "
        f"WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', "
        f"'fields.id.start' = '1', 'fields.id.end' = '{rows}', 'fields.k.min' = '5', "
        f"'fields.k.max' = '7', 'fields.s.length' = '4'{extra})"
    )


def test_datagen_reads_as_a_finite_range_in_batch(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    table = name("gen")
    assert run(stream_service, session, datagen(table)) == [("OK",)]
    rows = run(stream_service, session, f"SELECT id, k, s, twice, pt FROM {table} ORDER BY id")
    assert [r[0] for r in rows] == list(range(1, 11))
    assert all(5 <= r[1] <= 7 and len(r[2]) == 4 and r[3] == 2 * r[0] for r in rows)
    assert all(r[4] is not None for r in rows)


def test_filesystem_table_is_written_and_read_in_every_format(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    for fmt in ("csv", "json", "parquet", "orc"):
        table = name(f"fs_{fmt}")
        run(
            stream_service,
            session,
            f"CREATE TABLE {table} (a INT, b STRING, up AS upper(b)) WITH ("
            f"'connector' = 'filesystem', 'path' = '{tmp_path / fmt}', 'format' = '{fmt}')",
        )
        [(job_id,)] = run(stream_service, session, f"INSERT INTO {table} VALUES (1, 'x'), (2, 'y')")
        assert len(job_id) == 32
        rows = run(stream_service, session, f"SELECT a, b, up FROM {table} ORDER BY a")
        assert rows == [(1, "x", "X"), (2, "y", "Y")], fmt


def test_sinks_accept_rows_and_refuse_reads(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    source = name("gen")
    run(stream_service, session, datagen(source, 5))
    for connector in ("print", "blackhole"):
        sink = name(connector)
        run(
            stream_service,
            session,
            f"CREATE TABLE {sink} (id BIGINT, k INT) WITH ('connector' = '{connector}')",
        )
        [(job_id,)] = run(stream_service, session, f"INSERT INTO {sink} SELECT id, k FROM {source}")
        assert job_id
        with pytest.raises(
            ExecutionError, match=r"can only be used as a sink: table .* cannot be read"
        ):
            run(stream_service, session, f"SELECT * FROM {sink}")
    with pytest.raises(ExecutionError, match="only be used as a source"):
        run(stream_service, session, f"INSERT INTO {source} SELECT 1, 2, 'x'")


@pytest.mark.parametrize(
    ("with_clause", "message"),
    [
        ("'connector' = 'kinesis'", "Unsupported connector 'kinesis'; valid connectors"),
        ("'connector' = 'datagen', 'rows' = '1'", "Unsupported option 'rows'"),
    ],
)
def test_invalid_definitions_fail_clearly(
    stream_service: SparkGatewayService, session: SessionHandle, with_clause: str, message: str
) -> None:
    with pytest.raises(ExecutionError, match=message):
        run(stream_service, session, f"CREATE TABLE {name()} (a INT) WITH ({with_clause})")


def test_unbounded_datagen_says_to_use_streaming_mode(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    table = name("gen")
    run(stream_service, session, f"CREATE TABLE {table} (a INT) WITH ('connector' = 'datagen')")
    with pytest.raises(ExecutionError, match="unbounded"):
        run(stream_service, session, f"SELECT * FROM {table}")


def test_connector_tables_survive_a_gateway_restart(
    spark: SparkSession, stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    table = name("gen")
    run(stream_service, session, datagen(table, 4))
    resolve.invalidate()  # a new gateway process starts with an empty cache
    other = make_service(spark)
    try:
        handle = other.open_session(SessionEnvironment())
        assert run(other, handle, f"SELECT twice FROM {table} ORDER BY id") == [
            (2,),
            (4,),
            (6,),
            (8,),
        ]
        described = run(other, handle, f"DESCRIBE TABLE {table}")
        assert [r[0] for r in described[:3]] == ["id", "k", "s"]
        # Plain Spark reads the stored view too.
        assert spark.sql(f"SELECT count(*) FROM {table}").collect()[0][0] == 4
    finally:
        other.stop()


def test_filesystem_metadata_columns_read_in_batch_and_streaming(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    table = name("meta")
    run(
        stream_service,
        session,
        f"CREATE TABLE {table} (a INT, file_path STRING METADATA FROM 'file.path' VIRTUAL, "
        "`file.size` BIGINT METADATA, modified TIMESTAMP_LTZ(3) METADATA FROM "
        f"'file.modification-time') WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'm'}', 'format' = 'json')",
    )
    # Metadata columns are read-only: an INSERT gives the physical columns only.
    run(stream_service, session, f"INSERT INTO {table} VALUES (1), (2)")
    sizes = {str(p): p.stat().st_size for p in (tmp_path / "m").iterdir() if p.suffix == ".json"}
    rows = run(stream_service, session, f"SELECT a, file_path, `file.size`, modified FROM {table}")
    assert sorted(r[0] for r in rows) == [1, 2]
    assert all(sizes[r[1].removeprefix("file:")] == r[2] for r in rows)
    assert all(r[3] is not None for r in rows)
    run(stream_service, session, "SET 'execution.runtime-mode' = 'streaming'")
    op = stream_service.execute_statement(session, f"SELECT a, file_path FROM {table}")
    streamed = changes(stream_service, session, op)
    assert sorted(row for _, row in streamed) == sorted((r[0], r[1]) for r in rows)


def test_unknown_metadata_keys_are_refused_with_the_valid_ones(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    with pytest.raises(ExecutionError, match=r"no metadata key 'offset'.*its keys: none"):
        run(
            stream_service,
            session,
            f"CREATE TABLE {name()} (a INT, o BIGINT METADATA FROM 'offset') "
            "WITH ('connector' = 'datagen')",
        )
    with pytest.raises(ExecutionError, match=r"no metadata key 'file\.owner'.*file\.path"):
        run(
            stream_service,
            session,
            f"CREATE TABLE {name()} (a INT, o STRING METADATA FROM 'file.owner') "
            "WITH ('connector' = 'filesystem', 'path' = '/nowhere', 'format' = 'csv')",
        )


def test_a_with_clause_name_shadows_a_connector_table(
    stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    table = name("gen")
    run(stream_service, session, datagen(table, 5))
    query = f"WITH {table} AS (SELECT 42L AS id) SELECT id FROM {table}"
    assert run(stream_service, session, query) == [(42,)]
    inner = f"WITH v AS (SELECT id FROM {table}) SELECT count(*) FROM v"
    assert run(stream_service, session, inner) == [(5,)]


def test_ddl_forgets_only_the_cached_names_it_touches(
    spark: SparkSession, stream_service: SparkGatewayService, session: SessionHandle
) -> None:
    kept, dropped, other = name("gen"), name("gen"), name("plain")
    run(stream_service, session, datagen(kept, 3))
    run(stream_service, session, datagen(dropped, 3))
    reader = spark.newSession()  # another session's reads fill the shared cache
    database = reader.catalog.currentDatabase().lower()
    assert resolve.lookup(reader, (kept,)) is not None
    assert resolve.lookup(reader, (dropped,)) is not None
    assert resolve.lookup(reader, (other,)) is None

    ddl = spark.newSession()
    statement = f"CREATE TABLE {other} (a INT) USING parquet"
    ddl.sql(statement)
    resolve.invalidate(ddl, statement)
    assert (database, kept.lower()) in resolve._cache  # not touched: still cached
    assert (database, other.lower()) not in resolve._cache  # no stale "not a connector table"
    statement = f"DROP TABLE {dropped}"
    ddl.sql(statement)
    resolve.invalidate(ddl, statement)
    assert resolve.lookup(reader, (dropped,)) is None
    assert resolve.lookup(reader, (kept,)) is not None
    statement = f"DROP TABLE {other}"
    ddl.sql(statement)
    resolve.invalidate(ddl, "SET spark.sql.shuffle.partitions = 4")  # names nothing: forget all
    assert resolve._cache == {}
