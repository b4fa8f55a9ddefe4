"""count(DISTINCT ...) written as the size of a set, for Spark's streaming aggregation."""

from __future__ import annotations

import pytest

from sparkgate.sql.distinct_counts import distinct_counts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "SELECT k, count(DISTINCT v) AS n FROM t GROUP BY k",
            "SELECT k, CAST(size(collect_set(v)) AS BIGINT) AS n FROM t GROUP BY k",
        ),
        (
            "select COUNT( distinct upper(v) ) from t",
            "select CAST(size(collect_set(upper(v))) AS BIGINT) from t",
        ),
        (
            "SELECT count(DISTINCT a, b) FROM t",
            "SELECT CAST(size(collect_set(CASE WHEN (a) IS NOT NULL AND (b) IS NOT NULL "
            "THEN struct(a, b) END)) AS BIGINT) FROM t",
        ),
        (
            "SELECT count(DISTINCT a) + count(DISTINCT b) FROM t",
            "SELECT CAST(size(collect_set(a)) AS BIGINT) + "
            "CAST(size(collect_set(b)) AS BIGINT) FROM t",
        ),
        # Left to Spark: not a distinct count, or one Spark's own error should name.
        ("SELECT count(v), count(*) FROM t", None),
        ("SELECT DISTINCT k FROM t", None),
        ("SELECT sum(DISTINCT v) FROM t", None),
        ("SELECT count(DISTINCT v) FILTER (WHERE v > 1) FROM t", None),
        ("SELECT count(DISTINCT v) OVER (PARTITION BY k) FROM t", None),
        ("SELECT 'count(DISTINCT v)' AS s, x.count FROM t x", None),
        ("SELECT k /* count(DISTINCT v) */ FROM t", None),
    ],
)
def test_distinct_counts(text: str, expected: str | None) -> None:
    assert distinct_counts(text) == (text if expected is None else expected)
