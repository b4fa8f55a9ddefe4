"""Sessions share Spark's cores: a short query is not stuck behind another session's scan."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import SessionLimitError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import SessionEnvironment
from sparkgate.service import options
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.spark.pools import add_pool, is_fair

from .conftest import make_service, run, unique_name
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


def _pool(spark: SparkSession, name: str) -> Any | None:
    """Spark's FAIR pool ``name`` (a py4j ``Pool``), None if there is none."""
    found = spark.sparkContext._jsc.sc().getPoolForName(name)
    return None if found.isEmpty() else found.get()


def _settings(pool: Any) -> tuple[int, int, str]:
    return int(pool.weight()), int(pool.minShare()), str(pool.schedulingMode().toString())


def test_a_sessions_pool_has_the_default_weight_and_min_share(
    service: SparkGatewayService, session: SessionHandle, spark: SparkSession
) -> None:
    assert _pool(spark, service._session(session).own_pool) is None  # made at first use
    assert run(service, session, "SELECT 1 AS pooled") == [(1,)]
    pool = _pool(spark, service._session(session).own_pool)  # white-box: its pool's name
    assert pool is not None
    defaults = (options.SESSION_POOL_WEIGHT.default, options.SESSION_POOL_MIN_SHARE.default)
    assert _settings(pool) == (*defaults, "FIFO")


def test_a_sessions_pool_has_the_configured_weight_and_min_share(spark: SparkSession) -> None:
    service = make_service(
        spark,
        **{
            "sql-gateway.session.scheduler-pool.weight": "3",
            "sql-gateway.session.scheduler-pool.min-share": "2",
        },
    )
    try:
        handle = service.open_session(SessionEnvironment())
        assert run(service, handle, "SELECT 1 AS weighed") == [(1,)]
        name = service._session(handle).own_pool
        pool = _pool(spark, name)
        assert pool is not None
        # Its jobs one after the other, the session's share against others by weight.
        assert _settings(pool) == (3, 2, "FIFO")
        service.close_session(handle)
        assert _pool(spark, name) is None, "Spark never forgets a pool: the gateway removes it"
    finally:
        service.stop()


_ALLOCATION = """<?xml version="1.0"?>
<allocations>
  <pool name="{name}">
    <schedulingMode>FAIR</schedulingMode>
    <weight>5</weight>
    <minShare>1</minShare>
  </pool>
</allocations>
"""


@pytest.fixture
def pool_of_allocation_file(spark: SparkSession, tmp_path: Path) -> Iterator[str]:
    """A pool of a ``spark.scheduler.allocation.file``, made by Spark's own code.

    Spark reads the file once, when the SparkContext starts its scheduler
    (``FairSchedulableBuilder.buildPools``); the shared engine started without
    one, so the same builder runs here on its live root pool with the option set.
    That the gateway passes the option to Spark is tests/unit/test_engine_conf.py's.
    """
    name = unique_name("from_file")
    path = tmp_path / "fairscheduler.xml"
    path.write_text(_ALLOCATION.format(name=name), encoding="utf-8")
    sc = spark.sparkContext._jsc.sc()
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    root = sc.taskScheduler().rootPool()
    sc.conf().set("spark.scheduler.allocation.file", str(path))
    try:
        jvm.org.apache.spark.scheduler.FairSchedulableBuilder(root, sc).buildPools()
    finally:
        sc.conf().remove("spark.scheduler.allocation.file")
    yield name
    pool = root.getSchedulableByName(name)
    if pool is not None:
        wait_for(lambda: pool.runningTasks() == 0, 60)
        root.removeSchedulable(pool)


def test_a_pool_of_the_allocation_file_keeps_its_settings_and_runs_a_sessions_jobs(
    service: SparkGatewayService, spark: SparkSession, pool_of_allocation_file: str
) -> None:
    name = pool_of_allocation_file
    pool = _pool(spark, name)
    assert pool is not None and _settings(pool) == (5, 1, "FAIR")
    # The gateway never makes over a pool that exists (the file's) with its defaults.
    assert not add_pool(spark.sparkContext, name, 1, 0)
    handle = service.open_session(
        SessionEnvironment(config={"sql-gateway.session.scheduler.pool": name})
    )
    try:
        assert service._session(handle).scheduler_pool() == name
        scan = service.execute_statement(handle, LONG_SCAN)
        try:
            assert wait_for(lambda: running_jobs(spark, tag_of(scan)), 60), "no scan"
            # The scan's tasks run in the file's pool.
            assert wait_for(lambda: pool.runningTasks() > 0, 30)
        finally:
            service.cancel_operation(handle, scan)
    finally:
        service.close_session(handle)
    # The file's pool is not the session's own: it stays, with its settings.
    kept = _pool(spark, name)
    assert kept is not None and _settings(kept) == (5, 1, "FAIR")
