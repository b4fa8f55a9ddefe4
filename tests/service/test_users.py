"""A session's user: Spark's current_user() while its statements run, the owner
of the jobs and materialized tables it makes (another user's session may not
stop, suspend, change or drop them), a cap on
the statements a user runs across sessions, and one FAIR pool per user."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sparkgate.api.auth import Principal
from sparkgate.api.errors import PermissionDeniedError, SessionLimitError
from sparkgate.api.jobs import JobStatus
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.session.session import user_pool

from .conftest import error_text, make_service, run, unique_name

# Runs until stopped: 2,000 tasks of 0.2 s each (reflection is allowed in tests' services).
ENDLESS = (
    "SELECT id + length(reflect('java.lang.Thread', 'sleep', CAST(200 AS BIGINT))) "
    "FROM range(0, 2000, 1, 2000)"
)


def as_user(name: str, admin: bool = False) -> SessionEnvironment:
    return SessionEnvironment(
        user=name, principal=Principal(name, mechanism="password", admin=admin)
    )


def test_current_user_is_the_sessions_user(service: SparkGatewayService) -> None:
    ann = service.open_session(SessionEnvironment(user="ann"))
    anonymous = service.open_session(SessionEnvironment())
    try:
        assert run(service, ann, "SELECT current_user(), session_user()") == [("ann", "ann")]
        # Not left behind on the worker thread for the next session's statement.
        (other,) = run(service, anonymous, "SELECT current_user()")
        assert other[0] != "ann"
    finally:
        service.close_session(ann)
        service.close_session(anonymous)


def test_only_its_user_or_an_admin_stops_a_job(service: SparkGatewayService) -> None:
    ann = service.open_session(as_user("ann"))
    bob = service.open_session(as_user("bob"))
    ops = service.open_session(as_user("ops", admin=True))
    table = unique_name("owned")
    try:
        run(service, ann, f"CREATE TABLE {table} (id BIGINT) USING parquet")
        job_id = run(
            service, ann, f"INSERT INTO {table} {ENDLESS}", config={"table.dml-sync": "false"}
        )[0][0]
        assert service.describe_job(job_id).user == "ann"
        message = error_text(service, bob, f"STOP JOB '{job_id}'")
        assert "belongs to user 'ann'" in message and "'bob' may not" in message
        assert service.describe_job(job_id).status is JobStatus.RUNNING
        run(service, ops, f"STOP JOB '{job_id}'")
        assert service.jobs.wait(job_id, timeout=120).status is JobStatus.CANCELED
    finally:
        run(service, ann, f"DROP TABLE IF EXISTS {table}")
        for handle in (ann, bob, ops):
            service.close_session(handle)


def test_a_materialized_table_is_changed_by_its_owner_or_an_admin_only(
    service: SparkGatewayService,
) -> None:
    ann, bob, ops = (
        service.open_session(as_user(name, admin=name == "ops")) for name in ("ann", "bob", "ops")
    )
    mt = unique_name("owned_mt")
    try:
        run(service, ann, f"CREATE MATERIALIZED TABLE {mt} REFRESH_MODE = FULL AS SELECT 1 AS x")
        for statement in (
            f"ALTER MATERIALIZED TABLE {mt} SUSPEND",
            f"ALTER MATERIALIZED TABLE {mt} RESUME",
            f"ALTER MATERIALIZED TABLE {mt} REFRESH",
            f"ALTER MATERIALIZED TABLE {mt} AS SELECT 2 AS x",
            f"CREATE OR ALTER MATERIALIZED TABLE {mt} REFRESH_MODE = FULL AS SELECT 3 AS x",
            f"DROP MATERIALIZED TABLE {mt}",
        ):
            message = error_text(service, bob, statement)
            assert "belongs to user 'ann'" in message and "'bob' may not" in message, statement
        with pytest.raises(PermissionDeniedError, match="belongs to user 'ann'"):
            service.refresh_materialized_table(
                bob, f"spark_catalog.default.{mt}", is_periodic=False
            )
        # Nothing bob tried took effect: the table is there, with ann's query.
        shown = run(service, ann, f"SHOW CREATE MATERIALIZED TABLE {mt}")[0][0]
        assert "SELECT 1 AS x" in shown
        run(service, ops, f"ALTER MATERIALIZED TABLE {mt} SUSPEND")  # an admin may
        run(service, ann, f"ALTER MATERIALIZED TABLE {mt} RESUME")
    finally:
        run(service, ann, f"DROP MATERIALIZED TABLE IF EXISTS {mt}")
        for handle in (ann, bob, ops):
            service.close_session(handle)


@pytest.mark.parametrize("environment", [SessionEnvironment(), SessionEnvironment(user="bob")])
def test_without_authentication_anybody_stops_a_job(
    service: SparkGatewayService, environment: SessionEnvironment
) -> None:
    owner = service.open_session(SessionEnvironment(user="ann"))
    other = service.open_session(environment)
    table = unique_name("unowned")
    try:
        run(service, owner, f"CREATE TABLE {table} (id BIGINT) USING parquet")
        job_id = run(
            service, owner, f"INSERT INTO {table} {ENDLESS}", config={"table.dml-sync": "false"}
        )[0][0]
        run(service, other, f"STOP JOB '{job_id}'")
        assert service.jobs.wait(job_id, timeout=120).status is JobStatus.CANCELED
    finally:
        run(service, owner, f"DROP TABLE IF EXISTS {table}")
        service.close_session(owner)
        service.close_session(other)


@pytest.fixture
def capped(spark: Any) -> Iterator[SparkGatewayService]:
    service = make_service(
        spark,
        **{
            "sql-gateway.user.max-running-statements": "2",
            "sql-gateway.security.allowed-host-statements": "reflection",
        },
    )
    yield service
    service.stop()


def test_a_user_runs_at_most_the_cap_across_sessions_and_others_go_on(
    capped: SparkGatewayService,
) -> None:
    sessions = [capped.open_session(as_user("ann")) for _ in range(3)]
    bob = capped.open_session(as_user("bob"))
    try:
        for handle in sessions[:2]:
            capped.execute_statement(handle, ENDLESS)
        with pytest.raises(SessionLimitError, match=r"sql-gateway\.user\.max-running-statements"):
            capped.execute_statement(sessions[2], ENDLESS)
        assert run(capped, bob, "SELECT 1") == [(1,)]
        # Ann's sessions share one FAIR pool; bob has his own.
        pools = {capped._session(h).scheduler_pool() for h in sessions}
        assert pools == {user_pool("ann")} and capped._session(bob).scheduler_pool() != user_pool(
            "ann"
        )
    finally:
        for handle in (*sessions, bob):
            capped.close_session(handle)
    # Closed sessions no longer count: ann runs again.
    again = capped.open_session(as_user("ann"))
    try:
        assert run(capped, again, "SELECT 2") == [(2,)]
    finally:
        capped.close_session(again)


@pytest.mark.parametrize(
    "key",
    [
        "spark.master",
        "spark.driver.memory",
        "spark.jars.packages",
        "spark.sql.catalog.evil",
        "SPARK.SQL.LEGACY.SETCOMMANDREJECTSSPARKCORECONFS",
    ],
)
def test_a_session_may_not_set_the_gateways_spark_settings(
    service: SparkGatewayService, key: str
) -> None:
    handle = service.open_session(SessionEnvironment())
    try:
        message = error_text(service, handle, f"SET '{key}' = 'x'")
        assert "sql-gateway.security.denied-spark-settings" in message
        assert key not in service.get_session_config(handle)
        overlaid = error_text(service, handle, "SELECT 1", config={key: "x"})
        assert "denied-spark-settings" in overlaid
    finally:
        service.close_session(handle)
    # Given at open (a JDBC URL's ;key=value), it is kept as given but never applied.
    opened = service.open_session(SessionEnvironment(config={key: "x"}))
    try:
        assert service._session(opened).spark.conf.get(key, None) != "x"
    finally:
        service.close_session(opened)
    # Ordinary Spark settings stay the session's to choose.
    other = service.open_session(SessionEnvironment(config={"spark.sql.shuffle.partitions": "3"}))
    try:
        run(service, other, "SET 'spark.sql.ansi.enabled' = 'true'")
        assert service.get_session_config(other)["spark.sql.shuffle.partitions"] == "3"
        # Applied to its Spark session, made at its first statement.
        assert service._session(other).spark.conf.get("spark.sql.shuffle.partitions") == "3"
    finally:
        service.close_session(other)


def test_a_user_holds_at_most_max_sessions(spark: Any) -> None:
    service = make_service(spark, **{"sql-gateway.user.max-sessions": "2"})
    try:
        first, second = (service.open_session(as_user("ann")) for _ in range(2))
        with pytest.raises(SessionLimitError, match=r"user 'ann'.*sql-gateway\.user\.max-sessions"):
            service.open_session(as_user("ann"))
        bob = service.open_session(as_user("bob"))  # another user is not held back
        anonymous = [service.open_session(SessionEnvironment(user="ann")) for _ in range(3)]
        service.close_session(first)
        third = service.open_session(as_user("ann"))  # a closed session frees its place
        for handle in (second, third, bob, *anonymous):
            service.close_session(handle)
    finally:
        service.stop()
