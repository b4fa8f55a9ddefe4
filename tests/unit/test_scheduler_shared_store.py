"""The embedded workflow scheduler on a shared store (``sql-gateway.state.url``):
several schedulers on one database refresh each fire time once among them, see
each other's changes, and go on firing when one of them stops.

Two schedulers of one process stand for two gateways here, each with its own
data directory and its own gateway service; the database is a SQLite file
(tests/service/test_scheduler_postgres.py does the same on PostgreSQL).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sparkgate.api.workflow import (
    SCHEDULE_TIME_FORMAT,
    CreatePeriodicRefreshWorkflow,
    DeleteRefreshWorkflow,
    ModifyRefreshWorkflowCronExpr,
    ResumeRefreshWorkflow,
    SuspendRefreshWorkflow,
    WorkflowError,
    WorkflowSchedulerContext,
)
from sparkgate.workflow.embedded.scheduler import (
    EmbeddedRefreshHandler,
    EmbeddedWorkflowScheduler,
    EmbeddedWorkflowSchedulerFactory,
)
from tests.workflow_recorder import RecordingService

EVERY_SECOND = "0/1 * * * * ? *"
NEVER_SOON = "0 0 0 1 1 ? 2098"


def open_scheduler(
    data_dir: Path, service: RecordingService, state_url: str | None
) -> EmbeddedWorkflowScheduler:
    """A gateway's embedded scheduler, made as the gateway makes it, and opened."""
    scheduler = EmbeddedWorkflowSchedulerFactory().create_workflow_scheduler(
        WorkflowSchedulerContext({}, {}, str(data_dir), service, state_url=state_url)
    )
    scheduler.open()
    return scheduler


def create(
    scheduler: EmbeddedWorkflowScheduler, cron: str = EVERY_SECOND
) -> EmbeddedRefreshHandler:
    return scheduler.create_refresh_workflow(
        CreatePeriodicRefreshWorkflow(
            materialized_table="`c`.`d`.`t`", description="refresh of t", cron_expression=cron
        )
    )


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def started(scheduler: EmbeddedWorkflowScheduler) -> bool:
    return scheduler.running


def all_times(*services: RecordingService) -> list[str]:
    return [t for service in services for t in service.times()]


def check_exactly_once(
    open_one: Callable[[str, RecordingService], EmbeddedWorkflowScheduler],
    count_claims: Callable[[], int],
) -> None:
    """Two schedulers on one store: each fire time refreshes once in all; when one
    closes, the other fires on. ``open_one(name, service)`` opens a scheduler;
    ``count_claims()`` counts the rows of the claims table."""
    a_service, b_service = RecordingService("a"), RecordingService("b")
    a = open_one("a", a_service)
    b = open_one("b", b_service)
    try:
        assert a.running and b.running  # a shared store: started before any workflow
        handler = create(a)
        # b reads the workflow from the store at once.
        assert b.workflow(handler) is not None
        time.sleep(5)
        assert a.running and b.running
        times = all_times(a_service, b_service)
        assert len(times) >= 3, times  # about five fire times passed
        assert sorted(times) == sorted(set(times)), f"a fire time refreshed twice: {times}"
        # Every refresh is of a whole second, the schedule's own.
        for value in times:
            datetime.strptime(value, SCHEDULE_TIME_FORMAT)

        # a stops: b goes on alone (it learnt of a's workflow by reading the store).
        a.close()
        closed_at = datetime.now().replace(microsecond=0)
        time.sleep(0.5)  # a refresh a started before closing may still end
        before = set(all_times(a_service))
        survivor_before = len(b_service.times())
        assert wait_for(lambda: len(b_service.times()) >= survivor_before + 2, timeout=8), (
            f"the survivor did not take over: {b_service.times()}"
        )
        assert set(a_service.times()) == before  # the closed one fires no more
        later = [
            t for t in b_service.times() if datetime.strptime(t, SCHEDULE_TIME_FORMAT) > closed_at
        ]
        assert later, b_service.times()
        times = all_times(a_service, b_service)
        assert sorted(times) == sorted(set(times)), f"a fire time refreshed twice: {times}"

        b.modify_refresh_workflow(SuspendRefreshWorkflow(handler))
        time.sleep(0.5)  # a refresh started before the suspension may still end
        # Each claimed fire time was refreshed, once.
        assert count_claims() == len(all_times(a_service, b_service))
        b.delete_refresh_workflow(DeleteRefreshWorkflow(handler))
        assert b.workflow(handler) is None
    finally:
        a.close()
        b.close()


# -- on a SQLite file ----------------------------------------------------------------


@pytest.fixture
def state_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'state.sqlite'}"


def test_each_fire_time_refreshes_once_among_the_schedulers(tmp_path: Path, state_url: str) -> None:
    def count_claims() -> int:
        with sqlite3.connect(tmp_path / "state.sqlite") as db:
            return int(db.execute("SELECT count(*) FROM sparkgate_workflow_fires").fetchone()[0])

    check_exactly_once(
        lambda name, service: open_scheduler(tmp_path / name, service, state_url), count_claims
    )
    # The workflows are in the state database, not under the data directories.
    assert not (tmp_path / "a" / "scheduler").exists()
    assert not (tmp_path / "b" / "scheduler").exists()
    with sqlite3.connect(tmp_path / "state.sqlite") as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        assert {"sparkgate_workflows", "sparkgate_workflow_fires"} <= tables


