"""Results the driver holds (commands, local relations, constant SELECTs) come
without a Spark job, and exactly as a job would have given them."""

from __future__ import annotations

import datetime as dt
import decimal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from sparkgate.api.handles import SessionHandle
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.spark import arrow, driver_rows
from sparkgate.service.spark.limits import ResultLimits

from .conftest import fetch_all, opened_session, run, unique_name


def jobs_of(spark: SparkSession, service: SparkGatewayService, session: SessionHandle, sql: str):  # type: ignore[no-untyped-def]
    """Rows of ``sql`` and the Spark jobs its operation ran (by its job tag)."""
    op = service.execute_statement(session, sql)
    try:
        _, rows = fetch_all(service, session, op)
    finally:
        service.close_operation(session, op)
    tracker = spark.sparkContext._jsc.sc().statusTracker()
    return rows, list(tracker.getJobIdsForTag(f"sparkgate-{op.identifier.hex}"))


@pytest.fixture(scope="module")
def table(service: SparkGatewayService, spark: SparkSession) -> Iterator[str]:
    name = unique_name("driver_rows")
    spark.sql(f"CREATE TABLE {name} (id BIGINT, label STRING) USING parquet")
    try:
        yield name
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "SELECT 'a' AS s, 2.5 AS d, NULL AS n, DATE '2024-02-29' AS day",
        "VALUES (1, 'x'), (2, 'y')",
        "SHOW TABLES",
        "SHOW DATABASES",
        "DESCRIBE {table}",
        "SET spark.sql.shuffle.partitions",
        "SET",
        "SHOW FUNCTIONS LIKE 'abs'",
    ],
)
def test_rows_on_the_driver_run_no_spark_job(
    spark: SparkSession, service: SparkGatewayService, table: str, sql: str
) -> None:
    with opened_session(service) as session:
        rows, jobs = jobs_of(spark, service, session, sql.format(table=table))
    assert rows, sql
    assert jobs == [], sql


def test_a_real_query_still_runs_as_a_spark_job(
    spark: SparkSession, service: SparkGatewayService
) -> None:
    with opened_session(service) as session:
        rows, jobs = jobs_of(spark, service, session, "SELECT id FROM range(3)")
    assert rows == [(0,), (1,), (2,)]
    assert jobs


@pytest.mark.parametrize(
    "sql",
    [
        # Left unfolded by the optimizer: they run as Spark runs them.
        "SELECT rand(7) AS r",
        "SELECT (SELECT max(id) FROM range(4)) AS m",
        "SELECT length(uuid()) AS u",
    ],
)
def test_what_is_not_a_constant_is_computed_by_spark(
    spark: SparkSession, service: SparkGatewayService, sql: str
) -> None:
    with opened_session(service) as session:
        rows, jobs = jobs_of(spark, service, session, sql)
    assert len(rows) == 1 and jobs, sql


# Each value the driver converts, against Spark's own job on the same columns
# (the same SELECT over a one-partition range, which Spark cannot fold).
CONSTANTS = [
    "1 AS i",
    "CAST(7 AS TINYINT) AS b",
    "9223372036854775807 AS big",
    "1.5D AS dbl",
    "CAST(1.25 AS FLOAT) AS f",
    "CAST('12345678901234.567890' AS DECIMAL(20, 6)) AS dec",
    "CAST(-0.000001 AS DECIMAL(38, 18)) AS tiny",
    "'héllo, wörld' AS s",
    "CAST(NULL AS STRING) AS ns",
    "TRUE AS t",
    "DATE '1969-12-31' AS day",
    "TIMESTAMP '2024-03-31 02:30:00' AS ts",
    "TIMESTAMP_NTZ '2024-03-31 02:30:00.123456' AS ntz",
    "X'00FF' AS bin",
    "array(1, 2, NULL) AS arr",
    "map('k', 1.5D) AS m",
    "named_struct('a', 1, 'b', 'two') AS st",
    "INTERVAL '3' DAY AS days",
    "INTERVAL '1-2' YEAR TO MONTH AS months",
]


