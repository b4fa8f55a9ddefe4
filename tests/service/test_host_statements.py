"""Spark SQL acting on the gateway's host is off by default, on every door.

Each statement, if it ran, would leave a mark on the host (a file made, a
directory emptied, the engine stopped); the tests show the refusal names the
option and the mark is not there. Authentication plays no part.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import GatewayError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import SessionEnvironment
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.spark.host_access import ALLOWED_HOST_STATEMENTS_KEY
from tests.hiveserver2.conftest import pyhive_python, run_client, running_endpoint  # noqa: F401
from tests.rest.conftest import settings

from .conftest import make_service, run, unique_name

OPTION = ALLOWED_HOST_STATEMENTS_KEY.replace(".", r"\.")


def harmful(tmp: Path) -> list[tuple[str, str, Path]]:
    """(kind, statement, the host path it would change)."""
    made = tmp / "made-by-transform"
    kept = tmp / "kept-directory"
    kept.mkdir(exist_ok=True)
    (kept / "precious.txt").write_text("mine")
    secret = tmp / "secret.txt"
    secret.write_text("s3cr3t")
    return [
        (
            "transform",
            f"SELECT TRANSFORM(id) USING 'sh -c \"touch {made}; cat\"' AS (x string) FROM range(1)",
            made,
        ),
        ("reflection", "SELECT reflect('java.lang.System', 'exit', 3)", tmp),
        ("reflection", "SELECT java_method('java.lang.System', 'exit', 3) AS x", tmp),
        (
            "reflection",
            "SELECT * FROM range(1) WHERE try_reflect('java.lang.System', 'exit', 3) IS NULL",
            tmp,
        ),
        (
            "reflection",
            "CREATE TEMPORARY FUNCTION r AS "
            "'org.apache.hadoop.hive.ql.udf.generic.GenericUDFReflect'",
            tmp,
        ),
        # Flink's forms hold the same: a function, a view's query, what EXPLAIN explains.
        (
            "reflection",
            "CREATE TEMPORARY SYSTEM FUNCTION r2 AS "
            "'org.apache.hadoop.hive.ql.udf.generic.GenericUDFReflect' LANGUAGE JAVA",
            tmp,
        ),
        ("reflection", "CREATE VIEW rv AS SELECT reflect('java.lang.System', 'exit', 3)", tmp),
        (
            "reflection",
            "CREATE TEMPORARY VIEW IF NOT EXISTS rv2 AS SELECT java_method('a.B', 'c') AS x",
            tmp,
        ),
        ("reflection", "EXPLAIN SELECT reflect('java.lang.System', 'exit', 3)", tmp),
        ("insert-directory", f"INSERT OVERWRITE LOCAL DIRECTORY '{kept}' SELECT 1", kept),
        (
            "insert-directory",
            f"INSERT OVERWRITE DIRECTORY '{kept}' USING parquet SELECT 1 AS x",
            kept,
        ),
        ("add-file", f"ADD FILE '{secret}'", secret),
        ("add-file", f"ADD ARCHIVE '{tmp / 'a.zip'}'", tmp),
    ]


def host_unchanged(tmp: Path) -> None:
    assert not (tmp / "made-by-transform").exists()
    assert sorted(p.name for p in (tmp / "kept-directory").iterdir()) == ["precious.txt"]
    assert (tmp / "kept-directory" / "precious.txt").read_text() == "mine"


@pytest.fixture(scope="module")
def guarded(spark: SparkSession) -> Iterator[SparkGatewayService]:
    service = make_service(spark)  # the default: nothing allowed
    yield service
    service.stop()


@pytest.fixture
def guarded_session(guarded: SparkGatewayService) -> Iterator[SessionHandle]:
    handle = guarded.open_session(SessionEnvironment())
    yield handle
    guarded.close_session(handle)


def test_each_is_refused_naming_the_option_and_nothing_happens(
    guarded: SparkGatewayService, guarded_session: SessionHandle, tmp_path: Path
) -> None:
    for kind, statement, _ in harmful(tmp_path):
        with pytest.raises(GatewayError, match=rf"{OPTION}: {kind}"):
            run(guarded, guarded_session, statement)
    host_unchanged(tmp_path)
    assert run(guarded, guarded_session, "SELECT 1 AS alive") == [(1,)]
    assert run(guarded, guarded_session, "LIST FILES") == []


def test_a_view_hiding_a_transformation_is_refused_when_read(
    spark: SparkSession,
    guarded: SparkGatewayService,
    guarded_session: SessionHandle,
    tmp_path: Path,
) -> None:
    # Made outside the gateway (another Spark application on the same metastore).
    view = unique_name("hidden")
    made = tmp_path / "made-by-view"
    spark.sql(
        f"CREATE VIEW {view} AS SELECT TRANSFORM(id) USING 'sh -c \"touch {made}; cat\"' "
        "AS (x string) FROM range(1)"
    )
    try:
        with pytest.raises(GatewayError, match=rf"{OPTION}: transform"):
            run(guarded, guarded_session, f"SELECT * FROM {view}")
        assert not made.exists()
    finally:
        spark.sql(f"DROP VIEW {view}")


def test_reflection_is_gone_from_a_sessions_functions_even_in_a_view(
    spark: SparkSession, guarded: SparkGatewayService, guarded_session: SessionHandle
) -> None:
    view = unique_name("reflecting")
    spark.sql(f"CREATE VIEW {view} AS SELECT reflect('java.lang.String', 'valueOf', 7) AS v")
    try:
        with pytest.raises(GatewayError, match="reflect"):
            run(guarded, guarded_session, f"SELECT * FROM {view}")
    finally:
        spark.sql(f"DROP VIEW {view}")
    # The engine's other sessions keep Spark's functions.
    assert spark.sql("SELECT reflect('java.lang.String', 'valueOf', 7)").collect()[0][0] == "7"


def test_an_allowed_kind_runs(spark: SparkSession, tmp_path: Path) -> None:
    service = make_service(spark, **{ALLOWED_HOST_STATEMENTS_KEY: "transform;reflection"})
    try:
        handle = service.open_session(SessionEnvironment())
        made = tmp_path / "allowed"
        rows = run(
            service,
            handle,
            f"SELECT TRANSFORM(id) USING 'sh -c \"touch {made}; cat\"' AS (x string) FROM range(2)",
        )
        assert sorted(rows) == [("0",), ("1",)] and made.exists()
        assert run(service, handle, "SELECT reflect('java.lang.String', 'valueOf', 5)") == [("5",)]
        with pytest.raises(GatewayError, match=rf"{OPTION}: insert-directory"):
            run(service, handle, f"INSERT OVERWRITE LOCAL DIRECTORY '{tmp_path}' SELECT 1")
    finally:
        service.stop()


def test_an_unknown_kind_is_a_configuration_error(spark: SparkSession) -> None:
    with pytest.raises(Exception, match="insert-directory"):
        make_service(spark, **{ALLOWED_HOST_STATEMENTS_KEY: "everything"})


def test_refused_over_rest(guarded: SparkGatewayService, tmp_path: Path) -> None:
    endpoint = RestEndpoint(guarded, settings())
    endpoint.start()
    try:
        with httpx.Client(base_url=endpoint.address, timeout=120) as http:
            session = http.post("/v1/sessions", json={}).json()["sessionHandle"]
            for kind, statement, _ in harmful(tmp_path):
                # Refused as it is submitted: a client error, no operation made.
                response = http.post(
                    f"/v1/sessions/{session}/statements", json={"statement": statement}
                )
                assert response.status_code == 400, response.text
                assert f"{ALLOWED_HOST_STATEMENTS_KEY}: {kind}" in response.text
            http.delete(f"/v1/sessions/{session}")
    finally:
        endpoint.stop()
    host_unchanged(tmp_path)


PYHIVE_SCRIPT = r"""
import json, sys
from pyhive import hive
conn = hive.connect("127.0.0.1", port=int(sys.argv[1]), auth="NOSASL", username="u")
cur = conn.cursor()
errors = []
for statement in json.loads(sys.argv[2]):
    try:
        cur.execute(statement)
        cur.fetchall()
        errors.append(None)
    except Exception as exc:
        errors.append(str(exc))
cur.execute("SELECT 1 AS alive")
print(json.dumps({"errors": errors, "alive": cur.fetchall()}))
"""


def test_refused_over_hiveserver2(
    guarded: SparkGatewayService,
    pyhive_python: Path,  # noqa: F811  (the fixture imported above)
    tmp_path: Path,
) -> None:

    cases = harmful(tmp_path)
    with running_endpoint(guarded) as hs2:
        out = run_client(
            pyhive_python, PYHIVE_SCRIPT, str(hs2.port), json.dumps([s for _, s, _ in cases])
        )
    for (kind, _, _), error in zip(cases, out["errors"], strict=True):
        assert error is not None and f"{ALLOWED_HOST_STATEMENTS_KEY}: {kind}" in error
    assert out["alive"] == [[1]]
    host_unchanged(tmp_path)
