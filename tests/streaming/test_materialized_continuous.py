"""Materialized tables in CONTINUOUS mode: a streaming job keeps the table equal to
its query over a directory receiving files; with a primary key as upserts;
SUSPEND and RESUME lose and double nothing."""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from sparkgate.api.handles import SessionHandle
from sparkgate.service.gateway import SparkGatewayService
from tests.streaming.conftest import name, run, wait_for

pytestmark = pytest.mark.service


def _drop_file(directory: Path, rows: list[dict[str, Any]]) -> None:
    """A new JSON file in ``directory``, appearing whole (written aside, then renamed)."""
    directory.mkdir(parents=True, exist_ok=True)
    staged = directory.parent / f".{uuid.uuid4().hex}.json"
    staged.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.replace(staged, directory / f"part-{uuid.uuid4().hex}.json")


def _source(service: SparkGatewayService, s: SessionHandle, directory: Path) -> str:
    table = name("events")
    run(
        service,
        s,
        f"CREATE TABLE {table} (k STRING, v INT) WITH ('connector' = 'filesystem', "
        f"'path' = '{directory}', 'format' = 'json')",
    )
    return table


def _rows(service: SparkGatewayService, s: SessionHandle, query: str) -> list[tuple[Any, ...]]:
    return sorted(run(service, s, query))


def _describe(service: SparkGatewayService, s: SessionHandle, table: str) -> dict[str, Any]:
    return {str(r[0]): r[1] for r in run(service, s, f"DESCRIBE {table}")}