@pytest.mark.parametrize("time_zone", ["UTC", "Asia/Kolkata"])
def test_driver_rows_are_the_rows_a_spark_job_gives(
    spark: SparkSession, service: SparkGatewayService, time_zone: str
) -> None:
    columns = ", ".join(CONSTANTS)
    with opened_session(service) as session:
        run(service, session, f"SET spark.sql.session.timeZone = {time_zone}")
        driver, driver_jobs = jobs_of(spark, service, session, f"SELECT {columns}")
        by_job, jobs = jobs_of(spark, service, session, f"SELECT {columns} FROM range(0, 1, 1, 1)")
    assert driver_jobs == [] and jobs
    assert driver == by_job
    assert driver[0][5] == decimal.Decimal("12345678901234.567890")


def test_many_local_rows_come_in_batches(spark: SparkSession, service: SparkGatewayService) -> None:
    values = ", ".join(
        f"({i}, 'row {i}', TIMESTAMP '2024-01-01 00:00:00' + INTERVAL {i} SECOND)"
        for i in range(2500)
    )
    with opened_session(service) as session:
        op = service.execute_statement(
            session,
            f"SELECT * FROM VALUES {values} AS t(id, label, at)",
            config={"spark.sql.execution.arrow.maxRecordsPerBatch": "1000"},
        )
        try:
            _, rows = fetch_all(service, session, op, max_rows=700)
        finally:
            service.close_operation(session, op)
    assert [r[0] for r in rows] == list(range(2500))
    assert rows[1][1] == "row 1"
    assert isinstance(rows[0][2], dt.datetime)


def test_a_small_result_over_partitions_is_one_batch(spark: SparkSession) -> None:
    # Four partitions, one Spark job: one batch, so a client gets one page and
    # not one page (and one request) per partition.
    df = spark.sql("SELECT id, id * 2 AS x FROM range(0, 100, 1, 4)")
    settings = arrow.ArrowSettings.of(spark)
    schema = arrow.arrow_schema(df, settings)
    batches = list(arrow.stream_batches(df, schema, ResultLimits(window=4), settings))
    assert [b.num_rows for b in batches] == [100]
    assert pa.Table.from_batches(batches).to_pylist()[99] == {"id": 99, "x": 198}


def _batch(start: int, rows: int) -> pa.RecordBatch:
    return pa.record_batch({"id": pa.array(range(start, start + rows), pa.int64())})


@pytest.mark.parametrize(
    ("sizes", "max_rows", "max_bytes", "joined"),
    [
        ((25, 25, 25, 25), 10_000, 1 << 20, (100,)),
        ((25, 25, 25, 25), 60, 1 << 20, (50, 50)),
        ((25, 25, 25, 25), 25, 1 << 20, (25, 25, 25, 25)),
        ((25, 25, 25, 25), 0, 1 << 20, (100,)),  # Spark's "no limit"
        ((25, 25, 25, 25), -1, 1 << 20, (100,)),
        ((25, 25, 25, 25), 10_000, 400, (50, 50)),  # 8 bytes a row
        ((10, 0, 10), 10_000, 1 << 20, (20,)),
        ((), 10_000, 1 << 20, ()),
    ],
)
def test_frames_of_a_window_are_joined_within_bounds(
    sizes: tuple[int, ...], max_rows: int, max_bytes: int, joined: tuple[int, ...]
) -> None:
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    batches = [_batch(start, rows) for start, rows in zip(starts, sizes, strict=True)]
    out = list(arrow._joined(iter(batches), max_rows, max_bytes))
    assert tuple(b.num_rows for b in out) == joined
    assert [v for b in out for v in b.column(0).to_pylist()] == list(range(sum(sizes)))


def test_an_empty_local_relation_is_an_empty_result(
    spark: SparkSession, service: SparkGatewayService, table: str
) -> None:
    with opened_session(service) as session:
        rows, jobs = jobs_of(spark, service, session, "SELECT 1 AS one WHERE false")
    assert rows == [] and jobs == []


