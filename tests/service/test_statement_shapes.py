"""SHOW / DESCRIBE answer in the shape of the session's protocol; connector tables are tables.

Flink-protocol sessions (the REST endpoint, the embedded client) read Flink's
result columns, HiveServer2 sessions read Spark's (docs/statements.md).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from sparkgate.api.catalog import TableKind
from sparkgate.api.errors import ExecutionError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import EndpointVersion, SessionEnvironment
from sparkgate.api.types import BOOLEAN, STRING
from sparkgate.client.textrows import batches_to_text
from sparkgate.service.catalog import list_tables
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.statements.metadata import flink_ddl
from sparkgate.service.streaming.ddl import parse_connector_table
from tests.service.conftest import fetch_all

REST = EndpointVersion("rest", "V4")
HIVE = EndpointVersion("hiveserver2", "HIVE_CLI_SERVICE_PROTOCOL_V10")


def _open(service: SparkGatewayService, version: EndpointVersion) -> SessionHandle:
    return service.open_session(SessionEnvironment(session_name="shapes", endpoint_version=version))


class Answer:
    def __init__(self, names: tuple[str, ...], types: list[Any], rows: list[tuple[Any, ...]]):
        self.names, self.types, self.rows = names, types, rows


def ask(service: SparkGatewayService, session: SessionHandle, statement: str) -> Answer:
    op = service.execute_statement(session, statement)
    try:
        first, rows = fetch_all(service, session, op)
    finally:
        service.close_operation(session, op)
    return Answer(first.schema.names, list(first.schema.types), rows)


@pytest.fixture(scope="module")
def database(service: SparkGatewayService) -> Iterator[str]:
    """A database holding a connector table, a Spark table and a view."""
    name = f"shapes_{uuid.uuid4().hex[:8]}"
    setup = _open(service, REST)
    for statement in (
        f"CREATE DATABASE {name}",
        f"USE {name}",
        "CREATE TABLE gen (id INT NOT NULL, name STRING, ts AS PROCTIME(), "
        "PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen', 'number-of-rows' = '3')",
        "CREATE TABLE plain (a INT, b DECIMAL(10, 2)) USING parquet",
        "CREATE VIEW v AS SELECT 1 AS x",
    ):
        ask(service, setup, statement)
    service.close_session(setup)
    yield name
    cleanup = _open(service, REST)
    with contextlib.suppress(Exception):
        ask(service, cleanup, f"DROP DATABASE {name} CASCADE")
    service.close_session(cleanup)


@pytest.fixture
def rest(service: SparkGatewayService, database: str) -> Iterator[SessionHandle]:
    handle = _open(service, REST)
    ask(service, handle, f"USE {database}")
    yield handle
    service.close_session(handle)


@pytest.fixture
def hive(service: SparkGatewayService, database: str) -> Iterator[SessionHandle]:
    handle = _open(service, HIVE)
    ask(service, handle, f"USE {database}")
    yield handle
    service.close_session(handle)


# -- Flink's own statements, every protocol ------------------------------------


@pytest.mark.parametrize("version", [REST, HIVE])
def test_show_current_catalog(service: SparkGatewayService, version: EndpointVersion) -> None:
    session = _open(service, version)
    try:
        answer = ask(service, session, "SHOW CURRENT CATALOG")
        assert answer.names == ("current catalog name",)
        assert answer.rows == [("spark_catalog",)]
        assert ask(service, session, "SHOW MODULES").rows == [("core",)]
        modules = ask(service, session, "SHOW FULL MODULES")
        assert modules.names == ("module name", "used")
        assert modules.types == [STRING, BOOLEAN]
        assert modules.rows == [("core", True)]
    finally:
        service.close_session(session)


# -- Flink shapes for Flink-protocol sessions ----------------------------------


def test_flink_session_listings(
    service: SparkGatewayService, rest: SessionHandle, database: str
) -> None:
    current = ask(service, rest, "SHOW CURRENT DATABASE")
    assert (current.names, current.rows) == (("current database name",), [(database,)])
    databases = ask(service, rest, "SHOW DATABASES")
    assert databases.names == ("database name",)
    assert (database,) in databases.rows
    assert ask(service, rest, "SHOW CATALOGS").names == ("catalog name",)
    tables = ask(service, rest, "SHOW TABLES")
    assert tables.names == ("table name",)
    assert tables.rows == [("gen",), ("plain",), ("v",)]
    views = ask(service, rest, "SHOW VIEWS")
    assert (views.names, views.rows) == (("view name",), [("v",)])
    assert ask(service, rest, f"SHOW TABLES FROM spark_catalog.{database} LIKE 'p%'").rows == [
        ("plain",)
    ]
    assert ask(service, rest, "SHOW TABLES NOT LIKE '%a%'").rows == [("gen",), ("v",)]
    assert ask(service, rest, "SHOW FUNCTIONS").names == ("function name",)


def test_flink_session_describe(service: SparkGatewayService, rest: SessionHandle) -> None:
    columns = ("name", "type", "null", "key", "extras", "watermark")
    plain = ask(service, rest, "DESCRIBE plain")
    assert plain.names == columns
    assert plain.types == [STRING, STRING, BOOLEAN, STRING, STRING, STRING]
    assert plain.rows == [
        ("a", "INT", True, None, None, None),
        ("b", "DECIMAL(10, 2)", True, None, None, None),
    ]
    gen = ask(service, rest, "DESC gen")
    assert gen.rows == [
        ("id", "INT", False, "PRI(id)", None, None),
        ("name", "STRING", True, None, None, None),
        ("ts", "TIMESTAMP_LTZ(3) *PROCTIME*", False, None, "AS PROCTIME()", None),
    ]
    assert ask(service, rest, "SHOW COLUMNS FROM gen LIKE 'n%'").rows == [gen.rows[1]]


def test_flink_session_show_create_connector_table(
    service: SparkGatewayService, rest: SessionHandle, database: str
) -> None:
    answer = ask(service, rest, "SHOW CREATE TABLE gen")
    assert answer.names == ("result",)
    assert answer.rows == [
        (
            f"CREATE TABLE `spark_catalog`.`{database}`.`gen` (\n"
            "  `id` INT NOT NULL,\n"
            "  `name` VARCHAR(2147483647),\n"
            "  `ts` AS PROCTIME(),\n"
            "  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED\n"
            ")\n"
            "WITH (\n"
            "  'connector' = 'datagen',\n"
            "  'number-of-rows' = '3'\n"
            ")\n",
        )
    ]
    spark_table = ask(service, rest, "SHOW CREATE TABLE plain")
    assert spark_table.names == ("result",)
    assert spark_table.rows[0][0].startswith("CREATE TABLE ")


# -- Spark shapes for HiveServer2 sessions -------------------------------------


def test_hiveserver2_session_keeps_sparks_columns(
    service: SparkGatewayService, hive: SessionHandle, database: str
) -> None:
    tables = ask(service, hive, "SHOW TABLES")
    assert tables.names == ("namespace", "tableName", "isTemporary")
    assert [row[1] for row in tables.rows] == ["gen", "plain", "v"]
    views = ask(service, hive, "SHOW VIEWS")
    assert views.names == ("namespace", "viewName", "isTemporary")
    assert [row[1] for row in views.rows] == ["v"]
    assert ask(service, hive, "SHOW DATABASES").names == ("namespace",)
    assert ask(service, hive, "DESCRIBE plain").names == ("col_name", "data_type", "comment")
    described = ask(service, hive, "DESCRIBE gen")
    assert described.names == ("col_name", "data_type", "comment")
    assert [row[:2] for row in described.rows] == [
        ("id", "int"),
        ("name", "string"),
        ("ts", "timestamp"),
    ]
    created = ask(service, hive, "SHOW CREATE TABLE gen")
    assert created.names == ("createtab_stmt",)
    text = created.rows[0][0]
    assert text.startswith(f"CREATE TABLE `spark_catalog`.`{database}`.`gen` (")
    assert "raise_error" not in text and "sparkgate.connector" not in text


def test_hiveserver2_session_keeps_sparks_view_and_listing_semantics(
    service: SparkGatewayService, hive: SessionHandle, rest: SessionHandle
) -> None:
    """Flink's answers are for Flink-protocol sessions: a HiveServer2 session gets
    Spark's for the statements both have."""
    with pytest.raises(ExecutionError, match="CREATE_PERMANENT_VIEW_WITHOUT_ALIAS"):
        ask(service, hive, "CREATE VIEW unnamed AS SELECT 1 + 1")
    ask(service, hive, "CREATE TEMPORARY VIEW shadow AS SELECT 1 AS x")
    ask(service, hive, "DROP VIEW shadow")  # Spark drops the temporary view
    assert [r[1] for r in ask(service, hive, "SHOW VIEWS").rows] == ["v"]
    # SQL's LIKE for Flink, Spark's pattern for HiveServer2.
    assert ask(service, hive, "SHOW DATABASES LIKE 'shapes*'").rows
    assert not ask(service, rest, "SHOW DATABASES LIKE 'shapes*'").rows
    assert ask(service, rest, "SHOW DATABASES LIKE 'shapes%'").rows