def test_continuous_append_follows_new_files_and_resumes_exactly(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    service, s = stream_service, session
    directory = tmp_path / "in"
    _drop_file(directory, [{"k": "a", "v": 1}, {"k": "b", "v": 2}])
    src = _source(service, s, directory)
    mt = name("mt")
    run(
        service,
        s,
        f"CREATE MATERIALIZED TABLE {mt} FRESHNESS = INTERVAL '1' SECOND "
        f"AS SELECT k, v * 10 AS v10 FROM {src}",
    )
    described = _describe(service, s, mt)
    assert described["refresh mode"] == "CONTINUOUS"  # 1 s is below the 30 min threshold
    assert described["refresh status"] == "ACTIVATED"
    jobs = [j for j in service.list_jobs() if j.name == f"spark_catalog.default.{mt}"]
    assert len(jobs) == 1 and jobs[0].status.value == "RUNNING" and jobs[0].streaming
    assert jobs[0].job_id in str(described["refresh handler"])

    def truth() -> list[tuple[Any, ...]]:
        return _rows(service, s, f"SELECT k, v * 10 FROM {src}")

    assert wait_for(lambda: _rows(service, s, f"SELECT * FROM {mt}") == truth(), 90)
    _drop_file(directory, [{"k": "c", "v": 3}])
    assert wait_for(lambda: _rows(service, s, f"SELECT * FROM {mt}") == truth(), 90)
    # Suspended: new files wait; resumed: they arrive once.
    run(service, s, f"ALTER MATERIALIZED TABLE {mt} SUSPEND")
    assert _describe(service, s, mt)["refresh status"] == "SUSPENDED"
    assert service.describe_job(jobs[0].job_id).status.value == "FINISHED"  # with a savepoint
    _drop_file(directory, [{"k": "d", "v": 4}, {"k": "e", "v": 5}])
    time.sleep(3)
    assert ("d", 40) not in _rows(service, s, f"SELECT * FROM {mt}")
    run(service, s, f"ALTER MATERIALIZED TABLE {mt} RESUME")
    assert _describe(service, s, mt)["refresh status"] == "ACTIVATED"
    assert wait_for(lambda: _rows(service, s, f"SELECT * FROM {mt}") == truth(), 90)
    time.sleep(2)
    assert _rows(service, s, f"SELECT * FROM {mt}") == truth()  # nothing doubled later
    running = [
        j
        for j in service.list_jobs()
        if j.name == f"spark_catalog.default.{mt}" and j.status.value == "RUNNING"
    ]
    assert len(running) == 1 and running[0].restored_from
    run(service, s, f"DROP MATERIALIZED TABLE {mt}")
    assert service.describe_job(running[0].job_id).status.value == "CANCELED"


def test_continuous_with_primary_key_holds_the_aggregate(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    service, s = stream_service, session
    directory = tmp_path / "agg"
    _drop_file(directory, [{"k": "a", "v": 1}, {"k": "a", "v": 2}, {"k": "b", "v": 5}])
    src = _source(service, s, directory)
    mt = name("agg")
    query = f"SELECT k, count(*) AS n, sum(v) AS total FROM {src} GROUP BY k"
    run(
        service,
        s,
        f"CREATE MATERIALIZED TABLE {mt} (PRIMARY KEY (k) NOT ENFORCED) "
        f"FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS AS {query}",
    )

    def current() -> list[tuple[Any, ...]]:
        return _rows(service, s, f"SELECT k, n, total FROM {mt}")

    # A session that described the table first still sees every new version.
    assert _describe(service, s, mt)["refresh mode"] == "CONTINUOUS"

    def truth() -> list[tuple[Any, ...]]:
        return _rows(service, s, query)

    assert wait_for(lambda: current() == truth(), 90)
    _drop_file(directory, [{"k": "a", "v": 10}, {"k": "c", "v": 7}])
    assert wait_for(lambda: current() == truth(), 90)
    run(service, s, f"ALTER MATERIALIZED TABLE {mt} SUSPEND")
    _drop_file(directory, [{"k": "b", "v": 1}, {"k": "d", "v": 1}])
    time.sleep(3)
    assert ("d", 1, 1) not in current()
    run(service, s, f"ALTER MATERIALIZED TABLE {mt} RESUME")
    assert wait_for(lambda: current() == truth(), 90)
    assert current() == [("a", 3, 13), ("b", 2, 6), ("c", 1, 7), ("d", 1, 1)]
    run(service, s, f"DROP MATERIALIZED TABLE {mt}")


def test_continuous_aggregate_without_key_is_a_clear_error(
    stream_service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> None:
    service, s = stream_service, session
    directory = tmp_path / "nokey"
    _drop_file(directory, [{"k": "a", "v": 1}])
    src = _source(service, s, directory)
    mt = name("nokey")
    from tests.service.conftest import error_text

    text = error_text(
        service,
        s,
        f"CREATE MATERIALIZED TABLE {mt} FRESHNESS = INTERVAL '1' SECOND "
        f"AS SELECT k, count(*) AS n FROM {src} GROUP BY k",
    )
    assert "PRIMARY KEY" in text
    assert not [r for r in run(service, s, "SHOW TABLES") if r[0] == mt]
    assert not [j for j in service.list_jobs() if j.name.endswith(mt)]


def test_connector_tables_kept_fresh_continuously(
    stream_service: SparkGatewayService,
    session: SessionHandle,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """WITH ('connector' = ...): the job writes into that connector's table as a
    streaming INSERT does; an aggregation without a key goes to a sink that takes
    its changes (Flink's own example is one into blackhole)."""
    service, s = stream_service, session
    directory = tmp_path / "in"
    _drop_file(directory, [{"k": "a", "v": 1}, {"k": "a", "v": 2}, {"k": "b", "v": 5}])
    src = _source(service, s, directory)
    caplog.set_level(logging.INFO, logger="sparkgate.print")
    printed = name("printed")
    run(
        service,
        s,
        f"CREATE MATERIALIZED TABLE {printed} WITH ('connector' = 'print', "
        f"'print-identifier' = '{printed}') FRESHNESS = INTERVAL '1' SECOND "
        f"AS SELECT k, count(*) AS n, sum(v) AS total FROM {src} GROUP BY k",
    )
    assert wait_for(lambda: f"{printed}> +I[a, 2, 3]" in caplog.text, 90)
    _drop_file(directory, [{"k": "a", "v": 10}])
    assert wait_for(lambda: f"{printed}> +I[a, 3, 13]" in caplog.text, 90)
    described = _describe(service, s, printed)
    assert (described["refresh mode"], described["refresh status"]) == ("CONTINUOUS", "ACTIVATED")
    files, out = name("files"), tmp_path / "out"
    run(
        service,
        s,
        f"CREATE MATERIALIZED TABLE {files} WITH ('connector' = 'filesystem', "
        f"'path' = '{out}', 'format' = 'json') FRESHNESS = INTERVAL '1' SECOND "
        f"AS SELECT k, v * 10 AS v10 FROM {src}",
    )

    def truth() -> list[tuple[Any, ...]]:
        return _rows(service, s, f"SELECT k, v * 10 FROM {src}")

    assert wait_for(lambda: _rows(service, s, f"SELECT * FROM {files}") == truth(), 90)
    run(service, s, f"ALTER MATERIALIZED TABLE {files} SUSPEND")
    _drop_file(directory, [{"k": "c", "v": 3}])
    run(service, s, f"ALTER MATERIALIZED TABLE {files} RESUME")
    assert wait_for(lambda: _rows(service, s, f"SELECT * FROM {files}") == truth(), 90)
    jobs = [j for j in service.list_jobs() if j.name.endswith((printed, files))]
    running = [j for j in jobs if j.status.value == "RUNNING"]
    assert len(running) == 2
    for table in (printed, files):
        run(service, s, f"DROP MATERIALIZED TABLE {table}")
    assert all(service.describe_job(j.job_id).status.value == "CANCELED" for j in running)
    assert not [r for r in run(service, s, "SHOW TABLES") if r[0] in (printed, files)]
    assert any(out.rglob("*.json"))  # a dropped filesystem table's files stay, as in Flink


def test_a_graceful_restart_starts_the_continuous_job_again(spark: Any, tmp_path: Path) -> None:
    from sparkgate.api.session import SessionEnvironment
    from tests.service.conftest import service_on

    directory = tmp_path / "restart"
    _drop_file(directory, [{"k": "a", "v": 1}])
    data_dir = tmp_path / "data"
    mt = name("again")
    with service_on(spark, data_dir) as first:
        s = first.open_session(SessionEnvironment())
        src = _source(first, s, directory)
        run(
            first,
            s,
            f"CREATE MATERIALIZED TABLE {mt} FRESHNESS = INTERVAL '1' SECOND "
            f"AS SELECT k, v FROM {src}",
        )
        assert wait_for(lambda: _rows(first, s, f"SELECT * FROM {mt}") == [("a", 1)], 90)
        [old] = [j for j in first.list_jobs() if j.name.endswith(mt)]
    _drop_file(directory, [{"k": "b", "v": 2}])
    with service_on(spark, data_dir) as second:
        s = second.open_session(SessionEnvironment())
        jobs = {j.job_id: j for j in second.list_jobs() if j.name.endswith(mt)}
        assert jobs[old.job_id].status.value == "CANCELED"
        assert "gateway stopped" in str(jobs[old.job_id].cause)
        [new] = [j for j in jobs.values() if j.status.value == "RUNNING"]
        assert new.restored_from
        expected = [("a", 1), ("b", 2)]
        assert wait_for(lambda: _rows(second, s, f"SELECT * FROM {mt}") == expected, 90)
        time.sleep(2)
        assert _rows(second, s, f"SELECT * FROM {mt}") == expected  # nothing twice
        # A job a user stops stays stopped at the next start.
        second.stop_job(new.job_id)
    with service_on(spark, data_dir) as third:
        assert not [
            j for j in third.list_jobs() if j.name.endswith(mt) and j.status.value == "RUNNING"
        ]
        s = third.open_session(SessionEnvironment())
        run(third, s, f"DROP MATERIALIZED TABLE {mt}")