#: A plan, whether the driver computes its row (a projection of constants), and
#: whether Spark's size estimate bounds it (no generator multiplies its rows).
PLANS = [
    ("SELECT 1", True, True),
    ("SELECT 'a' AS s, 2.5 AS d, NULL AS n", True, True),
    ("SELECT array(1, 2) AS a, upper('x') AS u", True, True),
    ("SELECT rand(7) AS r", False, True),
    ("SELECT (SELECT max(id) FROM range(4)) AS m", False, True),
    ("SELECT id FROM range(3)", False, True),
    ("SELECT 1 AS one FROM range(1)", False, True),
    ("SELECT explode(sequence(1, 10)) AS e", False, False),
    ("VALUES (1, 'x'), (2, 'y')", False, True),
    ("SELECT id, count(*) FROM range(10) GROUP BY id", False, True),
]


@pytest.mark.parametrize(("sql", "constant", "bounded"), PLANS)
def test_the_result_path_is_chosen_from_the_plan_as_json(
    spark: SparkSession, sql: str, constant: bool, bounded: bool
) -> None:
    """The result path is chosen from the optimized plan's ``toJSON`` (one round
    trip); a plan Spark cannot render (None) takes a Spark job, relayed."""
    df = spark.sql(sql)
    logical = df._jdf.queryExecution().optimizedPlan()
    nodes = arrow._plan_json(logical)
    assert nodes is not None
    assert driver_rows._constant_nodes(nodes) is constant
    estimate = int(logical.stats().sizeInBytes())
    assert arrow._fits(logical, nodes, estimate) is bounded
    assert arrow._fits(logical, nodes, estimate - 1) is False
    assert arrow.fits_driver(df, 32 << 20) is bounded
    assert arrow._fits(logical, None, 32 << 20) is False
    settings = arrow.ArrowSettings.of(spark)
    jvm = spark.sparkContext._jvm
    schema = arrow.arrow_schema(df, settings)
    assert driver_rows.constant_batches(jvm, logical, None, schema, 1 << 20, settings) is None


def test_a_file_scan_counts_ten_times_its_size_on_disk(spark: SparkSession, tmp_path: Any) -> None:
    # Compressed columnar files may expand tenfold in memory.
    spark.range(1000).write.parquet(str(tmp_path / "p"))
    df = spark.read.parquet(str(tmp_path / "p"))
    logical = df._jdf.queryExecution().optimizedPlan()
    on_disk = int(logical.stats().sizeInBytes())
    assert arrow.fits_driver(df, 10 * on_disk)
    assert not arrow.fits_driver(df, 10 * on_disk - 1)


class _RoundTrips:
    """py4j commands sent by the statement's threads (the caller, the operation's
    worker, the parse limit's thread), not by the service's background watchers."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from py4j.clientserver import ClientServerConnection

        self.commands: list[str] = []
        self.counting = False
        send = ClientServerConnection.send_command

        def counted(conn: Any, command: str) -> Any:
            name = threading.current_thread().name
            if self.counting and (
                name.startswith(("sparkgate-worker", "sparkgate-spark-parse"))
                or threading.current_thread() is threading.main_thread()
            ):
                self.commands.append(command.split("\n")[2] if command.count("\n") > 2 else command)
            return send(conn, command)

        monkeypatch.setattr(ClientServerConnection, "send_command", counted)


def test_a_short_query_makes_few_py4j_round_trips(
    service: SparkGatewayService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every py4j call is a socket round trip with the interpreter lock taken again
    after it. A warm 100-row query made 58 of them before its result path, job log,
    settings and parse check were each read in one; ``collect()`` makes about 12."""
    trips = _RoundTrips(monkeypatch)
    sql = "SELECT id, id * 2 AS x FROM range(100)"
    with opened_session(service) as session:
        for _ in range(3):  # warm: the session's Spark session, JVM constants, parse cache
            assert len(run(service, session, sql)) == 100
        time.sleep(0.5)  # the last operation's teardown (its job log) ends
        trips.counting = True
        assert len(run(service, session, sql)) == 100
        settled = -1
        while settled != len(trips.commands):  # until its teardown has ended too
            settled = len(trips.commands)
            time.sleep(0.5)
        trips.counting = False
    assert 0 < len(trips.commands) <= 42, trips.commands