def test_connector_table_is_a_table_in_hiveserver2_metadata(
    service: SparkGatewayService, database: str
) -> None:
    """What beeline's !tables and JDBC getTables read (GetTables)."""
    kinds = {
        info.identifier.name: info.kind
        for info in list_tables(service.spark, "spark_catalog", database)
    }
    assert kinds == {"gen": TableKind.TABLE, "plain": TableKind.TABLE, "v": TableKind.VIEW}


def test_temporary_connector_table_is_not_a_view(
    service: SparkGatewayService, rest: SessionHandle, database: str
) -> None:
    ask(
        service,
        rest,
        "CREATE TEMPORARY TABLE tgen (k INT) "
        "WITH ('connector' = 'datagen', 'number-of-rows' = '1')",
    )
    assert ("tgen",) in ask(service, rest, "SHOW TABLES").rows
    assert ("tgen",) not in ask(service, rest, "SHOW VIEWS").rows
    created = ask(service, rest, "SHOW CREATE TABLE tgen").rows[0][0]
    # Flink's temporary tables live in the current catalog and database.
    full = f"`spark_catalog`.`{database}`.`tgen`"
    assert created.startswith(f"CREATE TEMPORARY TABLE {full} (\n  `k` INT\n)")


def test_show_create_masks_secrets() -> None:
    definition = parse_connector_table(
        "CREATE TABLE j (id INT) WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://h/db', "
        "'username' = 'u', 'password' = 'p4ss', 'properties.sasl.jaas.config' = 'x')"
    )
    assert definition is not None
    text = flink_ddl(definition)
    assert "p4ss" not in text
    assert "  'password' = '****'" in text
    assert "  'properties.sasl.jaas.config' = '****'" in text
    assert "  'username' = 'u'" in text


