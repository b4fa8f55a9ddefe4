"""Splitting Spark's SQL of a folded VALUES list into each cell's literal."""

from __future__ import annotations

import pytest

from sparkgate.api.errors import PlanError
from sparkgate.service.plan.compiler import values_rows

CASES = [
    ("VALUES (1, 'a'), (2, 'b') AS t(k, v)", [["1", "'a'"], ["2", "'b'"]]),
    ("VALUES ('it\\'s, (x)', NULL) AS t(a, b)", [["'it\\'s, (x)'", "NULL"]]),
    ("VALUES ('a\\\\', 1) AS t(a, b)", [["'a\\\\'", "1"]]),
    (
        "VALUES (ARRAY(1, 2), MAP('k', 2.5D), NAMED_STRUCT('a', 1)) AS t(a, b, c)",
        [["ARRAY(1, 2)", "MAP('k', 2.5D)", "NAMED_STRUCT('a', 1)"]],
    ),
    (
        "VALUES (TIMESTAMP '2024-01-01 12:00:00.123', 1.50BD, X'0A') AS t(a, b, c)",
        [["TIMESTAMP '2024-01-01 12:00:00.123'", "1.50BD", "X'0A'"]],
    ),
    ("VALUES (1), (2), (3) AS t(k)", [["1"], ["2"], ["3"]]),
]


@pytest.mark.parametrize(("sql", "rows"), CASES)
def test_each_cell_is_its_literal(sql: str, rows: list[list[str]]) -> None:
    assert values_rows(sql) == rows


def test_text_that_is_no_values_list_is_refused() -> None:
    with pytest.raises(PlanError, match="Not a VALUES list"):
        values_rows("SELECT 1")
