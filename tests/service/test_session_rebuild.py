"""A session's state is made again in a new Spark session (what an engine restart does).

The gateway remembers the statements that made each session's Spark-side
state and runs them again on a new engine (tests/e2e/test_engine_health.py
kills real engines). Here the same rebuild is asked for on the shared engine:
the session gets a new Spark session and must find everything it had.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import ExecutionError, SessionNotFoundError
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.session.recipe import MAX_STEPS, SessionRecipe

from .conftest import make_service, run, unique_name
from .test_modules import PI, Factory


@pytest.fixture(scope="module")
def gateway(spark: SparkSession) -> Iterator[SparkGatewayService]:
    service = make_service(spark)
    yield service
    service.stop()


def rebuild(service: SparkGatewayService, handle: object) -> None:
    """Move the session onto a new Spark session, as after an engine death."""
    session = service._sessions.get(handle)  # type: ignore[arg-type]
    old = session.spark
    service._rebuild(session, "a test's engine restart")
    assert session.spark is not old


def test_properties_namespace_views_variables_and_connector_tables_come_back(
    gateway: SparkGatewayService,
) -> None:
    database = unique_name("rebuilt")
    handle = gateway.open_session(
        SessionEnvironment(config={"table.local-time-zone": "Asia/Tokyo"})
    )
    for statement in (
        f"CREATE DATABASE {database}",
        f"USE {database}",
        "SET 'spark.sql.shuffle.partitions' = '3'",
        "CREATE TEMPORARY VIEW v AS SELECT 1 AS x",
        "CREATE TEMPORARY VIEW w AS SELECT x + 1 AS y FROM v",
        # Replaced after w was made on it: w must still be made, then v replaced.
        "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 10 AS x",
        "CREATE TEMPORARY VIEW gone AS SELECT 1",
        "DROP TEMPORARY VIEW gone",
        "CREATE TEMPORARY FUNCTION plus_one(x INT) RETURNS INT RETURN x + 1",
        # Flink's forms: the first IF NOT EXISTS made it, the second changed nothing.
        "CREATE TEMPORARY VIEW IF NOT EXISTS fv AS SELECT 2 AS z",
        "CREATE TEMPORARY VIEW IF NOT EXISTS fv AS SELECT 3 AS z",
        "CREATE TEMPORARY FUNCTION constant AS 'org.apache.hadoop.hive.ql.udf.UDFPI'",
        "ALTER TEMPORARY FUNCTION constant AS 'org.apache.hadoop.hive.ql.udf.UDFE'",
        "DECLARE VARIABLE answer INT DEFAULT 1",
        "SET VARIABLE answer = 42",
        "CREATE TEMPORARY TABLE gen (id BIGINT) WITH ('connector' = 'datagen', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '4')",
        "USE default",
        f"USE {database}",
    ):
        run(gateway, handle, statement)
    try:
        rebuild(gateway, handle)
        assert run(gateway, handle, "SELECT current_database()") == [(database,)]
        assert run(gateway, handle, "SELECT * FROM w") == [(11,)]
        assert run(gateway, handle, "SELECT plus_one(answer)") == [(43,)]
        assert run(gateway, handle, "SELECT count(*) FROM gen") == [(4,)]
        assert run(gateway, handle, "SHOW VIEWS LIKE 'gone'") == []
        assert run(gateway, handle, "SELECT * FROM fv") == [(2,)]
        assert float(run(gateway, handle, "SELECT round(constant(), 3)")[0][0]) == 2.718
        assert run(gateway, handle, "SET 'spark.sql.shuffle.partitions'") == [
            ("spark.sql.shuffle.partitions", "3")
        ]
        assert run(gateway, handle, "SELECT current_timezone()") == [("Asia/Tokyo",)]
        # The rebuilt session is rebuilt again the same way (its recipe recorded itself anew).
        rebuild(gateway, handle)
        assert run(gateway, handle, "SELECT * FROM w") == [(11,)]
    finally:
        gateway.close_session(handle)
        run_in_new(gateway, f"DROP DATABASE {database} CASCADE")


def test_modules_and_their_functions_come_back(gateway: SparkGatewayService) -> None:
    factories = gateway._module_factories  # a plug-in, as an entry point gives it
    factories["circle"] = Factory({"constant": PI})
    handle = gateway.open_session(SessionEnvironment())
    try:
        for statement in (
            "LOAD MODULE hive",
            "LOAD MODULE circle",
            "USE MODULES circle, core, hive",
            "UNLOAD MODULE hive",
        ):
            run(gateway, handle, statement)
        rebuild(gateway, handle)
        assert run(gateway, handle, "SHOW FULL MODULES") == [("circle", True), ("core", True)]
        assert float(run(gateway, handle, "SELECT round(constant(), 5)")[0][0]) == 3.14159
        run(gateway, handle, "UNLOAD MODULE core")
        rebuild(gateway, handle)
        assert run(gateway, handle, "SHOW FULL MODULES") == [("circle", True)]
        run(gateway, handle, "LOAD MODULE core")
        run(gateway, handle, "USE MODULES core")
        rebuild(gateway, handle)
        assert run(gateway, handle, "SHOW FULL MODULES") == [("core", True), ("circle", False)]
        with pytest.raises(ExecutionError, match="UNRESOLVED_ROUTINE"):
            run(gateway, handle, "SELECT constant()")
    finally:
        gateway.close_session(handle)
        del factories["circle"]


def run_in_new(service: SparkGatewayService, statement: str) -> None:
    handle = service.open_session(SessionEnvironment())
    try:
        run(service, handle, statement)
    finally:
        service.close_session(handle)


def test_a_session_whose_state_cannot_be_made_again_is_lost_with_the_reason(
    gateway: SparkGatewayService, tmp_path: Path
) -> None:
    files = tmp_path / "files"
    files.mkdir()
    pq.write_table(pa.table({"x": [1]}), files / "part-0.parquet")
    handle = gateway.open_session(SessionEnvironment())
    run(gateway, handle, f"CREATE TEMPORARY VIEW f USING parquet OPTIONS (path '{files}')")
    assert run(gateway, handle, "SELECT * FROM f") == [(1,)]
    shutil.rmtree(files)
    session = gateway._sessions.get(handle)
    gateway._sessions.detach_all()
    gateway._rebuild(session, "a test's engine restart")
    with pytest.raises(SessionNotFoundError) as lost:
        gateway.get_session_config(handle)
    message = str(lost.value)
    assert "lost with the Spark engine (a test's engine restart" in message
    assert "CREATE TEMPORARY VIEW f" in message and "PATH_NOT_FOUND" in message, message


def test_a_recipe_is_bounded() -> None:
    recipe = SessionRecipe()
    for i in range(MAX_STEPS + 1):
        recipe.record(f"view:v{i}", f"CREATE TEMPORARY VIEW v{i} AS SELECT {i}")
    assert len(recipe.steps) == MAX_STEPS
    assert recipe.unrebuildable is not None and str(MAX_STEPS) in recipe.unrebuildable
    # A replaced object keeps its place; a dropped one (and its value) is forgotten.
    recipe = SessionRecipe()
    recipe.record("catalog", "USE CATALOG c")
    recipe.record("view:a", "A1")
    recipe.record("namespace", "USE d")
    recipe.record("view:b", "B")
    recipe.record("view:a", "A2")
    recipe.record("variable:x", "DECLARE x")
    recipe.record("variable-value:x", "SET VAR x = 1")
    recipe.forget("variable:x")
    assert [(s.text, s.namespace) for s in recipe.steps] == [
        ("A2", ("USE CATALOG c", "USE d")),
        ("B", ("USE CATALOG c", "USE d")),
    ]
    recipe.record("catalog", "USE CATALOG e")
    assert recipe.namespace == ("USE CATALOG e",)
