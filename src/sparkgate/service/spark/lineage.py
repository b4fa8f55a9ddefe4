"""The precision Flink gives a query's time columns, traced through Spark's plan.

Spark has one timestamp precision (microseconds); Flink types a literal by the
digits it is written with (``TIMESTAMP '2001-01-13 20:11:11.123'`` is
``TIMESTAMP(3)``, ``TIME '20:12:11'`` is ``TIME(0)``), a ``VALUES`` column by
the widest of its rows (when Spark has evaluated the list, by the digits its
values need: a written trailing zero is not seen), and ``TO_TIMESTAMP_LTZ`` as
``TIMESTAMP_LTZ(3)``. A result column keeps that precision through projections,
aliases, views and unions, and clients print its values with that many digits.

:func:`declared_precisions` follows each asked-for output column of an analyzed
plan down to the expressions that make it, over py4j (only the columns' own
lineage is read, a few calls per node). A column made by anything else (a table's
column, a cast, a function) has no precision of its own here: Spark's is used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from sparkgate.service.spark.plans import output_ids, plan_children
from sparkgate.sql.flink_spellings import PRECISION_MARK

__all__ = ["declared_precisions"]

_SPARK_PRECISION = 6
_DEPTH = 64
# A VALUES list's rows read for their digits at most (two py4j calls a row).
_DATA_ROWS = 200
# The quoted text of a datetime literal, its fractional digits in group 1.
_LITERAL = re.compile(r"'[^']*?(?:\.(\d*))?\s*'\s*$")
# A cast as a statement writes it: CAST(...), TRY_CAST(...), x::type.
_WRITTEN_CAST = re.compile(r"^\s*(?:TRY_)?CAST\s*\(|::", re.IGNORECASE)
_TIME_TYPES = ("TimestampType", "TimestampNTZType", "TimeType")
# Spark's functions for Flink's TO_TIMESTAMP_LTZ(n, 0|3): Flink's TIMESTAMP_LTZ(3).
_MILLISECOND_FUNCTIONS = {"SecondsToTimestamp": 3, "MillisToTimestamp": 3}
# Plan nodes that make their output's attributes: the rest pass a child's on.
_PROJECTIONS = ("Project", "Aggregate")
# A VALUES list Spark keeps as expressions (one it cannot evaluate at analysis).
_INLINE_TABLE = "ResolvedInlineTable"


def declared_precisions(analyzed: Any, positions: Iterable[int]) -> dict[int, int]:
    """The precision Flink gives each output column at ``positions`` of the
    ``analyzed`` plan (a JVM ``LogicalPlan``), for the columns that have one
    below Spark's six digits."""
    output = analyzed.output()
    found = {}
    for position in positions:
        precision = _attribute(analyzed, output.apply(position).exprId().id(), 0)
        if precision is not None and precision < _SPARK_PRECISION:
            found[position] = precision
    return found


def _attribute(plan: Any, expr_id: int, depth: int) -> int | None:
    """The precision of the attribute ``expr_id`` that ``plan`` outputs."""
    if depth > _DEPTH:
        return None
    kind = str(plan.getClass().getSimpleName())
    if kind in _PROJECTIONS:
        items = plan.projectList() if kind == "Project" else plan.aggregateExpressions()
        for i in range(items.size()):
            item = items.apply(i)
            if item.exprId().id() != expr_id:
                continue
            if str(item.getClass().getSimpleName()) == "Alias":
                return _expression(item.child(), plan.child(), depth + 1)
            return _attribute(plan.child(), expr_id, depth + 1)
        return None
    if kind == _INLINE_TABLE:
        ids = output_ids(plan)
        if expr_id not in ids:
            return None
        at = ids.index(expr_id)
        rows = plan.rows()
        precisions = [
            _expression(rows.apply(r).apply(at), None, depth + 1) for r in range(rows.size())
        ]
        return _widest(precisions)
    if kind == "LocalRelation":  # a VALUES list Spark has already evaluated
        ids = output_ids(plan)
        return _data_digits(plan, ids.index(expr_id)) if expr_id in ids else None
    children = plan_children(plan)
    if kind == "Union":
        ids = output_ids(plan)
        if expr_id not in ids:
            return None
        at = ids.index(expr_id)
        return _widest([_attribute(c, output_ids(c)[at], depth + 1) for c in children])
    for child in children:  # a node passing its child's column on
        if expr_id in output_ids(child):
            return _attribute(child, expr_id, depth + 1)
    return None


def _data_digits(relation: Any, at: int) -> int | None:
    """The fractional digits the values of column ``at`` of a ``LocalRelation``
    need: its literals' digits as far as the values tell (a written trailing zero
    is not seen)."""
    field = relation.output().apply(at)
    type_name = str(field.dataType().getClass().getSimpleName()).rstrip("$")
    if type_name not in _TIME_TYPES:
        return None
    data = relation.data()
    if data.size() > _DATA_ROWS:
        return None
    # Spark keeps a timestamp as microseconds, a time of day as nanoseconds.
    per_second = 1_000_000_000 if type_name == "TimeType" else 1_000_000
    digits = 0
    for r in range(data.size()):
        row = data.apply(r)
        if row.isNullAt(at):
            continue
        fraction = int(row.getLong(at)) % per_second
        if fraction:
            written = f"{fraction:0{len(str(per_second)) - 1}d}".rstrip("0")
            digits = max(digits, len(written))
    return min(digits, _SPARK_PRECISION)


def _widest(precisions: list[int | None]) -> int | None:
    """Flink's type of several rows or branches: the widest; unknown if one is."""
    if not precisions or any(p is None for p in precisions):
        return None
    return max(p for p in precisions if p is not None)


def _expression(expr: Any, child: Any | None, depth: int) -> int | None:
    """The precision of what ``expr`` computes, its attributes read from ``child``."""
    if depth > _DEPTH:
        return None
    kind = str(expr.getClass().getSimpleName())
    if kind in _MILLISECOND_FUNCTIONS:
        return _MILLISECOND_FUNCTIONS[kind]
    if str(expr.dataType().getClass().getSimpleName()).rstrip("$") not in _TIME_TYPES:
        return None
    if kind == "Literal":
        text = _text(expr)
        match = _LITERAL.search(text) if text is not None else None
        if match is None:
            return None
        return min(len(match.group(1) or ""), _SPARK_PRECISION)
    if kind == "Cast":
        text = _text(expr)
        if text is None or not _WRITTEN_CAST.search(text):
            # Spark's own: a coercion, a view's columns (its origin is where it is used).
            return _expression(expr.child(), child, depth + 1)
        mark = PRECISION_MARK.search(text)  # CAST(x AS TIMESTAMP(3)), as the gateway wrote it
        return int(mark.group(1)) if mark else None
    if kind == "AttributeReference" and child is not None:
        return _attribute(child, expr.exprId().id(), depth + 1)
    return None


def _text(expr: Any) -> str | None:
    """The statement text the parser made ``expr`` from; None for one Spark made."""
    origin = expr.origin()
    start, stop, text = origin.startIndex(), origin.stopIndex(), origin.sqlText()
    if not (start.isDefined() and stop.isDefined() and text.isDefined()):
        return None
    return str(text.get())[int(start.get()) : int(stop.get()) + 1]
