"""Materialized tables without Spark: the statement forms, freshness rules, the
definition's table properties, Quartz cron, and the embedded scheduler's
persistence (real APScheduler on a real SQLite file)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sparkgate.api.errors import ExecutionError, SqlParseError
from sparkgate.api.workflow import (
    CreatePeriodicRefreshWorkflow,
    DeleteRefreshWorkflow,
    ModifyRefreshWorkflowCronExpr,
    ResumeRefreshWorkflow,
    SuspendRefreshWorkflow,
    WorkflowError,
)
from sparkgate.service.materialized.definition import (
    Freshness,
    MaterializedTable,
    RefreshMode,
    RefreshStatus,
    cron_of,
    derive_mode,
)
from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.parser import parse_statement
from sparkgate.workflow.embedded.cron import cron_trigger, last_fire_time
from sparkgate.workflow.embedded.scheduler import (
    EmbeddedRefreshHandler,
    EmbeddedRefreshHandlerSerializer,
    EmbeddedWorkflowScheduler,
)
from tests.workflow_recorder import RecordingService

pytestmark = pytest.mark.unit

# -- statements ---------------------------------------------------------------------


def test_create_materialized_table_reads_every_clause() -> None:
    parsed = parse_statement(
        "create or alter materialized table c.d.t (constraint pk primary key (id) not enforced) "
        "comment 'c' partitioned by (ds) with ('format' = 'orc') "
        "freshness = interval '10' minutes refresh_mode = full as select id, ds from s;"
    )
    assert isinstance(parsed, k.CreateMaterializedTable)
    assert parsed.name == ("c", "d", "t") and parsed.or_alter
    assert parsed.primary_key == ("id",) and parsed.partition_keys == ("ds",)
    assert parsed.comment == "c" and dict(parsed.options) == {"format": "orc"}
    assert parsed.freshness == Freshness(10, "MINUTE") and parsed.refresh_mode == "FULL"
    assert parsed.query == "select id, ds from s"
    assert parsed.allowed_in_configure_session


@pytest.mark.parametrize(
    ("text", "kind", "fields"),
    [
        ("ALTER MATERIALIZED TABLE t SUSPEND", k.AlterMaterializedTable, {"action": "SUSPEND"}),
        (
            "ALTER MATERIALIZED TABLE t RESUME WITH ('a' = 'b')",
            k.AlterMaterializedTable,
            {"action": "RESUME", "options": {"a": "b"}},
        ),
        (
            "ALTER MATERIALIZED TABLE db.t REFRESH PARTITION (ds = '2024-01-01')",
            k.AlterMaterializedTable,
            {"action": "REFRESH", "partition": {"ds": "2024-01-01"}, "name": ("db", "t")},
        ),
        (
            "ALTER MATERIALIZED TABLE t AS SELECT 1 AS x",
            k.AlterMaterializedTable,
            {"action": "AS", "query": "SELECT 1 AS x"},
        ),
        ("DROP MATERIALIZED TABLE IF EXISTS t", k.DropMaterializedTable, {"if_exists": True}),
        ("SHOW MATERIALIZED TABLES", k.ShowMaterializedTables, {"database": ()}),
        (
            "SHOW MATERIALIZED TABLES FROM db NOT LIKE 'x%'",
            k.ShowMaterializedTables,
            {"database": ("db",)},
        ),
        ("SHOW CREATE MATERIALIZED TABLE t", k.ShowCreateMaterializedTable, {"name": ("t",)}),
        # Plain tables stay Spark's.
        ("DROP TABLE t", k.SparkCommand, {}),
        ("SHOW CREATE TABLE t", k.ShowCreateTable, {}),
    ],
)
def test_materialized_forms(text: str, kind: type, fields: Mapping[str, Any]) -> None:
    parsed = parse_statement(text)
    assert type(parsed) is kind
    for name, value in fields.items():
        got = getattr(parsed, name)
        assert (dict(got) if isinstance(value, dict) else got) == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("CREATE MATERIALIZED TABLE t AS", "needs a query after AS"),
        ("CREATE MATERIALIZED TABLE t (a INT) AS SELECT 1", "PRIMARY KEY"),
        ("CREATE MATERIALIZED TABLE t (PRIMARY KEY (a)) AS SELECT 1", "NOT ENFORCED"),
        ("CREATE MATERIALIZED TABLE t FRESHNESS = '5' AS SELECT 1", "INTERVAL"),
        ("CREATE MATERIALIZED TABLE t FRESHNESS = INTERVAL 'x' SECOND AS SELECT 1", "whole"),
        ("CREATE MATERIALIZED TABLE t FRESHNESS = INTERVAL '1' WEEK AS SELECT 1", "unit"),
        ("CREATE MATERIALIZED TABLE t REFRESH_MODE = SOMETIMES AS SELECT 1", "CONTINUOUS or"),
        ("CREATE MATERIALIZED TABLE t SELECT 1", "expected COMMENT"),
        ("ALTER MATERIALIZED TABLE t PAUSE", "SUSPEND, RESUME"),
        ("ALTER MATERIALIZED TABLE t SUSPEND NOW", "unexpected input"),
    ],
)
def test_malformed_forms_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(SqlParseError, match=message):
        parse_statement(text)


# -- freshness and definitions --------------------------------------------------------

_RULES = {
    "threshold": timedelta(minutes=30),
    "default_continuous": timedelta(minutes=3),
    "default_full": timedelta(hours=1),
}


@pytest.mark.parametrize(
    ("freshness", "mode", "expected"),
    [
        (Freshness(5, "SECOND"), None, (Freshness(5, "SECOND"), RefreshMode.CONTINUOUS)),
        (Freshness(30, "MINUTE"), None, (Freshness(30, "MINUTE"), RefreshMode.FULL)),
        (Freshness(29, "MINUTE"), None, (Freshness(29, "MINUTE"), RefreshMode.CONTINUOUS)),
        (Freshness(5, "SECOND"), "FULL", (Freshness(5, "SECOND"), RefreshMode.FULL)),
        (None, None, (Freshness(3, "MINUTE"), RefreshMode.CONTINUOUS)),
        (None, "FULL", (Freshness(1, "HOUR"), RefreshMode.FULL)),
        (None, "CONTINUOUS", (Freshness(3, "MINUTE"), RefreshMode.CONTINUOUS)),
    ],
)
def test_refresh_mode_from_freshness(
    freshness: Freshness | None, mode: str | None, expected: tuple[Freshness, RefreshMode]
) -> None:
    assert derive_mode(freshness, mode, **_RULES) == expected


@pytest.mark.parametrize(
    ("freshness", "cron"),
    [
        (Freshness(5, "SECOND"), "0/5 * * * * ? *"),
        (Freshness(15, "MINUTE"), "0 0/15 * * * ? *"),
        (Freshness(6, "HOUR"), "0 0 0/6 * * ? *"),
        (Freshness(1, "DAY"), "0 0 0 * * ? *"),
    ],
)
def test_cron_of_freshness(freshness: Freshness, cron: str) -> None:
    assert cron_of(freshness) == cron
    cron_trigger(cron)  # APScheduler reads it


@pytest.mark.parametrize(
    ("freshness", "rule"),
    [
        (Freshness(7, "SECOND"), "divides 60"),
        (Freshness(45, "MINUTE"), "divides 60"),
        (Freshness(5, "HOUR"), "divides 24"),
        (Freshness(2, "DAY"), "one day"),
    ],
)
def test_freshness_no_cron_can_say(freshness: Freshness, rule: str) -> None:
    with pytest.raises(ExecutionError, match=rule):
        cron_of(freshness)


def test_definition_round_trips_through_table_properties() -> None:
    table = MaterializedTable(
        ("spark_catalog", "db", "t"),
        "SELECT 'it''s' AS x",
        Freshness(2, "HOUR"),
        "AUTOMATIC",
        RefreshMode.FULL,
        RefreshStatus.SUSPENDED,
        "{\n  workflowName: w\n}",
        b'{"workflowName": "w"}',
        ("x",),
        (),
        None,
        {"format": "parquet"},
    )
    props = table.properties()
    assert all(key.startswith("materialized-table.") for key in props)
    back = MaterializedTable.from_properties(("spark_catalog", "db", "t"), props)
    assert back == table
    assert MaterializedTable.from_properties(("c", "d", "t"), {"comment": "x"}) is None
    assert table.name == "`spark_catalog`.`db`.`t`"


def test_show_create_masks_a_connectors_secrets() -> None:
    from sparkgate.service.statements.handlers.materialized import show_create_text

    table = MaterializedTable(
        ("spark_catalog", "default", "t"),
        "SELECT id FROM src",
        Freshness(3, "MINUTE"),
        "AUTOMATIC",
        RefreshMode.CONTINUOUS,
        options={"connector": "jdbc", "url": "jdbc:postgresql://h/db", "password": "s3cret"},
    )
    text = show_create_text(table, [("id", "INT")])
    assert "'url' = 'jdbc:postgresql://h/db'" in text
    assert "s3cret" not in text and "'password' = '******'" in text


# -- cron ---------------------------------------------------------------------------


def test_quartz_days_of_week_and_steps() -> None:
    # Quartz: 2-6 is Monday to Friday; APScheduler counts from Monday = 0.
    trigger = cron_trigger("0 30 9 ? * 2-6")
    friday = datetime(2024, 1, 5, 10, 0).astimezone()
    assert trigger.get_next_fire_time(None, friday).weekday() == 0  # next is Monday
    with pytest.raises(WorkflowError, match="six or seven"):
        cron_trigger("* * * *")
    with pytest.raises(WorkflowError, match="Invalid cron"):
        cron_trigger("0 0 25 * * ? *")


def test_last_fire_time_is_the_schedule_time_of_the_fire_now() -> None:
    now = datetime(2024, 1, 2, 10, 17, 42).astimezone()
    assert last_fire_time("0/5 * * * * ? *", now) == now.replace(second=40)
    assert last_fire_time("0 0/15 * * * ? *", now) == now.replace(minute=15, second=0)
    assert last_fire_time("0 0 0 * * ? *", now) == now.replace(hour=0, minute=0, second=0)


# -- the embedded scheduler -------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "scheduler" / "workflows.sqlite"


@pytest.fixture
def service() -> RecordingService:
    return RecordingService()


def _scheduler(
    store: Path, service: RecordingService, grace: timedelta = timedelta(hours=1)
) -> EmbeddedWorkflowScheduler:
    scheduler = EmbeddedWorkflowScheduler(store, service, misfire_grace=grace, max_concurrent=2)
    scheduler.open()
    return scheduler


@pytest.fixture
def scheduler(store: Path, service: RecordingService) -> Iterator[EmbeddedWorkflowScheduler]:
    scheduler = _scheduler(store, service)
    yield scheduler
    scheduler.close()


def _create(scheduler: EmbeddedWorkflowScheduler, cron: str) -> EmbeddedRefreshHandler:
    return scheduler.create_refresh_workflow(
        CreatePeriodicRefreshWorkflow(
            materialized_table="`c`.`d`.`t`",
            description="refresh of t",
            cron_expression=cron,
            init_config={"spark.sql.shuffle.partitions": "2"},
        )
    )


def test_a_workflow_fires_through_the_service(
    scheduler: EmbeddedWorkflowScheduler, service: RecordingService
) -> None:
    handler = _create(scheduler, "0/1 * * * * ? *")
    assert handler == EmbeddedRefreshHandler("quartz_job_`c`.`d`.`t`", "default_group")
    assert service.fired.wait(10)
    refresh = service.refreshes[0]
    assert refresh["identifier"] == "`c`.`d`.`t`" and refresh["is_periodic"] is True
    scheduled = datetime.strptime(refresh["schedule_time"], "%Y-%m-%d %H:%M:%S")
    assert abs((datetime.now() - scheduled).total_seconds()) < 5
    assert service.config == {"spark.sql.shuffle.partitions": "2"}
    deadline = time.monotonic() + 5
    while service.open_sessions and time.monotonic() < deadline:
        time.sleep(0.05)
    assert service.open_sessions == 0  # the refresh session is closed again
    with pytest.raises(WorkflowError, match="already exists"):
        _create(scheduler, "0/1 * * * * ? *")


def test_workflows_survive_a_restart_suspended_or_not(
    store: Path, service: RecordingService, tmp_path: Path
) -> None:
    first = _scheduler(store, service)
    active = _create(first, "0 0 0 * * ? *")
    paused = first.create_refresh_workflow(
        CreatePeriodicRefreshWorkflow(
            materialized_table="`c`.`d`.`p`", description="p", cron_expression="0 0 0 * * ? *"
        )
    )
    first.modify_refresh_workflow(SuspendRefreshWorkflow(paused))
    first.close()
    second = _scheduler(store, service)
    try:
        assert second.workflow(active)["suspended"] is False  # type: ignore[index]
        assert second.workflow(paused)["suspended"] is True  # type: ignore[index]
        second.modify_refresh_workflow(ResumeRefreshWorkflow(paused, dynamic_options={"k": "v"}))
        resumed = second.workflow(paused)
        assert resumed is not None and resumed["dynamic_options"] == {"k": "v"}
        assert resumed["suspended"] is False
        second.modify_refresh_workflow(
            ModifyRefreshWorkflowCronExpr(active, cron_expression="0 0 0/2 * * ? *")
        )
        assert second.workflow(active)["cron_expression"] == "0 0 0/2 * * ? *"  # type: ignore[index]
        second.delete_refresh_workflow(DeleteRefreshWorkflow(active))
        second.delete_refresh_workflow(DeleteRefreshWorkflow(active))  # gone: no error
        assert second.workflow(active) is None
        with pytest.raises(WorkflowError, match="No refresh workflow"):
            second.modify_refresh_workflow(SuspendRefreshWorkflow(active))
    finally:
        second.close()


def test_a_fire_missed_while_down_runs_once_within_the_grace_time(
    store: Path, service: RecordingService
) -> None:
    first = _scheduler(store, service)
    _create(first, "0/1 * * * * ? *")
    first.close()
    time.sleep(3)  # several fire times pass while the scheduler is down
    service.refreshes.clear()
    service.fired.clear()
    second = _scheduler(store, service)
    try:
        assert service.fired.wait(10)
        time.sleep(0.5)
        # The missed fires coalesce into one; then the schedule goes on.
        first_fires = [r["schedule_time"] for r in service.refreshes]
        assert len(set(first_fires)) == len(first_fires)
    finally:
        second.close()


def test_handlers_serialize_as_flinks_json() -> None:
    serializer = EmbeddedRefreshHandlerSerializer()
    handler = EmbeddedRefreshHandler("quartz_job_x", "default_group")
    data = serializer.serialize(handler)
    assert data == b'{"workflowName": "quartz_job_x", "workflowGroup": "default_group"}'
    assert serializer.deserialize(data) == handler
    with pytest.raises(WorkflowError):
        serializer.deserialize(b"{}")


def test_the_scheduler_starts_with_its_first_workflow(
    store: Path, service: RecordingService
) -> None:
    first = _scheduler(store, service)
    try:
        assert not store.exists()  # no workflow yet: no scheduler, no store
        assert first.workflow(EmbeddedRefreshHandler("quartz_job_x")) is None
        first.delete_refresh_workflow(DeleteRefreshWorkflow(EmbeddedRefreshHandler("x")))
        with pytest.raises(WorkflowError, match="No refresh workflow"):
            first.modify_refresh_workflow(SuspendRefreshWorkflow(EmbeddedRefreshHandler("x")))
        _create(first, "0 0 0 * * ? *")
        assert store.exists()
        # One store, one scheduler per process.
        with pytest.raises(WorkflowError, match="in use"):
            _scheduler(store, service)
    finally:
        first.close()
    with pytest.raises(WorkflowError, match="not open"):
        first.workflow(EmbeddedRefreshHandler("quartz_job_x"))
