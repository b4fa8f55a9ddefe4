"""Stopping Spark work, bounded result memory, and many sessions at once."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pyarrow.compute as pc
import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import IllegalStateError
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import ResultType
from sparkgate.api.session import SessionEnvironment
from sparkgate.api.status import OperationStatus
from sparkgate.service.gateway import SparkGatewayService

from .conftest import make_service, run

ENDLESS = "SELECT max(hash(id)) AS h FROM range(0, 5000000000000, 1, 2)"


def tag_of(op: OperationHandle) -> str:
    return f"sparkgate-{op.identifier.hex}"


def running_jobs(spark: SparkSession, tag: str) -> list[int]:
    tracker = spark.sparkContext._jsc.sc().statusTracker()
    out = []
    for job_id in tracker.getJobIdsForTag(tag):
        info = tracker.getJobInfo(job_id)
        if not info.isEmpty() and str(info.get().status().toString()) == "RUNNING":
            out.append(int(job_id))
    return out


def wait_for(predicate, timeout: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def start_endless(
    service: SparkGatewayService,
    session: SessionHandle,
    spark: SparkSession,
    sql: str = ENDLESS,
    **kw,
) -> OperationHandle:  # type: ignore[no-untyped-def]
    op = service.execute_statement(session, sql, **kw)
    assert wait_for(lambda: running_jobs(spark, tag_of(op))), "the Spark job never started"
    return op


def test_cancel_stops_the_spark_job(
    service: SparkGatewayService, session: SessionHandle, spark: SparkSession
) -> None:
    op = start_endless(service, session, spark)
    service.cancel_operation(session, op)
    assert service.get_operation_info(session, op).status is OperationStatus.CANCELED
    assert wait_for(lambda: not running_jobs(spark, tag_of(op)), 10), "job still running"
    with pytest.raises(IllegalStateError, match="cancelled"):
        service.fetch_results(session, op, 0, 10)
    assert run(service, session, "SELECT 1") == [(1,)]


def test_timeout_stops_the_spark_job(
    service: SparkGatewayService, session: SessionHandle, spark: SparkSession
) -> None:
    table = f"ctas_{uuid.uuid4().hex[:8]}"
    sql = f"CREATE TABLE {table} USING parquet AS {ENDLESS}"
    op = start_endless(service, session, spark, sql, timeout=10.0)
    timed_out = wait_for(
        lambda: service.get_operation_info(session, op).status is OperationStatus.TIMEOUT, 40
    )
    info = service.get_operation_info(session, op)
    assert timed_out, f"status {info.status}, error {info.error!r}"
    assert wait_for(lambda: not running_jobs(spark, tag_of(op)), 10), "job still running"
    with pytest.raises(IllegalStateError, match="timed out"):
        service.fetch_results(session, op, 0, 10)


def test_closing_the_session_stops_its_jobs(
    service: SparkGatewayService, spark: SparkSession
) -> None:
    handle = service.open_session(SessionEnvironment())
    op = start_endless(service, handle, spark)
    service.close_session(handle)
    assert wait_for(lambda: not running_jobs(spark, tag_of(op)), 10), "job still running"


def test_closing_an_operation_mid_fetch_stops_its_producer(
    service: SparkGatewayService, session: SessionHandle, spark: SparkSession
) -> None:
    op = service.execute_statement(session, "SELECT id FROM range(0, 200000000, 1, 40)")
    page = service.fetch_results(session, op, 0, 1000, wait=60)
    while page.result_type is ResultType.NOT_READY:
        page = service.fetch_results(session, op, 0, 1000, wait=60)
    service.close_operation(session, op)
    assert wait_for(lambda: not running_jobs(spark, tag_of(op)), 10), "job still running"


def test_twenty_million_rows_stream_through_a_bounded_buffer(spark: SparkSession) -> None:
    bound = 30_000
    svc = make_service(spark, **{"sql-gateway.result.buffer-rows": str(bound)})
    try:
        session = svc.open_session(SessionEnvironment())
        total = 20_000_000
        op = svc.execute_statement(session, f"SELECT id FROM range(0, {total}, 1, 4)")
        operation = svc._operation(session, op)  # white-box: watch the buffer
        rows = 0
        checksum = 0
        token = 0
        while True:
            page = svc.fetch_results(session, op, token, 200_000, wait=5)
            if page.result_type is ResultType.NOT_READY:
                continue
            for batch in page.batches:
                rows += batch.num_rows
                checksum += pc.sum(batch.column(0)).as_py() or 0
            if page.result_type is ResultType.EOS:
                break
            token += 1
        buffer = operation._fetcher.buffer  # type: ignore[union-attr]
        assert rows == total
        assert checksum == total * (total - 1) // 2
        assert buffer.total_rows == total
        assert 0 < buffer.peak_rows <= bound
    finally:
        svc.stop()


def test_hundred_sessions_at_once_without_cross_talk(service: SparkGatewayService) -> None:
    n = 100
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def one(i: int) -> None:
        handle = service.open_session(SessionEnvironment(session_name=f"s{i}"))
        try:
            barrier.wait(60)
            run(service, handle, f"SET 'my.marker' = '{i}'")
            run(service, handle, f"CREATE TEMPORARY VIEW marker AS SELECT {i} AS m")
            run(service, handle, f"SET spark.sql.shuffle.partitions={i + 1}")
            assert run(service, handle, "SELECT m FROM marker") == [(i,)]
            assert service.get_session_config(handle)["my.marker"] == str(i)
            assert run(service, handle, "SET spark.sql.shuffle.partitions") == [
                ("spark.sql.shuffle.partitions", str(i + 1))
            ]
        except BaseException as exc:
            errors.append(exc)
        finally:
            service.close_session(handle)

    with ThreadPoolExecutor(n) as pool:
        list(pool.map(one, range(n)))
    assert errors == []
