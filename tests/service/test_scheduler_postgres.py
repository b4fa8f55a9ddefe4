"""The embedded workflow scheduler on a shared PostgreSQL state database: two
schedulers (two gateways) on one database refresh each fire time once among
them, and the survivor goes on when one stops (see
tests/unit/test_scheduler_shared_store.py for the same on SQLite)."""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkgate.workflow.embedded.scheduler import EmbeddedWorkflowScheduler
from tests.postgres import PostgresServer
from tests.unit.test_scheduler_shared_store import check_exactly_once, create, open_scheduler
from tests.workflow_recorder import RecordingService

pytestmark = pytest.mark.service


@pytest.fixture
def database(postgres: PostgresServer) -> Iterator[str]:
    """A fresh database for one test, dropped after it."""
    name = f"scheduler_{uuid.uuid4().hex[:12]}"
    postgres.psql(f'CREATE DATABASE "{name}" OWNER "{postgres.user}"', database="postgres")
    yield name
    with contextlib.suppress(AssertionError):
        postgres.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', database="postgres")


def _url(postgres: PostgresServer, database: str) -> str:
    return (
        f"postgresql+psycopg://{postgres.user}:{postgres.password}"
        f"@{postgres.host}:{postgres.port}/{database}"
    )


def test_each_fire_time_refreshes_once_on_postgres(
    postgres: PostgresServer, database: str, tmp_path: Path
) -> None:
    url = _url(postgres, database)

    def count_claims() -> int:
        return int(
            postgres.psql("SELECT count(*) FROM sparkgate_workflow_fires", database=database)
        )

    check_exactly_once(
        lambda name, service: open_scheduler(tmp_path / name, service, url), count_claims
    )
    tables = postgres.psql(
        "SELECT tablename FROM pg_tables WHERE tablename LIKE 'sparkgate_workflow%' "
        "ORDER BY tablename",
        database=database,
    ).split()
    assert tables == ["sparkgate_workflow_fires", "sparkgate_workflows"]
    assert not (tmp_path / "a" / "scheduler").exists()


def test_schedulers_starting_at_once_create_the_tables_once(
    postgres: PostgresServer, database: str, tmp_path: Path
) -> None:
    url = _url(postgres, database)
    opened: list[EmbeddedWorkflowScheduler] = []
    failures: list[BaseException] = []

    def start(name: str) -> None:
        try:
            opened.append(open_scheduler(tmp_path / name, RecordingService(name), url))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=start, args=(f"g{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    try:
        assert not failures, failures
        assert len(opened) == 4
        handler = create(opened[0])
        assert all(scheduler.workflow(handler) is not None for scheduler in opened)
    finally:
        for scheduler in opened:
            scheduler.close()
