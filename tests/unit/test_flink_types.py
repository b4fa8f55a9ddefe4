"""Flink's timestamp precisions after AS, in Spark's spelling; nothing else touched."""

from __future__ import annotations

import pytest

from sparkgate.sql.flink_types import spark_type_spellings


@pytest.mark.parametrize(
    ("flink", "spark"),
    [
        ("SELECT CAST(s AS TIMESTAMP(3)) AS t", "SELECT CAST(s AS TIMESTAMP) AS t"),
        ("SELECT CAST(s AS timestamp(0))", "SELECT CAST(s AS TIMESTAMP)"),
        ("SELECT CAST(s AS TIMESTAMP(9))", "SELECT CAST(s AS TIMESTAMP)"),
        ("SELECT CAST(s AS TIMESTAMP_LTZ(3))", "SELECT CAST(s AS TIMESTAMP_LTZ)"),
        (
            "SELECT CAST(s AS TIMESTAMP(3) WITH LOCAL TIME ZONE), 1",
            "SELECT CAST(s AS TIMESTAMP_LTZ), 1",
        ),
        ("SELECT CAST(s AS TIMESTAMP(6) WITHOUT TIME ZONE)", "SELECT CAST(s AS TIMESTAMP)"),
        ("SELECT TRY_CAST(s AS TIMESTAMP(3)) FROM t", "SELECT TRY_CAST(s AS TIMESTAMP) FROM t"),
    ],
)
def test_flinks_precisions_become_sparks_type(flink: str, spark: str) -> None:
    assert spark_type_spellings(flink) == spark


@pytest.mark.parametrize(
    "untouched",
    [
        "SELECT 'AS TIMESTAMP(3)' AS s",  # a string
        "SELECT timestamp(3)",  # Spark's timestamp() function
        "SELECT CAST(s AS TIMESTAMP)",
        "SELECT CAST(s AS TIMESTAMP(12))",  # Spark's own error says what is wrong
        "SELECT x AS `TIMESTAMP`",
        "SELECT CAST(s AS /* c */ TIMESTAMP_NTZ)",
    ],
)
def test_anything_else_is_left_as_written(untouched: str) -> None:
    assert spark_type_spellings(untouched) == untouched