def test_flink_precisions_of_time_literals_through_values_views_and_unions(
    service: SparkGatewayService, rest: SessionHandle, hive: SessionHandle
) -> None:
    """Flink types a datetime literal by the digits it is written with, a VALUES
    column by its widest row, TO_TIMESTAMP_LTZ as TIMESTAMP_LTZ(3); a column keeps
    that through views, subqueries and unions. Spark's own columns keep six."""

    def types(session: SessionHandle, statement: str) -> list[str]:
        return [str(t).replace(" NOT NULL", "") for t in ask(service, session, statement).types]

    ask(
        service,
        rest,
        "CREATE TEMPORARY VIEW born(name, dob) AS (VALUES "
        "('a', TIMESTAMP '2001-01-13 20:11:11.123'), ('b', TIMESTAMP '1994-02-14 21:12:11.1'))",
    )
    assert types(rest, "SELECT * FROM born")[1].endswith("(3)")
    assert types(rest, "SELECT dob AS d FROM (SELECT * FROM born WHERE name > '')")[0].endswith(
        "(3)"
    )
    literals = (
        "SELECT TIMESTAMP '2021-04-13 20:12:11' AS ts0, TIME '20:12:11' AS t0, "
        "TIME '20:12:11.12' AS t2, TIMESTAMP '2021-04-13 20:12:11.123456789' AS ts9, "
        "TO_TIMESTAMP_LTZ(1, 0) AS l0"
    )
    ts0, t0, t2, ts9, l0 = types(rest, literals)
    assert (ts0[-3:], t0, t2, ts9[-3:], l0) == ("(0)", "TIME(0)", "TIME(2)", "(6)", l0)
    assert l0 == "TIMESTAMP_LTZ(3)"
    union = (
        "SELECT TIMESTAMP '2021-01-01 00:00:00.1' AS u "
        "UNION ALL SELECT TIMESTAMP '2021-01-01 00:00:00.12'"
    )
    assert types(rest, union)[0].endswith("(2)")
    # A cast to TIMESTAMP: six digits, as Flink's; on HiveServer2, Spark's types throughout.
    cast = "SELECT CAST('2021-01-01 00:00:00.1' AS TIMESTAMP) AS c, dob FROM born"
    assert types(rest, cast)[0].endswith("(6)")
    assert types(hive, "SELECT TIMESTAMP '2001-01-13 20:11:11.123' AS d")[0].endswith("(6)")


