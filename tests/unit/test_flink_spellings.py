"""Flink's timestamp precisions after AS and its default_catalog.default_database
prefix, in Spark's spelling; nothing else touched. A precision below six stays
as a comment, which the result's schema reads back."""

from __future__ import annotations

import pytest

from sparkgate.sql.flink_spellings import flink_precisions, spark_spellings


@pytest.mark.parametrize(
    ("flink", "spark"),
    [
        (
            "SELECT CAST(s AS TIMESTAMP(3)) AS t",
            "SELECT CAST(s AS TIMESTAMP /* precision 3 */) AS t",
        ),
        ("SELECT CAST(s AS timestamp(0))", "SELECT CAST(s AS TIMESTAMP /* precision 0 */)"),
        ("SELECT CAST(s AS TIMESTAMP(9))", "SELECT CAST(s AS TIMESTAMP)"),
        (
            "SELECT CAST(s AS TIMESTAMP_LTZ(3))",
            "SELECT CAST(s AS TIMESTAMP_LTZ /* precision 3 */)",
        ),
        (
            "SELECT CAST(s AS TIMESTAMP(3) WITH LOCAL TIME ZONE), 1",
            "SELECT CAST(s AS TIMESTAMP_LTZ /* precision 3 */), 1",
        ),
        ("SELECT CAST(s AS TIMESTAMP(6) WITHOUT TIME ZONE)", "SELECT CAST(s AS TIMESTAMP)"),
        (
            "SELECT TRY_CAST(s AS TIMESTAMP(3)) FROM t",
            "SELECT TRY_CAST(s AS TIMESTAMP /* precision 3 */) FROM t",
        ),
        (
            "SELECT * FROM default_catalog.default_database.t",
            "SELECT * FROM spark_catalog.`default`.t",
        ),
        (
            "SHOW TABLES FROM default_catalog.default_database",
            "SHOW TABLES FROM spark_catalog.`default`",
        ),
        (
            "CREATE TABLE `default_catalog`.`default_database`.`t` (a INT) WITH ('k' = 'v')",
            "CREATE TABLE spark_catalog.`default`.`t` (a INT) WITH ('k' = 'v')",
        ),
        (
            "SELECT TO_TIMESTAMP_LTZ(1700000000123, 3) AS t",
            "SELECT timestamp_millis(1700000000123) AS t",
        ),
        ("SELECT to_timestamp_ltz(s, 0) FROM t", "SELECT timestamp_seconds(s) FROM t"),
        ("SELECT TO_TIMESTAMP_LTZ(-5)", "SELECT timestamp_millis(-5)"),  # default: 3
        (
            "SELECT TO_TIMESTAMP_LTZ(abs(x) * 1000, 3), TO_TIMESTAMP_LTZ(y, 0)",
            "SELECT timestamp_millis(abs(x) * 1000), timestamp_seconds(y)",
        ),
        (
            "SELECT TO_TIMESTAMP_LTZ(CAST(s AS TIMESTAMP(3)), 3)",
            "SELECT timestamp_millis(CAST(s AS TIMESTAMP /* precision 3 */))",
        ),
    ],
)
def test_flinks_precisions_become_sparks_type(flink: str, spark: str) -> None:
    assert spark_spellings(flink) == spark


@pytest.mark.parametrize(
    "untouched",
    [
        "SELECT 'AS TIMESTAMP(3)' AS s",  # a string
        "SELECT timestamp(3)",  # Spark's timestamp() function
        "SELECT CAST(s AS TIMESTAMP)",
        "SELECT CAST(s AS TIMESTAMP(12))",  # Spark's own error says what is wrong
        "SELECT x AS `TIMESTAMP`",
        "SELECT CAST(s AS /* c */ TIMESTAMP_NTZ)",
        "SELECT x.default_catalog.default_database.y",
        "SELECT 'default_catalog.default_database.t'",
        "USE default_database",  # a database of that name may well exist
        "SELECT TO_TIMESTAMP_LTZ('2024-01-01 10:00:00')",  # a string: Spark's, as Flink's
        "SELECT TO_TIMESTAMP_LTZ(s)",  # a column of unknown type: Spark's
        "SELECT TO_TIMESTAMP_LTZ(1, 6)",  # Flink takes 0 or 3 only
        "SELECT my.TO_TIMESTAMP_LTZ(1, 3)",  # somebody's own function
    ],
)
def test_anything_else_is_left_as_written(untouched: str) -> None:
    assert spark_spellings(untouched) == untouched


def test_a_marked_precision_prints_as_flink_wrote_it() -> None:
    flink = "SELECT CAST(a AS TIMESTAMP(3)), CAST(b AS TIMESTAMP_LTZ(0)), CAST(c AS TIMESTAMP)"
    assert flink_precisions(spark_spellings(flink)) == flink
