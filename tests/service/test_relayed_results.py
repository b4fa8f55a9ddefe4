"""Results relayed by Spark's tasks: the same rows as collected ones, bounded, and clean.

``sql-gateway.result.direct-size=0`` relays every result, so the same queries
run both ways; the defaults tier reads 50 M rows through a user's gateway.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import GatewayError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.results import ResultType
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.spark.arrow import fits_driver

from .conftest import make_service, run
from .test_gateway_jobs import running_jobs, tag_of, wait_for

TYPED = """
SELECT id, CAST(id AS DECIMAL(20, 4)) / 3 AS dec,
       TIMESTAMP'2024-03-10 01:30:00' + make_interval(0, 0, 0, 0, id) AS ts,
       DATE'2024-02-28' + CAST(id AS INT) AS d, CAST(id AS STRING) AS s,
       map('k', id) AS m, array(id, NULL) AS a, named_struct('x', id, 'y', 'z') AS st,
       id AS id, CAST(NULL AS STRING) AS n, X'CAFE' AS b, id % 2 = 0 AS even
FROM range(0, 25, 1, 3)
"""


@pytest.fixture(scope="module")
def relaying(spark: SparkSession) -> Iterator[SparkGatewayService]:
    service = make_service(spark, **{"sql-gateway.result.direct-size": "0"})
    yield service
    service.stop()


@pytest.fixture
def relay_session(relaying: SparkGatewayService) -> Iterator[SessionHandle]:
    handle = relaying.open_session(SessionEnvironment())
    yield handle
    relaying.close_session(handle)


def spool_files(service: SparkGatewayService) -> list[Path]:
    directory = service._spool_dir  # white-box: where relayed partitions are spooled
    return sorted(directory.iterdir()) if directory.exists() else []


@pytest.mark.parametrize(
    "query",
    [
        TYPED,
        "SELECT 1 AS a, 2 AS a",
        "SELECT * FROM range(0)",
        "SELECT id FROM range(0, 10, 1, 4) WHERE id > 100",
        "SELECT explode(sequence(1, CAST(id AS INT))) AS e FROM range(1, 200, 1, 3)",
        "SELECT id, sum(id) OVER (ORDER BY id) AS running FROM range(0, 1000, 1, 3) ORDER BY id",
    ],
)
def test_relayed_rows_are_the_collected_rows(
    service: SparkGatewayService,
    session: SessionHandle,
    relaying: SparkGatewayService,
    relay_session: SessionHandle,
    query: str,
) -> None:
    assert run(relaying, relay_session, query) == run(service, session, query)
    assert spool_files(relaying) == []


def test_spark_estimates_choose_the_way(spark: SparkSession) -> None:
    assert fits_driver(spark.sql("SELECT id FROM range(1000)"), 32 << 20)
    assert not fits_driver(spark.sql("SELECT id FROM range(50000000)"), 32 << 20)
    # A generator makes any number of rows from one: its estimate is no bound.
    assert not fits_driver(spark.sql("SELECT explode(sequence(1, 10)) AS e"), 32 << 20)


def test_a_task_failing_mid_stream_fails_the_statement(
    relaying: SparkGatewayService, relay_session: SessionHandle
) -> None:
    with pytest.raises(GatewayError, match="DIVIDE_BY_ZERO"):
        run(relaying, relay_session, "SELECT 1 DIV (id - 300000) AS x FROM range(0, 400000, 1, 2)")
    assert wait_for(lambda: spool_files(relaying) == [], 10), spool_files(relaying)
    assert run(relaying, relay_session, "SELECT 7 AS after") == [(7,)]


def test_a_batch_over_the_limit_names_the_option(spark: SparkSession) -> None:
    service = make_service(
        spark,
        **{"sql-gateway.result.direct-size": "0", "sql-gateway.result.max-batch-size": "1kb"},
    )
    try:
        handle = service.open_session(SessionEnvironment())
        with pytest.raises(GatewayError, match=r"sql-gateway\.result\.max-batch-size"):
            run(service, handle, "SELECT repeat('x', 10000) AS wide FROM range(3)")
        assert run(service, handle, "SELECT 1 AS small") == [(1,)]
    finally:
        service.stop()


def test_a_slow_reader_holds_no_task_slot_and_closing_leaves_nothing(
    relaying: SparkGatewayService, relay_session: SessionHandle, spark: SparkSession
) -> None:
    op = relaying.execute_statement(relay_session, "SELECT id FROM range(0, 4000000, 1, 2)")
    page = relaying.fetch_results(relay_session, op, 0, 10, wait=60)
    while page.result_type is ResultType.NOT_READY:
        page = relaying.fetch_results(relay_session, op, 0, 10, wait=60)
    assert page.result_type is ResultType.PAYLOAD
    # The client reads no further: the partitions drain into the spool and the
    # tasks end, so Spark's slots are free for other sessions.
    assert wait_for(lambda: not running_jobs(spark, tag_of(op)), 60), "a task waits on the reader"
    other = relaying.open_session(SessionEnvironment())
    try:
        assert run(relaying, other, "SELECT count(*) FROM range(1000)") == [(1000,)]
    finally:
        relaying.close_session(other)
    assert spool_files(relaying), "the unread partitions are spooled"
    relaying.close_operation(relay_session, op)
    assert wait_for(lambda: spool_files(relaying) == [], 10), spool_files(relaying)
