"""Sessions share Spark's cores: a short query is not stuck behind another session's scan."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import SessionLimitError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.spark.pools import is_fair

from .conftest import make_service, run
from .test_gateway_jobs import running_jobs, tag_of, wait_for

# About a minute of work on two cores, in 800 tasks: Spark's FIFO scheduler would
# run all of them before any task of a later job.
LONG_SCAN = "SELECT sum(id % 7) FROM range(0, 8000000000, 1, 800)"


def test_the_engine_schedules_fairly(spark: SparkSession) -> None:
    assert is_fair(spark.sparkContext)


def test_a_short_query_finishes_during_another_sessions_long_scan(
    service: SparkGatewayService, session: SessionHandle, spark: SparkSession
) -> None:
    scan = service.execute_statement(session, LONG_SCAN)
    assert wait_for(lambda: running_jobs(spark, tag_of(scan)), 60), "the scan never started"
    other = service.open_session(SessionEnvironment())
    try:
        assert run(service, other, "SELECT count(*) FROM range(1000)") == [(1000,)]
        # The scan's Spark job still runs: the short query did not wait for it to end.
        assert running_jobs(spark, tag_of(scan))
    finally:
        service.cancel_operation(session, scan)
        service.close_session(other)


def test_a_session_runs_in_its_own_pool_or_the_one_it_sets(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    target = service._session(session)  # white-box: the pool its jobs are given
    assert target.scheduler_pool() == target.own_pool
    run(service, session, "SET 'spark.sql.thriftserver.scheduler.pool' = 'reports'")
    assert target.scheduler_pool() == "reports"
    run(service, session, "SET 'sql-gateway.session.scheduler.pool' = 'etl'")
    assert target.scheduler_pool() == "etl"
    assert run(service, session, "SELECT 1 AS pooled") == [(1,)]


def test_statements_past_the_per_session_cap_are_refused(spark: SparkSession) -> None:
    service = make_service(spark, **{"sql-gateway.session.max-running-statements": "2"})
    try:
        handle = service.open_session(SessionEnvironment())
        first = service.execute_statement(handle, LONG_SCAN)
        second = service.execute_statement(handle, LONG_SCAN)
        # Both are busy while their scans run (FINISHED ones stream their result).
        assert wait_for(lambda: running_jobs(spark, tag_of(second)), 60)
        with pytest.raises(SessionLimitError, match="max-running-statements"):
            service.execute_statement(handle, "SELECT 1")
        service.cancel_operation(handle, first)
        stopping = service._operation(handle, first)  # white-box: its worker lets go
        assert wait_for(lambda: not stopping.busy, 60)
        assert run(service, handle, "SELECT 2 AS after") == [(2,)]
        service.cancel_operation(handle, second)
    finally:
        service.stop()