def test_flink_precisions_of_nested_values_and_their_parts(
    service: SparkGatewayService, rest: SessionHandle, hive: SessionHandle
) -> None:
    """ARRAY[...], MAP[...] and ROW(...) built of datetime literals have each part's
    Flink precision, and so has a part taken out of them; the values show that
    many digits. HiveServer2 keeps Spark's types."""

    def shown(session: SessionHandle, statement: str) -> tuple[list[str], list[object]]:
        result = ask(service, session, statement)
        return [str(t).replace(" NOT NULL", "") for t in result.types], list(result.rows[0])

    built = (
        "SELECT ARRAY[TIMESTAMP '2024-01-01 12:00:00.123', TIMESTAMP '2024-01-01 12:00:00.1'] "
        "AS a, MAP['k', TIMESTAMP '2024-01-01 12:00:00.5'] AS m, "
        "named_struct('t', TIMESTAMP '2024-01-01 12:00:00', 'n', 1) AS r, "
        "ARRAY[TIMESTAMP '2024-01-01 12:00:00.123456'] AS six"
    )
    types, _ = shown(rest, built)
    assert types == [
        "ARRAY<TIMESTAMP_LTZ(3)>",
        "MAP<STRING, TIMESTAMP_LTZ(1)>",
        "ROW<`t` TIMESTAMP_LTZ(0), `n` INT>",
        "ARRAY<TIMESTAMP_LTZ(6)>",
    ]
    parts = f"SELECT element_at(a, 1) AS e, m['k'] AS v, r.t AS t, a FROM ({built})"
    types, _ = shown(rest, parts)
    assert types[:3] == ["TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(1)", "TIMESTAMP_LTZ(0)"]
    op = service.execute_statement(rest, parts)
    try:
        first, _ = fetch_all(service, rest, op)
    finally:
        service.close_operation(rest, op)
    assert batches_to_text(first.batches, first.schema, "UTC") == [
        [
            "2024-01-01 12:00:00.123",
            "2024-01-01 12:00:00.5",
            "2024-01-01 12:00:00",
            "[2024-01-01 12:00:00.123, 2024-01-01 12:00:00.100]",
        ]
    ]
    types, _ = shown(hive, "SELECT array(TIMESTAMP '2024-01-01 12:00:00.123') AS a")
    assert types[0] == "ARRAY<TIMESTAMP_LTZ(6)>", types
    # A VALUES list Spark evaluates: each part by the digits its values need.
    values = (
        "SELECT * FROM (VALUES (ARRAY[TIMESTAMP '2024-01-01 12:00:00.12'], "
        "MAP['k', TIMESTAMP '2024-01-01 12:00:00.5'], named_struct('t', TIME '12:00:00.1')), "
        "(ARRAY[TIMESTAMP '2024-01-01 12:00:00.1', NULL], NULL, NULL)) AS t(a, m, r)"
    )
    types, _ = shown(rest, values)
    assert types == ["ARRAY<TIMESTAMP_LTZ(2)>", "MAP<STRING, TIMESTAMP_LTZ(1)>", "ROW<`t` TIME(1)>"]
    types, _ = shown(rest, f"SELECT a[0] AS e FROM ({values})")
    assert types == ["TIMESTAMP_LTZ(2)"]


def test_flink_session_describe_function(
    service: SparkGatewayService, rest: SessionHandle, hive: SessionHandle, database: str
) -> None:
    columns = ("info name", "info value")
    upper = ask(service, rest, "DESCRIBE FUNCTION upper")
    assert upper.names == columns
    assert upper.rows == [("is system function", "true"), ("is temporary", "false")]
    extended = ask(service, rest, "DESC FUNCTION EXTENDED sum").rows
    assert extended[:2] == [("is system function", "true"), ("is temporary", "false")]
    assert dict(extended[2:]) == {
        "kind": "AGGREGATE",
        "requirements": "[]",
        "is deterministic": "true",
        "supports constant folding": "true",
        "signature": "sum(expr)",
    }
    assert dict(ask(service, rest, "DESCRIBE FUNCTION EXTENDED rand").rows)["is deterministic"] == (
        "false"
    )
    assert dict(ask(service, rest, "DESCRIBE FUNCTION EXTENDED explode").rows)["kind"] == "TABLE"

    ask(service, rest, "CREATE TEMPORARY FUNCTION pi_udf AS 'org.apache.hadoop.hive.ql.udf.UDFPI'")
    ask(service, rest, "CREATE FUNCTION e_udf AS 'org.apache.hadoop.hive.ql.udf.UDFE'")
    try:
        assert ask(service, rest, "DESCRIBE FUNCTION pi_udf").rows == [
            ("is system function", "false"),
            ("is temporary", "true"),
            ("class name", "org.apache.hadoop.hive.ql.udf.UDFPI"),
            ("function language", "JAVA"),
            ("resource uris", "[]"),
        ]
        catalog_function = ask(service, rest, f"DESCRIBE FUNCTION EXTENDED {database}.e_udf")
        assert catalog_function.rows[:3] == [
            ("is system function", "false"),
            ("is temporary", "false"),
            ("class name", "org.apache.hadoop.hive.ql.udf.UDFE"),
        ]
        assert dict(catalog_function.rows)["kind"] == "SCALAR"
        # A HiveServer2 session keeps Spark's answer.
        assert ask(service, hive, "DESCRIBE FUNCTION upper").names == ("function_desc",)
    finally:
        ask(service, rest, "DROP TEMPORARY FUNCTION pi_udf")
        ask(service, rest, "DROP FUNCTION e_udf")
    with pytest.raises(
        ExecutionError, match=r"Function with the identifier 'no_such' doesn't exist\."
    ):
        ask(service, rest, "DESCRIBE FUNCTION no_such")
