"""Confinement of the paths remote SQL names (``sql-gateway.security.allowed-paths``).

Every way Spark SQL (and the gateway's own statements) names a file is tried
with a path outside the allowed root: each is refused with an error naming the
option and the path, and leaves nothing behind. The same statements inside
the root run. With authentication on and no option the roots are the
warehouse and ``<data-dir>/files``; with it off, nothing is confined.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.auth import Principal
from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.spark.confinement import ALLOWED_PATHS_KEY

from .conftest import error_text, make_service, opened_session, run, unique_name


@dataclass(frozen=True)
class Tree:
    allowed: Path
    outside: Path


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    base = tmp_path_factory.mktemp("confinement")
    allowed, outside = base / "allowed", base / "outside"
    allowed.mkdir()
    outside.mkdir()
    (allowed / "data.txt").write_text("inside\n")
    (outside / "secret.txt").write_text("s3cr3t\n")
    (outside / "lib.jar").write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # an empty zip
    os.symlink(outside, allowed / "link")
    return Tree(allowed, outside)


@pytest.fixture(scope="module")
def confined(spark: SparkSession, tree: Tree) -> Iterator[SparkGatewayService]:
    service = make_service(spark, **{ALLOWED_PATHS_KEY: str(tree.allowed)})
    yield service
    service.stop()


@pytest.fixture
def session(confined: SparkGatewayService) -> Iterator[SessionHandle]:
    with opened_session(confined) as handle:
        yield handle


def _outside_statements(tree: Tree, table: str) -> list[tuple[str, str]]:
    """(statement, the path its refusal names), each naming a file outside the root."""
    out, secret = tree.outside, tree.outside / "secret.txt"
    return [
        (f"SELECT * FROM text.`{secret}`", str(secret)),
        (f"SELECT * FROM text.`{tree.allowed}/link/secret.txt`", "link/secret.txt"),
        (f"SELECT * FROM text.`{tree.allowed}/../outside/secret.txt`", "../outside/secret.txt"),
        (f"SELECT * FROM csv.`{out}/*`", f"{out}/*"),
        (f"SELECT (SELECT max(value) FROM text.`{secret}`) AS m", str(secret)),
        (f"WITH c AS (SELECT * FROM json.`{secret}`) SELECT * FROM c", str(secret)),
        (f"SELECT * FROM IDENTIFIER('text.`{secret}`')", str(secret)),
        (f"INSERT INTO parquet.`{out}/written` SELECT 1 AS a", f"{out}/written"),
        (f"CREATE TABLE {table}_l (a INT) USING parquet LOCATION '{out}/l'", f"{out}/l"),
        (f"CREATE TABLE {table}_o (a INT) USING csv OPTIONS (path '{out}/o')", f"{out}/o"),
        (
            f"CREATE TABLE {table}_p (a INT) USING csv OPTIONS (paths '[\"{out}/p\"]')",
            f"{out}/p",
        ),
        (f"CREATE TABLE {table}_c USING parquet LOCATION '{out}/c' AS SELECT 1 AS a", f"{out}/c"),
        (f"CREATE TABLE {table}_k LIKE {table} LOCATION '{out}/k'", f"{out}/k"),
        (f"CREATE DATABASE {table}_db LOCATION '{out}/db'", f"{out}/db"),
        (f"ALTER TABLE {table} SET LOCATION '{out}/moved'", f"{out}/moved"),
        (f"ALTER TABLE {table}_parts ADD PARTITION (p = 1) LOCATION '{out}/p1'", f"{out}/p1"),
        (f"CREATE TEMPORARY VIEW {table}_v USING text OPTIONS (path '{secret}')", str(secret)),
        (f"LOAD DATA INPATH '{secret}' INTO TABLE {table}", str(secret)),
        (f"ADD JAR '{out}/lib.jar'", f"{out}/lib.jar"),
        (f"CREATE FUNCTION {table}_f AS 'x.Y' USING JAR '{out}/lib.jar'", f"{out}/lib.jar"),
        (
            f"CREATE TABLE {table}_fs (a INT) WITH ('connector' = 'filesystem', "
            f"'path' = '{out}/fs', 'format' = 'csv')",
            f"{out}/fs",
        ),
        (f"CREATE VIEW {table}_fv AS SELECT * FROM text.`{secret}`", str(secret)),
        (f"EXPLAIN SELECT * FROM text.`{secret}`", str(secret)),
        (
            f"CREATE TEMPORARY SYSTEM FUNCTION {table}_sf AS 'x.Y' USING JAR '{out}/lib.jar'",
            f"{out}/lib.jar",
        ),
        (f"EXECUTE PLAN '{out}/plan.json'", f"{out}/plan.json"),
        # Flink's dynamic table options: a hint's path, written or read.
        (f"INSERT INTO {table}_in /*+ OPTIONS('path' = '{out}/h') */ SELECT 'a'", f"{out}/h"),
        (f"SELECT * FROM {table}_in /*+ OPTIONS('path' = '{out}') */", str(out)),
        (f"COMPILE PLAN '{out}/plan.json' FOR INSERT INTO {table} SELECT 1", f"{out}/plan.json"),
    ]


@pytest.fixture(scope="module")
def table(confined: SparkGatewayService, tree: Tree) -> str:
    name = unique_name("confined")
    with opened_session(confined) as handle:
        run(confined, handle, f"CREATE TABLE {name} (a INT) USING parquet")
        run(
            confined,
            handle,
            f"CREATE TABLE {name}_parts (a INT, p INT) USING parquet PARTITIONED BY (p)",
        )
        run(
            confined,
            handle,
            f"CREATE TABLE {name}_in (a STRING) WITH ('connector' = 'filesystem', "
            f"'path' = '{tree.allowed}/in', 'format' = 'csv')",
        )
    return name


def test_every_way_of_naming_an_outside_path_is_refused_and_leaves_nothing(
    confined: SparkGatewayService, session: SessionHandle, tree: Tree, table: str
) -> None:
    for statement, path in _outside_statements(tree, table):
        message = error_text(confined, session, statement)
        assert ALLOWED_PATHS_KEY in message, (statement, message)
        assert path in message, (statement, message)
        assert "s3cr3t" not in message
    # Nothing was made outside, and no table, database or view half-made.
    assert sorted(p.name for p in tree.outside.iterdir()) == ["lib.jar", "secret.txt"]
    tables = {row[0] for row in run(confined, session, "SHOW TABLES")}
    assert not {f"{table}_{s}" for s in "lopck"} & tables
    assert not [r for r in run(confined, session, "SHOW DATABASES") if r[0] == f"{table}_db"]
    location = [
        r for r in run(confined, session, f"DESCRIBE TABLE EXTENDED {table}") if r[0] == "Location"
    ]
    assert str(tree.outside) not in location[0][1]


def test_load_data_local_is_refused_even_inside(
    confined: SparkGatewayService, session: SessionHandle, tree: Tree, table: str
) -> None:
    message = error_text(
        confined, session, f"LOAD DATA LOCAL INPATH '{tree.allowed}/data.txt' INTO TABLE {table}"
    )
    assert "LOAD DATA LOCAL" in message and ALLOWED_PATHS_KEY in message


def test_inside_the_root_everything_runs(
    confined: SparkGatewayService, session: SessionHandle, tree: Tree
) -> None:
    inside = tree.allowed
    assert run(confined, session, f"SELECT * FROM text.`{inside}/data.txt`") == [("inside",)]
    name = unique_name("inside")
    run(confined, session, f"CREATE TABLE {name} (a INT) USING parquet LOCATION '{inside}/{name}'")
    run(confined, session, f"INSERT INTO {name} VALUES (1), (2)")
    assert run(confined, session, f"SELECT sum(a) FROM parquet.`{inside}/{name}`") == [(3,)]
    run(
        confined,
        session,
        f"CREATE TEMPORARY VIEW {name}_v USING text OPTIONS (path '{inside}/data.txt')",
    )
    assert run(confined, session, f"SELECT * FROM {name}_v") == [("inside",)]
    # A table of the catalog, wherever it is, is the catalog's to govern.
    assert run(confined, session, f"SELECT count(*) FROM {name}") == [(2,)]
    run(confined, session, f"DROP TABLE {name}")


def test_a_view_over_an_outside_path_is_refused_when_read(
    confined: SparkGatewayService,
    service: SparkGatewayService,
    session: SessionHandle,
    tree: Tree,
) -> None:
    view = unique_name("path_view")
    # Made where nothing is confined (the same metastore), read where it is.
    with opened_session(service) as unconfined:
        secret = tree.outside / "secret.txt"
        run(service, unconfined, f"CREATE VIEW {view} AS SELECT * FROM text.`{secret}`")
        assert run(service, unconfined, f"SELECT count(*) FROM {view}") == [(1,)]
    try:
        message = error_text(confined, session, f"SELECT * FROM {view}")
        assert ALLOWED_PATHS_KEY in message and str(tree.outside) in message
    finally:
        with opened_session(service) as unconfined:
            run(service, unconfined, f"DROP VIEW {view}")


def test_statement_set_members_are_checked(
    confined: SparkGatewayService, session: SessionHandle, tree: Tree, table: str
) -> None:
    run(confined, session, "BEGIN STATEMENT SET")
    message = error_text(
        confined, session, f"INSERT INTO {table} SELECT length(value) FROM text.`{tree.outside}`"
    )
    assert ALLOWED_PATHS_KEY in message  # the session (and its set) closes after the test


def test_a_compiled_plan_s_table_options_are_confined(
    confined: SparkGatewayService, session: SessionHandle, tree: Tree, table: str
) -> None:
    """A plan file keeps a statement's OPTIONS hints; one edited to name a path
    outside the roots is refused before anything runs."""
    path = tree.allowed / f"{table}_plan.json"
    run(confined, session, "SET 'execution.runtime-mode' = 'streaming'")
    try:
        run(
            confined,
            session,
            f"COMPILE PLAN '{path}' FOR INSERT INTO {table}_in "
            f"/*+ OPTIONS('path' = '{tree.allowed}/hinted') */ "
            "SELECT k FROM (VALUES ('a')) AS t(k)",
        )
        body = json.loads(path.read_text())
        [sink] = [n for n in body["nodes"] if n["type"] == "stream-exec-sink_1"]
        sink["table"]["options"]["path"] = f"{tree.outside}/edited"
        path.write_text(json.dumps(body))
        jobs_before = len(run(confined, session, "SHOW JOBS"))
        message = error_text(confined, session, f"EXECUTE PLAN '{path}'")
        assert ALLOWED_PATHS_KEY in message and f"{tree.outside}/edited" in message, message
        assert len(run(confined, session, "SHOW JOBS")) == jobs_before
    finally:
        run(confined, session, "RESET 'execution.runtime-mode'")
        path.unlink(missing_ok=True)
    assert sorted(p.name for p in tree.outside.iterdir()) == ["lib.jar", "secret.txt"]


def test_authentication_on_confines_to_the_warehouse_and_files(
    spark: SparkSession, tmp_path: Path, tree: Tree
) -> None:
    users = tmp_path / "users"
    users.write_text("")
    data_dir = tmp_path / "data"
    service = make_service(
        spark,
        **{
            "sql-gateway.data-dir": str(data_dir),
            "sql-gateway.authentication": "password",
            "sql-gateway.authentication.password.file": str(users),
        },
    )
    try:
        principal = Principal("ann", mechanism="password")
        handle = service.open_session(SessionEnvironment(user="ann", principal=principal))
        (data_dir / "files" / "mine.txt").write_text("ann's\n")
        assert run(service, handle, f"SELECT * FROM text.`{data_dir}/files/mine.txt`") == [
            ("ann's",)
        ]
        # The rest of the data dir holds the password file, logs and metastore.
        for path in (users, data_dir / "log", tree.outside / "secret.txt"):
            message = error_text(service, handle, f"SELECT * FROM text.`{path}`")
            assert ALLOWED_PATHS_KEY in message and "/warehouse" in message
        # The issue's own examples, as a remote user would type them.
        for statement in (
            "SELECT * FROM text.`/etc/passwd`",
            "CREATE TABLE etc_table (a INT) USING csv LOCATION '/etc'",
            "ADD JAR '/etc/hosts'",
        ):
            message = error_text(service, handle, statement)
            assert ALLOWED_PATHS_KEY in message and "/etc" in message and "root:" not in message
        service.close_session(handle)
    finally:
        service.stop()


def test_without_authentication_or_with_a_star_nothing_is_confined(
    spark: SparkSession, service: SparkGatewayService, tree: Tree
) -> None:
    anywhere = make_service(spark, **{ALLOWED_PATHS_KEY: "*"})
    try:
        for svc in (service, anywhere):
            with opened_session(svc) as handle:
                secret = tree.outside / "secret.txt"
                assert run(svc, handle, f"SELECT * FROM text.`{secret}`") == [("s3cr3t",)]
    finally:
        anywhere.stop()


def test_a_session_opened_with_an_outside_jar_is_refused(
    confined: SparkGatewayService, tree: Tree
) -> None:
    from sparkgate.api.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=ALLOWED_PATHS_KEY):
        confined.open_session(SessionEnvironment(jars=(str(tree.outside / "lib.jar"),)))