def test_one_claim_wins_a_fire_time(tmp_path: Path, state_url: str) -> None:
    a = open_scheduler(tmp_path / "a", RecordingService("a"), state_url)
    b = open_scheduler(tmp_path / "b", RecordingService("b"), state_url)
    try:
        fire = datetime(2024, 1, 2, 10, 17, 42).astimezone()
        assert a._claim("default_group.w", fire) is True
        assert b._claim("default_group.w", fire) is False
        assert a._claim("default_group.w", fire) is False
        assert b._claim("default_group.w", fire + timedelta(seconds=1)) is True
        assert b._claim("default_group.other", fire) is True
    finally:
        a.close()
        b.close()


def test_a_change_through_one_gateway_holds_for_the_other(tmp_path: Path, state_url: str) -> None:
    a_service, b_service = RecordingService("a"), RecordingService("b")
    a = open_scheduler(tmp_path / "a", a_service, state_url)
    b = open_scheduler(tmp_path / "b", b_service, state_url)
    try:
        handler = create(a)
        assert wait_for(lambda: bool(all_times(a_service, b_service)))
        # Suspended through b: neither fires any more.
        b.modify_refresh_workflow(SuspendRefreshWorkflow(handler))
        assert a.workflow(handler)["suspended"] is True  # type: ignore[index]
        time.sleep(0.5)  # a refresh started before the suspension may still end
        count = len(all_times(a_service, b_service))
        time.sleep(3)
        assert len(all_times(a_service, b_service)) == count
        assert a.workflow(handler)["suspended"] is True  # type: ignore[index]

        # Resumed through b with options: the next refreshes have them.
        b.modify_refresh_workflow(ResumeRefreshWorkflow(handler, dynamic_options={"k": "v"}))
        assert wait_for(
            lambda: any(
                r["dynamic_options"] == {"k": "v"}
                for r in a_service.refreshes + b_service.refreshes
            )
        )

        # Re-scheduled through a to a far time: nothing fires.
        a.modify_refresh_workflow(
            ModifyRefreshWorkflowCronExpr(handler, cron_expression=NEVER_SOON)
        )
        seen = b.workflow(handler)
        assert seen is not None and seen["cron_expression"] == NEVER_SOON
        assert seen["next_fire_time"].year == 2098
        time.sleep(0.5)
        count = len(all_times(a_service, b_service))
        time.sleep(2.5)
        assert len(all_times(a_service, b_service)) == count
        times = all_times(a_service, b_service)
        assert sorted(times) == sorted(set(times)), times

        # Deleted through b: gone for a too, and a name can be used again.
        b.delete_refresh_workflow(DeleteRefreshWorkflow(handler))
        assert a.workflow(handler) is None
        with pytest.raises(WorkflowError, match="No refresh workflow"):
            a.modify_refresh_workflow(SuspendRefreshWorkflow(handler))
        create(a, NEVER_SOON)
        with pytest.raises(WorkflowError, match="already exists"):
            create(b, NEVER_SOON)
    finally:
        a.close()
        b.close()


# -- the default: a SQLite file under the data directory -----------------------------


def test_without_a_state_url_the_workflows_are_in_the_data_directory(tmp_path: Path) -> None:
    service = RecordingService("a")
    store = tmp_path / "scheduler" / "workflows.sqlite"
    scheduler = open_scheduler(tmp_path, service, None)
    try:
        assert scheduler.store == store
        # No workflow yet: no scheduler, no file.
        assert not started(scheduler) and not store.exists()
        create(scheduler)
        assert started(scheduler) and store.exists()
        assert wait_for(lambda: len(service.times()) >= 2)
        times = service.times()
        assert sorted(times) == sorted(set(times)), times
        with sqlite3.connect(store) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            assert {"apscheduler_jobs", "sparkgate_workflow_fires"} <= tables
            (claims,) = db.execute("SELECT count(*) FROM sparkgate_workflow_fires").fetchone()
            assert claims >= len(times)  # each refresh claimed its fire time
        # One file, one scheduler per process.
        with pytest.raises(WorkflowError, match="in use"):
            open_scheduler(tmp_path, RecordingService("b"), None)
    finally:
        scheduler.close()


# -- the URL's password ----------------------------------------------------------------


def test_the_state_urls_password_is_never_shown(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = "postgresql+psycopg://gateway:s3cr3t-pw@127.0.0.1:1/state?connect_timeout=2"
    caplog.set_level(logging.DEBUG)
    scheduler = EmbeddedWorkflowSchedulerFactory().create_workflow_scheduler(
        WorkflowSchedulerContext({}, {}, str(tmp_path), None, state_url=url)
    )
    assert "s3cr3t-pw" not in scheduler.location and "127.0.0.1:1/state" in scheduler.location
    with pytest.raises(WorkflowError) as failed:
        scheduler.open()
    assert "s3cr3t-pw" not in str(failed.value)
    assert failed.value.__cause__ is None
    assert "127.0.0.1:1/state" in str(failed.value)
    assert "s3cr3t-pw" not in caplog.text
    assert not scheduler.running


@pytest.fixture(autouse=True)
def _no_scheduler_left(request: pytest.FixtureRequest) -> Iterator[None]:
    # Only this test's: in the whole suite, gateways of other tests run theirs.
    from sparkgate.workflow.embedded import scheduler as module

    def live() -> set[int]:
        with module._LIVE_LOCK:
            return {id(s) for schedulers in module._LIVE.values() for s in schedulers}

    before = live()
    yield
    left = live() - before
    assert not left, f"{request.node.name} left {len(left)} schedulers running"
