"""Spark SQL's structure from Spark's own parser: tables read, INSERT parts, CTAS."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from sparkgate.service.spark.plans import (
    TableAsSelect,
    parse_identifier,
    parse_statement,
    read_spans,
)
from sparkgate.service.streaming.insert import InsertStatement, parse_insert
from sparkgate.service.streaming.resolve import table_references

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        ("SELECT * FROM a", [("a",)]),
        ("SELECT * FROM db.a JOIN b ON a.x = b.x", [("db", "a"), ("b",)]),
        ("SELECT * FROM a, b WHERE x IN (SELECT y FROM c)", [("a",), ("b",), ("c",)]),
        ("SELECT * FROM STREAM(a)", [("a",)]),
        ("SELECT * FROM range(10)", []),
        ("SELECT a, b FROM (SELECT 1 AS a, 2 AS b)", []),
        ("TABLE a", [("a",)]),
        ("WITH v AS (SELECT * FROM a) SELECT * FROM v JOIN b", [("a",), ("b",)]),
        (
            "WITH RECURSIVE x (n) AS (SELECT 1), `y` AS (SELECT * FROM t) SELECT * FROM x, y, z",
            [("t",), ("z",)],
        ),
        ("SELECT * FROM db.a WHERE x IN (WITH a AS (SELECT 1) SELECT * FROM a)", [("db", "a")]),
        # a function's FROM is not a table
        ("SELECT EXTRACT(YEAR FROM ts) FROM t", [("t",)]),
        ("SELECT TRIM(' ' FROM name) AS n FROM t", [("t",)]),
        (
            "SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.x = (SELECT 1 FROM c))",
            [("a",), ("b",), ("c",)],
        ),
        ("not sql at all", []),
    ],
)
def test_table_references(spark: SparkSession, sql: str, names: list[tuple[str, ...]]) -> None:
    assert [ref.name for ref in table_references(sql, spark)] == names


def test_spans_cover_the_name_as_written(spark: SparkSession) -> None:
    sql = "SELECT * FROM db.`a b` o JOIN STREAM(c) WHERE x IN (SELECT 1 FROM d)"
    spans = read_spans(spark, sql)
    assert [sql[s.start : s.end] for s in spans] == ["db.`a b`", "STREAM(c)", "d"]
    assert [(s.read.alias, s.read.stream) for s in spans] == [
        ("o", False),
        (None, True),
        (None, False),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("INSERT INTO t SELECT 1", InsertStatement(("t",), False, "SELECT 1")),
        (
            "insert overwrite table db.`my t` (select a from s);",
            InsertStatement(("db", "my t"), True, "(select a from s)"),
        ),
        (
            "INSERT INTO t (b, `c`) VALUES (1, 2)",
            InsertStatement(("t",), False, "VALUES (1, 2)", columns=("b", "c")),
        ),
        (
            "INSERT INTO t PARTITION (dt = '2024-01-01', h) SELECT a, h FROM s",
            InsertStatement(
                ("t",), False, "SELECT a, h FROM s", partition={"dt": "'2024-01-01'", "h": None}
            ),
        ),
        (
            "INSERT INTO t PARTITION (dt = DATE '2024-01-01') (a) WITH x AS (SELECT 1) "
            "SELECT * FROM x",
            InsertStatement(
                ("t",),
                False,
                "WITH x AS (SELECT 1) SELECT * FROM x",
                partition={"dt": "'2024-01-01'"},
                columns=("a",),
            ),
        ),
        (
            "INSERT INTO t PARTITION (k = 'it''s') SELECT 1",
            InsertStatement(("t",), False, "SELECT 1", partition={"k": "'it\\'s'"}),
        ),
        (
            "INSERT INTO t /*+ OPTIONS('path' = '/x') */ (a) SELECT 1",
            InsertStatement(("t",), False, "SELECT 1", columns=("a",), options={"path": "/x"}),
        ),
    ],
)
def test_insert_parts(spark: SparkSession, text: str, expected: InsertStatement) -> None:
    # What Spark runs of an INSERT of its own tables: the text, OPTIONS hints blanked.
    spark_text = re.sub(r"/\*\+.*?\*/", lambda m: " " * len(m.group()), text)
    assert parse_insert(text, spark) == replace(expected, spark_text=spark_text)


def test_static_partition_value_reads_back_as_written(spark: SparkSession) -> None:
    insert = parse_insert("INSERT INTO t PARTITION (k = 'it''s \\\\ x') SELECT 1", spark)
    assert insert is not None
    value = insert.partition["k"]
    assert value is not None
    assert spark.sql(f"SELECT {value}").first()[0] == "it's \\ x"


@pytest.mark.parametrize(
    "text",
    [
        "INSERT INTO t BY NAME SELECT 1 AS a",
        "INSERT INTO t REPLACE WHERE a = 1 SELECT 1",
        "INSERT OVERWRITE t PARTITION (p = 1) IF NOT EXISTS SELECT 1",
        "INSERT OVERWRITE DIRECTORY '/x' USING parquet SELECT 1",
        "INSERT INTO t (a + 1) SELECT 1",
        "INSERT INTO t",
        "UPDATE t SET a = 1",
    ],
)
def test_other_forms_are_left_to_spark(spark: SparkSession, text: str) -> None:
    assert parse_insert(text, spark) is None


def test_table_as_select(spark: SparkSession) -> None:
    text = "CREATE TABLE db.x USING parquet AS SELECT * FROM y"
    plan = parse_statement(spark, text)
    assert plan is not None
    assert plan.table_as_select == TableAsSelect(("db", "x"), False, text.index("SELECT"))
    assert [read.name for read in plan.reads] == [("y",)]
    replace = parse_statement(spark, "REPLACE TABLE x AS SELECT 1")
    assert replace is not None and replace.table_as_select is not None
    assert replace.table_as_select.replace


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id FROM range(3) ORDER BY id",
        "SELECT 1 UNION ALL SELECT 2 ORDER BY 1 LIMIT 3",
        "WITH c AS (SELECT 1 a) SELECT a FROM c ORDER BY a",
        "( (SELECT 1) )",
        "VALUES (1), (2)",
        "FROM range(3) SELECT id",
        "from\nrange(3) SELECT id",
        "TABLE y",
        "select * from y where a in (select 1)",
    ],
)
def test_the_query_of_a_table_as_select_is_all_of_it(spark: SparkSession, query: str) -> None:
    """The query's text starts where the query does (a Sort's own span starts at its
    ORDER BY; parentheses, FROM-first and TABLE are in no node's span)."""
    text = f"CREATE TABLE x COMMENT 'c' AS\n  {query}"
    plan = parse_statement(spark, text)
    assert plan is not None and plan.table_as_select is not None
    assert text[plan.table_as_select.query_start :] == query


def test_parse_identifier(spark: SparkSession) -> None:
    assert parse_identifier(spark, "a.`b c`.`d``e`") == ("a", "b c", "d`e")
    with pytest.raises(ValueError, match="Malformed"):
        parse_identifier(spark, "a..b")


def test_cache_follows_parser_settings(spark: SparkSession) -> None:
    session = spark.newSession()
    text = 'SELECT * FROM "quoted_t"'
    assert table_references(text, session) == []  # a string, not a name: does not parse
    session.conf.set("spark.sql.ansi.doubleQuotedIdentifiers", "true")
    assert [r.name for r in table_references(text, session)] == [("quoted_t",)]
