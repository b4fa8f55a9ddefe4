"""A computed column's expression as Flink's SHOW CREATE TABLE and DESCRIBE print it."""

from __future__ import annotations

import pytest

from sparkgate.service.streaming.ddl import parse_connector_table
from sparkgate.sql.flink_expression import flink_expression


@pytest.mark.parametrize(
    ("written", "printed"),
    [
        ("coalesce(product, 'missing_sku')", "COALESCE(`product`, 'missing_sku')"),
        ("PROCTIME()", "PROCTIME()"),
        ("price*quantity", "`price` * `quantity`"),
        ("cast(a as decimal(10,2))", "CAST(`a` AS DECIMAL(10, 2))"),
        ("cast(a as int) + -1", "CAST(`a` AS INTEGER) + -1"),
        ("CAST(x AS TIMESTAMP /* precision 3 */)", "CAST(`x` AS TIMESTAMP(3))"),
        ("t.a || `my col`", "`t`.`a` || `my col`"),
        (
            "case when a > 0 then 'x' else upper(b) end",
            "CASE WHEN `a` > 0 THEN 'x' ELSE UPPER(`b`) END",
        ),
        ("a in (1, 2) and not (b is null)", "`a` IN (1, 2) AND NOT (`b` IS NULL)"),
        ("ts + interval '1' second", "`ts` + INTERVAL '1' SECOND"),
        ("date '2024-01-01'", "DATE '2024-01-01'"),
        ("extract(year from ts)", "EXTRACT(YEAR FROM `ts`)"),
        ("a -- a comment\n + 1", "`a` + 1"),
        ("arr[1] + m['k']", "`arr`[1] + `m`['k']"),
        ("a::int + b", "`a`::INTEGER + `b`"),
        # column names that are also SQL words, and functions without parentheses
        ("year + 1", "`year` + 1"),
        ("coalesce(date, first, `map`)", "COALESCE(`date`, `first`, `map`)"),
        ("current_timestamp", "CURRENT_TIMESTAMP"),
        ("interval '1' day to second", "INTERVAL '1' DAY TO SECOND"),
        ("try_cast(a as int)", "TRY_CAST(`a` AS INTEGER)"),
        ("a div b", "`a` DIV `b`"),
        ("- -a", "- -`a`"),
        (
            "row_number() over (partition by k order by v desc nulls last)",
            "ROW_NUMBER() OVER (PARTITION BY `k` ORDER BY `v` DESC NULLS LAST)",
        ),
    ],
)
def test_an_expression_is_printed_as_flinks_parser_prints_it(written: str, printed: str) -> None:
    assert flink_expression(written) == printed


def test_a_named_constraint_keeps_its_name_and_an_unnamed_one_is_named_by_flinks_rule() -> None:
    named = parse_connector_table(
        "CREATE TABLE t (a INT, b INT, CONSTRAINT my_key PRIMARY KEY (a, b) NOT ENFORCED) "
        "WITH ('connector' = 'datagen')"
    )
    unnamed = parse_connector_table(
        "create table t (a int, primary key (a) not enforced) with ('connector' = 'datagen')"
    )
    assert named is not None and unnamed is not None
    assert (named.primary_key, named.constraint_name) == (("a", "b"), "my_key")
    assert (unnamed.primary_key, unnamed.constraint_name) == (("a",), "PK_a")
    assert type(named).from_json(named.name, named.to_json()).constraint == "my_key"


def test_a_column_comment_is_kept_apart_from_its_type_or_expression() -> None:
    table = parse_connector_table(
        "CREATE TABLE t (a INT NOT NULL COMMENT 'it''s a', b AS a + 1 COMMENT 'b', "
        "m TIMESTAMP(3) METADATA FROM 'timestamp' VIRTUAL COMMENT 'm', c INT) "
        "WITH ('connector' = 'kafka')"
    )
    assert table is not None
    a, b, m, c = table.columns
    assert (a.type, a.not_null, a.comment) == ("INT", True, "it's a")
    assert (b.expression, b.comment) == ("a + 1", "b")
    assert (m.metadata, m.virtual, m.comment) == ("timestamp", True, "m")
    assert c.comment is None
    assert type(table).from_json(table.name, table.to_json()).columns == table.columns
