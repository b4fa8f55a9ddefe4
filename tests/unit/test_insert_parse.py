"""The INSERT forms the gateway writes itself, taken apart (no Spark needed)."""

from __future__ import annotations

import pytest

from sparkgate.service.streaming.insert import InsertStatement, parse_insert


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
                partition={"dt": "DATE '2024-01-01'"},
                columns=("a",),
            ),
        ),
    ],
)
def test_insert_parts(text: str, expected: InsertStatement) -> None:
    assert parse_insert(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "INSERT INTO t BY NAME SELECT 1 AS a",
        "INSERT INTO t REPLACE WHERE a = 1 SELECT 1",
        "INSERT OVERWRITE DIRECTORY '/x' USING parquet SELECT 1",
        "INSERT INTO t (a + 1) SELECT 1",
        "INSERT INTO t",
        "UPDATE t SET a = 1",
    ],
)
def test_other_forms_are_left_to_spark(text: str) -> None:
    assert parse_insert(text) is None
