"""Sessions: properties, isolation, expiry, limits and bad handles."""

from __future__ import annotations

import time
import uuid

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import (
    OperationNotFoundError,
    SessionLimitError,
    SessionNotFoundError,
)
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.session import EndpointVersion, SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService

from .conftest import make_service, run


def test_a_sessions_spark_session_is_made_at_its_first_use(
    service: SparkGatewayService,
) -> None:
    zone = "table.local-time-zone"
    env = SessionEnvironment(config={"spark.sql.shuffle.partitions": "3", zone: "Not/AZone"})
    unused = service.open_session(env)
    session = service._session(unused)  # white-box: whether Spark was asked for anything
    assert not session.has_spark
    service.close_session(unused)
    with pytest.raises(SessionNotFoundError):
        session.spark  # noqa: B018  a closed session makes none (a racing first use)
    assert not session.has_spark

    used = service.open_session(env)
    try:
        assert not service._session(used).has_spark
        assert run(service, used, "SELECT 1 AS first") == [(1,)]
        assert service._session(used).has_spark
        # What it opened with reached Spark; a zone Spark refuses stays its key's alone.
        assert run(service, used, "SET spark.sql.shuffle.partitions") == [
            ("spark.sql.shuffle.partitions", "3")
        ]
        config = service.get_session_config(used)
        assert config[zone] == "Not/AZone"
        assert config["spark.sql.session.timeZone"] != "Not/AZone"
    finally:
        service.close_session(used)


def test_open_with_properties_and_endpoint_version(service: SparkGatewayService) -> None:
    env = SessionEnvironment(
        session_name="props",
        endpoint_version=EndpointVersion("rest", "V4"),
        config={"sql-client.execution.result-mode": "tableau", "spark.sql.shuffle.partitions": "3"},
    )
    handle = service.open_session(env)
    try:
        config = service.get_session_config(handle)
        assert config["sql-client.execution.result-mode"] == "tableau"
        assert service.get_session_endpoint_version(handle) == EndpointVersion("rest", "V4")
        assert run(service, handle, "SET spark.sql.shuffle.partitions") == [
            ("spark.sql.shuffle.partitions", "3")
        ]
    finally:
        service.close_session(handle)
    with pytest.raises(SessionNotFoundError):
        service.get_session_config(handle)
    with pytest.raises(SessionNotFoundError):
        service.close_session(handle)


def test_static_spark_keys_at_open_are_kept_but_do_not_fail(service: SparkGatewayService) -> None:
    handle = service.open_session(SessionEnvironment(config={"spark.executor.cores": "7"}))
    try:
        assert service.get_session_config(handle)["spark.executor.cores"] == "7"
    finally:
        service.close_session(handle)


def test_set_applies_to_one_session_only(service: SparkGatewayService) -> None:
    a = service.open_session(SessionEnvironment())
    b = service.open_session(SessionEnvironment())
    try:
        assert run(service, a, "SET 'pipeline.name' = 'etl one'") == [("OK",)]
        assert run(service, a, "SET spark.sql.session.timeZone=Asia/Tokyo") == [("OK",)]
        assert service.get_session_config(a)["pipeline.name"] == "etl one"
        assert "pipeline.name" not in service.get_session_config(b)
        assert run(service, a, "SELECT current_timezone()") == [("Asia/Tokyo",)]
        assert run(service, b, "SELECT current_timezone()") != [("Asia/Tokyo",)]
        listing = dict(run(service, a, "SET"))
        assert listing["pipeline.name"] == "etl one"
        assert run(service, a, "RESET 'pipeline.name'") == [("OK",)]
        assert "pipeline.name" not in service.get_session_config(a)
        assert run(service, a, "RESET") == [("OK",)]
        assert run(service, a, "SELECT current_timezone()") != [("Asia/Tokyo",)]
    finally:
        service.close_session(a)
        service.close_session(b)


def test_temp_views_do_not_cross_sessions(service: SparkGatewayService) -> None:
    a = service.open_session(SessionEnvironment())
    b = service.open_session(SessionEnvironment())
    try:
        run(service, a, "CREATE TEMPORARY VIEW mine AS SELECT 42 AS answer")
        assert run(service, a, "SELECT answer FROM mine") == [(42,)]
        op = service.execute_statement(b, "SELECT answer FROM mine")
        with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
            for _ in range(100):
                service.fetch_results(b, op, 0, 10, wait=1.0)
    finally:
        service.close_session(a)
        service.close_session(b)


def test_idle_sessions_expire_and_heartbeat_keeps_alive(spark: SparkSession) -> None:
    svc = make_service(
        spark,
        **{
            "sql-gateway.session.idle-timeout": "600 ms",
            "sql-gateway.session.check-interval": "100 ms",
        },
    )
    try:
        idle = svc.open_session(SessionEnvironment())
        alive = svc.open_session(SessionEnvironment())
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            svc.heartbeat(alive)
            time.sleep(0.1)
        with pytest.raises(SessionNotFoundError):
            svc.heartbeat(idle)
        assert run(svc, alive, "SELECT 1") == [(1,)]
    finally:
        svc.stop()


def test_zero_idle_timeout_disables_expiry(spark: SparkSession) -> None:
    svc = make_service(
        spark,
        **{
            "sql-gateway.session.idle-timeout": "0 ms",
            "sql-gateway.session.check-interval": "50 ms",
        },
    )
    try:
        handle = svc.open_session(SessionEnvironment())
        time.sleep(0.3)
        svc.heartbeat(handle)
    finally:
        svc.stop()


def test_session_limit_refuses_only_the_new_caller(spark: SparkSession) -> None:
    svc = make_service(spark, **{"sql-gateway.session.max-num": "2"})
    try:
        first = svc.open_session(SessionEnvironment())
        second = svc.open_session(SessionEnvironment())
        with pytest.raises(SessionLimitError, match="maximum of 2 sessions"):
            svc.open_session(SessionEnvironment())
        assert run(svc, first, "SELECT 1") == [(1,)]
        svc.close_session(second)
        third = svc.open_session(SessionEnvironment())
        assert run(svc, third, "SELECT 2") == [(2,)]
    finally:
        svc.stop()


def test_unknown_handles_are_clear_errors(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    ghost_session = SessionHandle(uuid.uuid4())
    ghost_op = OperationHandle(uuid.uuid4())
    with pytest.raises(SessionNotFoundError, match=str(ghost_session)):
        service.execute_statement(ghost_session, "SELECT 1")
    with pytest.raises(OperationNotFoundError, match=str(ghost_op)):
        service.fetch_results(session, ghost_op, 0, 10)
    with pytest.raises(OperationNotFoundError):
        service.cancel_operation(session, ghost_op)
    with pytest.raises(OperationNotFoundError):
        service.close_operation(session, ghost_op)
    assert run(service, session, "SELECT 1") == [(1,)]


def test_operation_of_another_session_is_not_visible(service: SparkGatewayService) -> None:
    a = service.open_session(SessionEnvironment())
    b = service.open_session(SessionEnvironment())
    try:
        op = service.execute_statement(a, "SELECT 1")
        with pytest.raises(OperationNotFoundError):
            service.fetch_results(b, op, 0, 10)
    finally:
        service.close_session(a)
        service.close_session(b)
