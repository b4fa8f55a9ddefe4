"""Flink's connector DDL and the changelog differ, without Spark."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from sparkgate.api.errors import ExecutionError, SqlParseError, UnsupportedStatementError
from sparkgate.api.results import RowKind
from sparkgate.service.streaming.changelog import ChangelogDiffer, OutputMode, replay
from sparkgate.service.streaming.connectors import check_definition, datagen_select, spark_type
from sparkgate.service.streaming.ddl import (
    Column,
    Watermark,
    parse_connector_create,
    parse_connector_table,
)

INS, UB, UA, D = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE


@pytest.mark.parametrize(
    ("written", "printed"),
    [
        ("ts - INTERVAL '1' SECONDS", "`ts` - INTERVAL '1' SECOND"),
        ("`ts` - interval '5' minute", "`ts` - INTERVAL '5' MINUTE"),
        ("ts", "`ts`"),
        ("ts - INTERVAL '0.5' SECOND", "`ts` - INTERVAL '0.5' SECOND"),
        # Not read as a bound: re-spelled as any expression.
        ("ts - INTERVAL '1' second(3)", "`ts` - INTERVAL '1' SECOND(3)"),
    ],
)
def test_a_watermark_prints_as_flink_prints_it(written: str, printed: str) -> None:
    assert Watermark("ts", written).flink_text == printed


def test_flink_ddl_is_parsed_with_computed_columns_and_watermark() -> None:
    parsed = parse_connector_table(
        "CREATE TABLE IF NOT EXISTS db.clicks (\n"
        "  user_id BIGINT NOT NULL COMMENT 'who',\n"
        "  url VARCHAR(100),\n"
        "  ts TIMESTAMP(3),\n"
        "  pt AS PROCTIME(),\n"
        "  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,\n"
        "  PRIMARY KEY (user_id) NOT ENFORCED\n"
        ") COMMENT 'clicks' WITH ('connector' = 'datagen', 'rows-per-second' = '5');"
    )
    assert parsed is not None
    assert parsed.name == ("db", "clicks")
    assert parsed.if_not_exists
    assert parsed.columns == (
        Column("user_id", "BIGINT", not_null=True, comment="who"),
        Column("url", "VARCHAR(100)"),
        Column("ts", "TIMESTAMP(3)"),
        Column("pt", expression="PROCTIME()"),
    )
    assert parsed.columns[3].is_proctime
    assert parsed.watermark is not None and parsed.watermark.delay == "5 seconds"
    assert parsed.primary_key == ("user_id",)
    assert dict(parsed.options) == {"connector": "datagen", "rows-per-second": "5"}
    assert parsed.comment == "clicks"


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE t (a INT) USING parquet",
        "CREATE TABLE t USING csv OPTIONS (path 'x')",
        "CREATE TABLE t AS WITH x AS (SELECT 1) SELECT * FROM x",
        "CREATE TABLE t (a INT) TBLPROPERTIES ('a' = 'b')",
        "CREATE VIEW v AS SELECT 1",
        "CREATE TABLE t LIKE s USING parquet",
        "CREATE TABLE t LIKE s LOCATION '/x'",
    ],
)
def test_spark_ddl_is_left_to_spark(sql: str) -> None:
    assert parse_connector_table(sql) is None


def test_a_like_clause_is_read_with_its_options() -> None:
    found = parse_connector_create(
        "CREATE TABLE t (x AS 1) WITH ('a' = 'b') LIKE db.s (EXCLUDING ALL, INCLUDING "
        "GENERATED OVERWRITING options)"
    )
    assert found is not None
    definition, like = found
    assert like is not None and like.source == ("db", "s") and like.written
    assert like.strategy("GENERATED") == "INCLUDING"
    assert like.strategy("OPTIONS") == "OVERWRITING"
    assert like.strategy("WATERMARKS") == "EXCLUDING"
    assert definition.columns == (Column("x", expression="1"),)
    # Unwritten: INCLUDING ALL OVERWRITING OPTIONS; alone, Spark's statement too.
    found = parse_connector_create("CREATE TABLE t LIKE s")
    assert found is not None and found[1] is not None and found[1].alone
    assert found[1].strategy("CONSTRAINTS") == "INCLUDING"
    assert found[1].strategy("OPTIONS") == "OVERWRITING"


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CREATE TABLE t LIKE s (INCLUDING)", "LIKE options are"),
        ("CREATE TABLE t LIKE s (MERGING OPTIONS)", "LIKE options are"),
        ("CREATE TABLE t LIKE s (OVERWRITING ALL)", "'OVERWRITING' for 'ALL'"),
        ("CREATE TABLE t LIKE s (OVERWRITING PARTITIONS)", "'OVERWRITING' for 'PARTITIONS'"),
        ("CREATE TABLE t WITH ('a' = 'b') LIKE s (EXCLUDING ALL) x", "unexpected input after LIKE"),
    ],
)
def test_a_bad_like_clause_is_refused(sql: str, message: str) -> None:
    with pytest.raises(SqlParseError, match=re.escape(message)):
        parse_connector_create(sql)


def test_distributed_by_is_refused_by_name() -> None:
    with pytest.raises(UnsupportedStatementError, match="DISTRIBUTED BY / DISTRIBUTED INTO"):
        parse_connector_create(
            "CREATE TABLE t (id INT) DISTRIBUTED BY HASH(id) INTO 4 BUCKETS "
            "WITH ('connector' = 'blackhole')"
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"connector": "kinesis"},
            "valid connectors: blackhole, datagen, filesystem, jdbc, kafka,",
        ),
        ({}, "do not contain an option key 'connector'"),
        ({"connector": "datagen", "rows-per-sec": "1"}, "valid options: rows-per-second"),
        ({"connector": "datagen", "fields.zz.kind": "random"}, "names no physical column"),
        ({"connector": "datagen", "fields.a.kind": "fancy"}, "valid kinds: random, sequence"),
        ({"connector": "filesystem", "path": "/x"}, "requires the option 'format'"),
        ({"connector": "filesystem", "path": "/x", "format": "avro"}, "valid formats: csv"),
        ({"connector": "print", "path": "/x"}, "valid options: print-identifier"),
    ],
)
def test_bad_definitions_name_the_valid_choices(options: dict[str, str], message: str) -> None:
    body = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    parsed = parse_connector_table(f"CREATE TABLE t (a INT, b STRING) WITH ({body})")
    assert parsed is not None
    with pytest.raises(ExecutionError, match=message):
        check_definition(parsed)


def test_lower_case_primary_key() -> None:
    parsed = parse_connector_table(
        "create table t (id int, name string, primary key (id) not enforced) "
        "with ('connector' = 'datagen')"
    )
    assert parsed is not None
    assert parsed.primary_key == ("id",)


@pytest.mark.parametrize(
    ("option", "value"),
    [("fields.x.min", "abc"), ("fields.x.max", "1.5"), ("fields.y.length", "ten")],
)
def test_bad_datagen_numbers_name_the_option(option: str, value: str) -> None:
    parsed = parse_connector_table(
        f"CREATE TABLE t (x INT, y STRING) WITH ('connector' = 'datagen', '{option}' = '{value}')"
    )
    assert parsed is not None
    with pytest.raises(
        ExecutionError, match=f"Invalid value '{value}' for datagen option '{option}'"
    ):
        datagen_select(parsed)


def test_bad_watermark_is_a_parse_error() -> None:
    with pytest.raises(SqlParseError, match="watermark"):
        parse_connector_table(
            "CREATE TABLE t (ts TIMESTAMP(3), WATERMARK FOR ts AS ts + 1) WITH ('connector'='x')"
        )


@pytest.mark.parametrize(
    ("flink", "spark"),
    [
        ("VARCHAR(10)", "STRING"),
        ("STRING", "STRING"),
        ("INTEGER", "INT"),
        ("TIMESTAMP(3)", "TIMESTAMP"),
        ("TIMESTAMP_LTZ(3)", "TIMESTAMP"),
        ("TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP"),
        ("BYTES", "BINARY"),
        ("DECIMAL(10, 2)", "DECIMAL(10, 2)"),
        ("BIGINT", "BIGINT"),
        ("MAP<STRING, BYTES>", "MAP<STRING, BINARY>"),
        ("ARRAY<VARCHAR(5)>", "ARRAY<STRING>"),
        ("ROW<a INTEGER, b MAP<STRING, BYTES>>", "STRUCT<a: INT, b: MAP<STRING, BINARY>>"),
    ],
)
def test_flink_types_map_to_spark(flink: str, spark: str) -> None:
    assert spark_type(flink) == spark


def test_update_mode_pairs_before_and_after_per_key() -> None:
    differ = ChangelogDiffer(OutputMode.UPDATE, key=(0,))
    assert differ.apply([("a", 1), ("b", 1)]) == [(INS, ("a", 1)), (INS, ("b", 1))]
    assert differ.apply([("a", 2), ("b", 1)]) == [(UB, ("a", 1)), (UA, ("a", 2))]
    assert differ.state_size == 2


def test_complete_mode_diffs_whole_results() -> None:
    differ = ChangelogDiffer(OutputMode.COMPLETE)
    first = differ.apply([(1,), (2,), (2,)])
    second = differ.apply([(2,), (3,)])
    assert Counter(first) == Counter([(INS, (1,)), (INS, (2,)), (INS, (2,))])
    assert Counter(second) == Counter([(D, (1,)), (D, (2,)), (INS, (3,))])
    assert replay(first + second) == Counter({(2,): 1, (3,): 1})


def test_replay_refuses_retracting_an_absent_row() -> None:
    with pytest.raises(ValueError, match="not in the table"):
        replay([(INS, (1,)), (D, (2,))])


@pytest.mark.parametrize(
    ("expression", "delay"),
    [
        ("ts", "0 seconds"),
        ("`ts`", "0 seconds"),
        ("ts - INTERVAL '5' SECOND", "5 seconds"),
        ("ts - interval '1.5' minutes", "1.5 minutes"),
        # read by the shared lexer: comments and line breaks are no obstacle
        ("ts - /* late */ INTERVAL '2' HOUR", "2 hours"),
        ("ts -- late\n - INTERVAL '1' DAY", "1 days"),
    ],
)
def test_watermark_delay(expression: str, delay: str) -> None:
    assert Watermark("ts", expression).delay == delay


@pytest.mark.parametrize(
    "expression", ["other", "ts + INTERVAL '5' SECOND", "ts - INTERVAL '5.' SECOND", "ts - 5"]
)
def test_unsupported_watermark(expression: str) -> None:
    with pytest.raises(SqlParseError, match="Unsupported watermark"):
        Watermark("ts", expression).delay  # noqa: B018


@pytest.mark.parametrize(
    ("flink", "spark"),
    [
        ("VARCHAR /* length */ (10)", "STRING"),
        ("double precision", "DOUBLE"),
        ("TIMESTAMP_LTZ(3) WITHOUT LOCAL TIME ZONE", "TIMESTAMP"),
        ("VARBINARY(8)", "BINARY"),
        ("CHAR(x)", "CHAR(x)"),
        ("ARRAY<INT>", "ARRAY<INT>"),
    ],
)
def test_more_flink_types(flink: str, spark: str) -> None:
    assert spark_type(flink) == spark


def test_a_parameterised_type_is_one_column_and_a_comparison_is_no_bracket() -> None:
    definition = parse_connector_table(
        "CREATE TABLE t (id BIGINT, hs MAP<STRING, ARRAY<ROW<a INT, b STRING>>> "
        "METADATA FROM 'headers', small AS id < 3, big AS id > 2) "
        "WITH ('connector' = 'kafka')"
    )
    assert definition is not None
    assert [(c.name, c.type or c.expression) for c in definition.columns] == [
        ("id", "BIGINT"),
        ("hs", "MAP<STRING, ARRAY<ROW<a INT, b STRING>>>"),
        ("small", "id < 3"),
        ("big", "id > 2"),
    ]


def test_not_null_inside_a_nested_type_is_the_types() -> None:
    definition = parse_connector_table(
        "CREATE TABLE t (a ARRAY<INT NOT NULL> NOT NULL, r ROW<x INT NOT NULL, y STRING> "
        "COMMENT 'c', m MAP<STRING, ARRAY<BIGINT NOT NULL>>, d DECIMAL(10, 2) NOT NULL) "
        "WITH ('connector' = 'kafka')"
    )
    assert definition is not None
    assert [(c.name, c.type, c.not_null) for c in definition.columns] == [
        ("a", "ARRAY<INT NOT NULL>", True),
        ("r", "ROW<x INT NOT NULL, y STRING>", False),
        ("m", "MAP<STRING, ARRAY<BIGINT NOT NULL>>", False),
        ("d", "DECIMAL(10, 2)", True),
    ]


def test_a_like_merge_checks_what_it_makes() -> None:
    base = parse_connector_table(
        "CREATE TABLE s (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
        "WITH ('connector' = 'datagen')"
    )
    assert base is not None
    found = parse_connector_create(
        "CREATE TABLE t (x INT) PARTITIONED BY (nope) WITH ('connector' = 'blackhole') "
        "LIKE s (EXCLUDING OPTIONS)"
    )
    assert found is not None and found[1] is not None
    with pytest.raises(SqlParseError, match="partition column nope is not a physical column"):
        found[1].merged(base, found[0])
    found = parse_connector_create(
        "CREATE TABLE t (x INT) PARTITIONED BY (id) WITH ('connector' = 'blackhole') "
        "LIKE s (EXCLUDING OPTIONS EXCLUDING WATERMARKS)"
    )
    assert found is not None and found[1] is not None
    merged = found[1].merged(base, found[0])
    assert [c.name for c in merged.columns] == ["id", "ts", "x"]
    assert merged.partition_keys == ("id",) and merged.watermark is None
    assert dict(merged.options) == {"connector": "blackhole"}
