"""A view's query expanded as Flink prints it: the parts that need no Spark
(the re-spelling with qualified names); the plan walk runs in the golden views.q."""

from __future__ import annotations

from sparkgate.sql.flink_expression import flink_expression


def test_bare_names_are_qualified_and_qualified_or_called_ones_are_not() -> None:
    columns = {"user": "user", "amount": "amount"}

    def qualify(name: str) -> str | None:
        found = columns.get(name.lower())
        return None if found is None else f"`o`.`{found}`"

    assert flink_expression("sum(AMOUNT) + o.amount - `user` * other", qualify) == (
        "SUM(`o`.`amount`) + `o`.`amount` - `o`.`user` * `other`"
    )
    assert flink_expression("cast(amount as int)", qualify) == "CAST(`o`.`amount` AS INTEGER)"
    assert flink_expression("struct(amount AS user)", qualify) == "STRUCT(`o`.`amount` AS `user`)"
