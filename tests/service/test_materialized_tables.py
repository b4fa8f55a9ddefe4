"""Materialized tables in FULL mode: the statements, the embedded scheduler's
refreshes, manual and REST-style refreshes, partitions, and bad input."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sparkgate.api.config import Configuration
from sparkgate.api.errors import ConfigurationError, GatewayError
from sparkgate.api.handles import SessionHandle
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.workflow.embedded.scheduler import EmbeddedRefreshHandler
from tests.service.conftest import error_text, fetch_all, make_service, run, unique_name

pytestmark = pytest.mark.service


def _wait(predicate: Callable[[], bool], timeout: float = 90.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


@pytest.fixture(scope="module")
def mt_service(spark: Any) -> Iterator[SparkGatewayService]:
    service = make_service(spark)
    yield service
    service.stop()


@pytest.fixture
def s(mt_service: SparkGatewayService) -> Iterator[SessionHandle]:
    from sparkgate.api.session import SessionEnvironment

    handle = mt_service.open_session(SessionEnvironment(session_name="mt"))
    yield handle
    mt_service.close_session(handle)


def _source(service: SparkGatewayService, s: SessionHandle, rows: str) -> str:
    src = unique_name("src")
    run(service, s, f"CREATE TABLE {src} (id INT, amount DECIMAL(10, 2), ds STRING) USING parquet")
    run(service, s, f"INSERT INTO {src} VALUES {rows}")
    return src


def _describe(service: SparkGatewayService, s: SessionHandle, table: str) -> dict[str, Any]:
    return {str(r[0]): r[1] for r in run(service, s, f"DESCRIBE {table}")}


def _jobs_of(service: SparkGatewayService, table: str) -> list[Any]:
    return [j for j in service.list_jobs() if table in j.name]


def test_full_mode_refreshes_on_its_schedule(mt_service: SparkGatewayService, s: SessionHandle):
    service = mt_service
    src = _source(service, s, "(1, 1.50, 'a'), (2, 2.25, 'a'), (3, 4.00, 'b')")
    mt = unique_name("mt")
    assert run(
        service,
        s,
        f"CREATE MATERIALIZED TABLE {mt} COMMENT 'per ds' "
        f"FRESHNESS = INTERVAL '2' SECOND REFRESH_MODE = FULL "
        f"AS SELECT ds, sum(amount) AS total, count(*) AS n FROM {src} GROUP BY ds",
    ) == [("OK",)]
    described = _describe(service, s, mt)
    assert described["freshness"] == "INTERVAL '2' SECOND"
    assert described["refresh mode"] == "FULL"
    assert described["refresh status"] == "ACTIVATED"
    assert "workflowName: quartz_job_" in str(described["refresh handler"])
    assert mt in [r[0] for r in run(service, s, "SHOW MATERIALIZED TABLES")]
    # The scheduler fires every 2 s: the table reaches the query's result ...
    truth = sorted(run(service, s, f"SELECT ds, sum(amount), count(*) FROM {src} GROUP BY ds"))
    assert _wait(lambda: sorted(run(service, s, f"SELECT * FROM {mt}")) == truth)
    # ... and follows the source on later refreshes.
    run(service, s, f"INSERT INTO {src} VALUES (4, 10.00, 'c')")
    truth = sorted(run(service, s, f"SELECT ds, sum(amount), count(*) FROM {src} GROUP BY ds"))
    assert _wait(lambda: sorted(run(service, s, f"SELECT * FROM {mt}")) == truth)

    def finished() -> list[Any]:
        return [j for j in _jobs_of(service, mt) if j.status.value == "FINISHED"]

    assert _wait(lambda: len(finished()) >= 2), [j.status.value for j in _jobs_of(service, mt)]
    refreshes = finished()
    assert all(j.statement.startswith("INSERT OVERWRITE") for j in refreshes)
    # SUSPEND pauses the workflow (stored paused), RESUME fires again.
    run(service, s, f"ALTER MATERIALIZED TABLE {mt} SUSPEND")
    assert _describe(service, s, mt)["refresh status"] == "SUSPENDED"
    scheduler = service.materialized_tables.scheduler
    handler = EmbeddedRefreshHandler(f"quartz_job_`spark_catalog`.`default`.`{mt}`")
    workflow = scheduler.workflow(handler)  # type: ignore[union-attr]
    assert workflow is not None and workflow["suspended"] is True
    assert "already suspended" in error_text(service, s, f"ALTER MATERIALIZED TABLE {mt} SUSPEND")
    run(service, s, f"ALTER MATERIALIZED TABLE {mt} RESUME")
    assert scheduler.workflow(handler)["suspended"] is False  # type: ignore[union-attr,index]
    assert _describe(service, s, mt)["refresh status"] == "ACTIVATED"
    text = run(service, s, f"SHOW CREATE MATERIALIZED TABLE {mt}")[0][0]
    assert f"CREATE MATERIALIZED TABLE `default_catalog`.`default_database`.`{mt}`" in text
    assert "FRESHNESS = INTERVAL '2' SECOND" in text and "REFRESH_MODE = FULL" in text
    assert "COMMENT 'per ds'" in text
    # DROP deletes the workflow with the table.
    run(service, s, f"DROP MATERIALIZED TABLE {mt}")
    assert scheduler.workflow(handler) is None  # type: ignore[union-attr]
    assert mt not in [r[0] for r in run(service, s, "SHOW MATERIALIZED TABLES")]
    run(service, s, f"DROP MATERIALIZED TABLE IF EXISTS {mt}")


def test_manual_refresh_and_partitions(mt_service: SparkGatewayService, s: SessionHandle):
    service = mt_service
    src = _source(
        service, s, "(1, 1.00, '2024-01-01'), (2, 2.00, '2024-01-02'), (3, 3.00, '2024-01-02')"
    )
    mt = unique_name("mtp")
    run(
        service,
        s,
        f"CREATE MATERIALIZED TABLE {mt} PARTITIONED BY (ds) "
        "WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd') "
        f"FRESHNESS = INTERVAL '1' DAY AS SELECT id, amount, ds FROM {src}",
    )
    assert _describe(service, s, mt)["refresh mode"] == "FULL"  # 1 day is above 30 min
    assert run(service, s, f"SELECT * FROM {mt}") == []  # nothing until a refresh
    job = run(service, s, f"ALTER MATERIALIZED TABLE {mt} REFRESH")[0][0]
    assert service.describe_job(job).status.value == "FINISHED"
    assert sorted(run(service, s, f"SELECT id FROM {mt}")) == [(1,), (2,), (3,)]
    run(service, s, f"INSERT INTO {src} VALUES (4, 4.00, '2024-01-01'), (5, 5.00, '2024-01-02')")
    # A periodic refresh for scheduleTime 2024-01-02 00:00:00 overwrites the partition of
    # scheduleTime - freshness only: 2024-01-01.
    op = service.refresh_materialized_table(
        s,
        f"spark_catalog.default.{mt}",
        is_periodic=True,
        schedule_time="2024-01-02 00:00:00",
    )
    _, rows = fetch_all(service, s, op)
    job_id = rows[0][0]
    assert '"spark.master"' in rows[0][1]
    assert _wait(lambda: service.describe_job(job_id).status.value == "FINISHED")
    assert sorted(run(service, s, f"SELECT id, ds FROM {mt}")) == [
        (1, "2024-01-01"),
        (2, "2024-01-02"),
        (3, "2024-01-02"),
        (4, "2024-01-01"),
    ]
    # A one-off refresh of a named partition.
    run(service, s, f"ALTER MATERIALIZED TABLE {mt} REFRESH PARTITION (ds = '2024-01-02')")
    assert sorted(r[0] for r in run(service, s, f"SELECT id FROM {mt}")) == [1, 2, 3, 4, 5]
    assert "partition columns are ds" in error_text(
        service, s, f"ALTER MATERIALIZED TABLE {mt} REFRESH PARTITION (id = '1')"
    )
    run(service, s, f"DROP MATERIALIZED TABLE {mt}")


def test_bad_input_leaves_nothing(mt_service: SparkGatewayService, s: SessionHandle):
    service = mt_service
    src = _source(service, s, "(1, 1.00, 'a')")
    jobs_before = len(service.list_jobs())
    mt = unique_name("bad")
    # No cron can say "every 7 seconds": nothing is created.
    text = error_text(
        service,
        s,
        f"CREATE MATERIALIZED TABLE {mt} FRESHNESS = INTERVAL '7' SECOND REFRESH_MODE = FULL "
        f"AS SELECT * FROM {src}",
    )
    assert "divides 60" in text
    missing = error_text(
        service, s, f"CREATE MATERIALIZED TABLE {mt} REFRESH_MODE = FULL AS SELECT * FROM nowhere"
    )
    assert "nowhere" in missing
    assert "partition" in error_text(
        service,
        s,
        f"CREATE MATERIALIZED TABLE {mt} PARTITIONED BY (nope) REFRESH_MODE = FULL "
        f"AS SELECT * FROM {src}",
    )
    assert not [r for r in run(service, s, "SHOW TABLES") if r[0] == mt]
    assert len(service.list_jobs()) == jobs_before
    # Plain tables are not materialized ones, and the other way round.
    assert "not a materialized table" in error_text(
        service, s, f"ALTER MATERIALIZED TABLE {src} SUSPEND"
    )
    assert "not a materialized table" in error_text(service, s, f"DROP MATERIALIZED TABLE {src}")
    assert "does not exist" in error_text(service, s, f"DROP MATERIALIZED TABLE {mt}")
    run(service, s, f"CREATE MATERIALIZED TABLE {mt} REFRESH_MODE = FULL AS SELECT * FROM {src}")
    assert "not partitioned" in error_text(
        service, s, f"ALTER MATERIALIZED TABLE {mt} REFRESH PARTITION (ds = 'a')"
    )
    assert "already exists" in error_text(
        service, s, f"CREATE MATERIALIZED TABLE {mt} REFRESH_MODE = FULL AS SELECT 1 AS x"
    )
    # The refresh call's identifier must be fully qualified; its time well formed.
    with pytest.raises(GatewayError, match="fully qualified"):
        service.refresh_materialized_table(s, mt, is_periodic=False)
    with pytest.raises(GatewayError, match="scheduleTime"):
        service.refresh_materialized_table(
            s, f"spark_catalog.default.{mt}", is_periodic=True, schedule_time="2024-01-02T00:00"
        )
    run(service, s, f"DROP MATERIALIZED TABLE {mt}")


def test_alter_as_adds_columns_at_the_end(mt_service: SparkGatewayService, s: SessionHandle):
    service = mt_service
    src = _source(service, s, "(1, 1.00, 'a')")
    mt = unique_name("alt")
    run(service, s, f"CREATE MATERIALIZED TABLE {mt} REFRESH_MODE = FULL AS SELECT id FROM {src}")
    assert "only add columns at the end" in error_text(
        service, s, f"ALTER MATERIALIZED TABLE {mt} AS SELECT ds FROM {src}"
    )
    run(service, s, f"ALTER MATERIALIZED TABLE {mt} AS SELECT id, ds FROM {src}")
    run(service, s, f"ALTER MATERIALIZED TABLE {mt} REFRESH")
    assert run(service, s, f"SELECT * FROM {mt}") == [(1, "a")]
    shown = run(service, s, f"SHOW CREATE MATERIALIZED TABLE {mt}")[0][0]
    assert f"AS SELECT `{src}`.`id`, `{src}`.`ds`\nFROM " in shown  # as Flink expands it
    run(service, s, f"DROP MATERIALIZED TABLE {mt}")


def test_a_connector_table_refreshed_in_full(
    mt_service: SparkGatewayService, s: SessionHandle, tmp_path: Path
):
    """WITH ('connector' = 'filesystem', ...): the table is that connector's table; a
    refresh replaces the files of the partitions it refreshes, as INSERT OVERWRITE."""
    service = mt_service
    src = _source(service, s, "(1, 1.50, '2024-01-01'), (2, 2.25, '2024-01-02')")
    mt = unique_name("fsmt")
    out = tmp_path / "files"
    run(
        service,
        s,
        f"CREATE MATERIALIZED TABLE {mt} PARTITIONED BY (ds) WITH ('connector' = 'filesystem', "
        f"'path' = '{out}', 'format' = 'json') REFRESH_MODE = FULL "
        f"AS SELECT id, amount, ds FROM {src}",
    )
    assert out.is_dir()
    shown = run(service, s, f"SHOW CREATE MATERIALIZED TABLE {mt}")[0][0]
    assert "'connector' = 'filesystem'" in shown and "PARTITIONED BY (`ds`)" in shown
    run(service, s, f"ALTER MATERIALIZED TABLE {mt} REFRESH")
    assert sorted(run(service, s, f"SELECT id, amount, ds FROM {mt}")) == [
        (1, Decimal("1.50"), "2024-01-01"),
        (2, Decimal("2.25"), "2024-01-02"),
    ]
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == [
        "ds=2024-01-01",
        "ds=2024-01-02",
    ]
    run(service, s, f"INSERT INTO {src} VALUES (3, 3.00, '2024-01-01'), (4, 4.00, '2024-01-02')")
    # One partition again: its files are replaced, the other's stay as they were.
    run(service, s, f"ALTER MATERIALIZED TABLE {mt} REFRESH PARTITION (ds = '2024-01-01')")
    assert sorted(run(service, s, f"SELECT id, ds FROM {mt}")) == [
        (1, "2024-01-01"),
        (2, "2024-01-02"),
        (3, "2024-01-01"),
    ]
    # A column added at the end reaches the connector table's definition and its files.
    run(
        service,
        s,
        f"ALTER MATERIALIZED TABLE {mt} AS SELECT id, amount, ds, id * 2 AS twice FROM {src}",
    )
    run(service, s, f"ALTER MATERIALIZED TABLE {mt} REFRESH")
    assert sorted(run(service, s, f"SELECT id, twice FROM {mt}")) == [
        (1, 2),
        (2, 4),
        (3, 6),
        (4, 8),
    ]
    run(service, s, f"DROP MATERIALIZED TABLE {mt}")
    assert not [r for r in run(service, s, "SHOW TABLES") if r[0] == mt]


def test_a_connector_that_cannot_take_the_rows_leaves_nothing(
    mt_service: SparkGatewayService, s: SessionHandle
):
    service = mt_service
    src = _source(service, s, "(1, 1.00, 'a')")
    jobs_before = len(service.list_jobs())
    mt = unique_name("badsink")
    for options, message in (
        ("'connector' = 'datagen'", "only be used as a source"),
        ("'connector' = 'blackhole', 'nope' = '1'", "Unsupported option 'nope'"),
        ("'connector' = 'nowhere'", "Unsupported connector 'nowhere'"),
        ("'connector' = 'filesystem', 'format' = 'json'", "requires the option 'path'"),
    ):
        text = error_text(
            service,
            s,
            f"CREATE MATERIALIZED TABLE {mt} WITH ({options}) REFRESH_MODE = FULL "
            f"AS SELECT * FROM {src}",
        )
        assert message in text
    assert not [r for r in run(service, s, "SHOW TABLES") if r[0] == mt]
    assert len(service.list_jobs()) == jobs_before


def test_unknown_scheduler_type_stops_the_start(spark: Any, tmp_path: Path):
    options = {"sql-gateway.data-dir": str(tmp_path), "workflow-scheduler.type": "airflow"}
    with pytest.raises(ConfigurationError, match="airflow"):
        SparkGatewayService(Configuration(options), spark=spark)
    bad = {"sql-gateway.data-dir": str(tmp_path), "workflow-scheduler.embedded.nope": "1"}
    with pytest.raises(ConfigurationError, match=r"workflow-scheduler\.embedded\.nope"):
        SparkGatewayService(Configuration(bad), spark=spark)


def test_drop_table_of_a_materialized_table_is_refused(
    mt_service: SparkGatewayService, s: SessionHandle
):
    service = mt_service
    src = _source(service, s, "(1, 1.00, 'a')")
    mt = unique_name("keep")
    run(service, s, f"CREATE MATERIALIZED TABLE {mt} REFRESH_MODE = FULL AS SELECT * FROM {src}")
    assert "DROP MATERIALIZED TABLE" in error_text(service, s, f"DROP TABLE {mt}")
    assert _describe(service, s, mt)["refresh status"] == "ACTIVATED"
    run(service, s, f"DROP TABLE {src}")  # a plain table still drops
    run(service, s, f"DROP MATERIALIZED TABLE {mt}")


def test_the_rest_refresh_call_from_outside(mt_service: SparkGatewayService, s: SessionHandle):
    """What an external scheduler does: POST .../materialized-tables/<id>/refresh."""
    import httpx

    from sparkgate.endpoints.rest.server import RestEndpoint
    from tests.rest.conftest import settings

    service = mt_service
    src = _source(service, s, "(1, 1.00, '2024-03-01'), (2, 2.00, '2024-03-02')")
    mt = unique_name("rest")
    run(
        service,
        s,
        f"CREATE MATERIALIZED TABLE {mt} PARTITIONED BY (ds) "
        "WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd') "
        f"FRESHNESS = INTERVAL '1' DAY AS SELECT id, ds FROM {src}",
    )
    endpoint = RestEndpoint(service, settings())
    endpoint.start()
    try:
        with httpx.Client(base_url=endpoint.address, timeout=60) as http:
            handle = http.post("/v4/sessions", json={}).json()["sessionHandle"]
            url = f"/v4/sessions/{handle}/materialized-tables/spark_catalog.default.{mt}/refresh"
            response = http.post(
                url, json={"isPeriodic": True, "scheduleTime": "2024-03-02 00:00:00"}
            )
            assert response.status_code == 200, response.text
            operation = response.json()["operationHandle"]
            result = http.get(f"/v4/sessions/{handle}/operations/{operation}/result/0")
            while result.json()["resultType"] == "NOT_READY":
                result = http.get(f"/v4/sessions/{handle}/operations/{operation}/result/0")
            columns = [c["name"] for c in result.json()["results"]["columns"]]
            assert columns == ["job id", "cluster info"]
            job_id = result.json()["results"]["data"][0]["fields"][0]
            assert _wait(lambda: service.describe_job(job_id).status.value == "FINISHED")
            # Only the partition of scheduleTime - 1 day was refreshed.
            assert run(service, s, f"SELECT id, ds FROM {mt}") == [(1, "2024-03-01")]
            bad = http.post(url.replace("spark_catalog.default.", ""), json={"isPeriodic": False})
            assert bad.status_code == 400 and "fully qualified" in bad.json()["errors"][0]
            late = http.post(url, json={"isPeriodic": True, "scheduleTime": "yesterday"})
            assert late.status_code == 400 and "scheduleTime" in late.json()["errors"][0]
            # The embedded scheduler's own routes (Flink's V3 API) reach the real one.
            scheduler = service.materialized_tables.scheduler
            created = http.post(
                "/v3/workflow/embedded-scheduler/create",
                json={
                    "materializedTableIdentifier": f"spark_catalog.default.{mt}_wf",
                    "cronExpression": "0 0 0 * * ? *",
                    "initConfig": {},
                    "executionConfig": {},
                    "restEndpointUrl": endpoint.address,
                },
            )
            assert created.status_code == 200, created.text
            names = created.json()
            assert names == {
                "workflowName": f"quartz_job_spark_catalog.default.{mt}_wf",
                "workflowGroup": "default_group",
            }
            handler = EmbeddedRefreshHandler(names["workflowName"], names["workflowGroup"])
            assert http.post("/v3/workflow/embedded-scheduler/suspend", json=names).json() == {}
            assert scheduler.workflow(handler)["suspended"] is True  # type: ignore[union-attr,index]
            deleted = http.request("DELETE", "/v3/workflow/embedded-scheduler/delete", json=names)
            assert deleted.status_code == 200
            assert scheduler.workflow(handler) is None  # type: ignore[union-attr]
    finally:
        endpoint.stop()
    run(service, s, f"DROP MATERIALIZED TABLE {mt}")


def test_a_scheduler_plugin_gets_every_operation(spark: Any, tmp_path: Path):
    """A second scheduler, found through its entry point, hears create, suspend,
    resume (with the dynamic options), a cron change and delete; its options come
    without their prefix, and its failure leaves no table."""
    import sys

    from sparkgate.api.session import SessionEnvironment
    from tests import workflow_recorder

    plugin_dir = tmp_path / "site"
    dist = plugin_dir / "workflow_recorder-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: workflow-recorder\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[sparkgate.workflow_schedulers]\nrecorder = tests.workflow_recorder:RecordingFactory\n"
    )
    sys.path.insert(0, str(plugin_dir))
    workflow_recorder.OPERATIONS.clear()
    try:
        service = make_service(
            spark,
            **{
                "sql-gateway.data-dir": str(tmp_path / "data"),
                "workflow-scheduler.type": "recorder",
                "workflow-scheduler.recorder.endpoint": "http://scheduler:8080",
            },
        )
    finally:
        sys.path.remove(str(plugin_dir))
    try:
        assert service.embedded_workflow_scheduler() is None
        s = service.open_session(SessionEnvironment())
        src = _source(service, s, "(1, 1.00, 'a')")
        mt = unique_name("plug")
        run(
            service,
            s,
            f"CREATE MATERIALIZED TABLE {mt} FRESHNESS = INTERVAL '1' HOUR AS SELECT * FROM {src}",
        )
        assert _describe(service, s, mt)["refresh handler"] == "recorded workflow wf-0"
        run(service, s, f"ALTER MATERIALIZED TABLE {mt} SUSPEND")
        run(service, s, f"ALTER MATERIALIZED TABLE {mt} RESUME WITH ('sink.parallelism' = '2')")
        run(
            service,
            s,
            f"CREATE OR ALTER MATERIALIZED TABLE {mt} FRESHNESS = INTERVAL '2' HOUR "
            f"AS SELECT * FROM {src}",
        )
        assert _describe(service, s, mt)["freshness"] == "INTERVAL '2' HOUR"
        run(service, s, f"DROP MATERIALIZED TABLE {mt}")
        kinds = [name for name, _ in workflow_recorder.OPERATIONS]
        assert kinds == [
            "open",
            "create",
            "SuspendRefreshWorkflow",
            "ResumeRefreshWorkflow",
            "ModifyRefreshWorkflowCronExpr",
            "delete",
        ]
        ops = dict(workflow_recorder.OPERATIONS)
        assert ops["open"] == {"endpoint": "http://scheduler:8080"}
        assert ops["create"].cron_expression == "0 0 0/1 * * ? *"
        assert ops["create"].materialized_table == f"`spark_catalog`.`default`.`{mt}`"
        assert dict(ops["ResumeRefreshWorkflow"].dynamic_options) == {"sink.parallelism": "2"}
        assert ops["ModifyRefreshWorkflowCronExpr"].cron_expression == "0 0 0/2 * * ? *"
        assert ops["delete"].refresh_handler.workflow_id == "wf-0"
    finally:
        service.stop()
    assert workflow_recorder.OPERATIONS[-1][0] == "close"
    # A scheduler that fails to create the workflow: the table is not left behind.
    sys.path.insert(0, str(plugin_dir))
    try:
        failing = make_service(
            spark,
            **{
                "sql-gateway.data-dir": str(tmp_path / "data2"),
                "workflow-scheduler.type": "recorder",
                "workflow-scheduler.recorder.fail-create": "true",
            },
        )
    finally:
        sys.path.remove(str(plugin_dir))
    try:
        s = failing.open_session(SessionEnvironment())
        mt = unique_name("down")
        text = error_text(
            failing, s, f"CREATE MATERIALIZED TABLE {mt} REFRESH_MODE = FULL AS SELECT 1 AS one"
        )
        assert "the scheduler service is down" in text
        assert not [r for r in run(failing, s, "SHOW TABLES") if r[0] == mt]
    finally:
        failing.stop()
