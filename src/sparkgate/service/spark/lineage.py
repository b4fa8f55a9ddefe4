"""The precision Flink gives a query's time columns, traced through Spark's plan.

Spark has one timestamp precision (microseconds); Flink types a literal by the
digits it is written with (``TIMESTAMP '2001-01-13 20:11:11.123'`` is
``TIMESTAMP(3)``, ``TIME '20:12:11'`` is ``TIME(0)``), a ``VALUES`` column by
the widest of its rows (when Spark has evaluated the list, by the digits its
values need: a written trailing zero is not seen), and ``TO_TIMESTAMP_LTZ`` as
``TIMESTAMP_LTZ(3)``. A result column keeps that precision through projections,
aliases, views and unions, and clients print its values with that many digits.
A nested value built by ``ARRAY[...]``, ``MAP[...]`` or ``ROW(...)`` (Spark's
``array``, ``map``, ``named_struct``) has the precisions of what builds it: its
shape (:data:`Shape`) says each part's.

:func:`declared_precisions` follows each asked-for output column of an analyzed
plan down to the expressions that make it, over py4j (only the columns' own
lineage is read, a few calls per node). A column made by anything else (a table's
column, a cast, a function) has no precision of its own here: Spark's is used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TypeAlias

from sparkgate.service.spark.plans import output_ids, plan_children
from sparkgate.sql.flink_spellings import PRECISION_MARK

__all__ = ["Shape", "declared_precisions"]

#: A value's Flink precision: an int for a time value, None when unknown (or no
#: time), and for a nested value ``("ARRAY", element)``, ``("MAP", key, value)``
#: or ``("ROW", (field, ...))`` of its parts' shapes.
Shape: TypeAlias = "int | tuple[Any, ...] | None"

_SPARK_PRECISION = 6
_DEPTH = 64
# A VALUES list's values read for their digits at most (about two py4j calls each).
_DATA_VALUES = 400
# The quoted text of a datetime literal, its fractional digits in group 1.
_LITERAL = re.compile(r"'[^']*?(?:\.(\d*))?\s*'\s*$")
# A cast as a statement writes it: CAST(...), TRY_CAST(...), x::type.
_WRITTEN_CAST = re.compile(r"^\s*(?:TRY_)?CAST\s*\(|::", re.IGNORECASE)
_TIME_TYPES = ("TimestampType", "TimestampNTZType", "TimeType")
_NESTED_TYPES = ("ArrayType", "MapType", "StructType")
# Spark's functions for Flink's TO_TIMESTAMP_LTZ(n, 0|3): Flink's TIMESTAMP_LTZ(3).
_MILLISECOND_FUNCTIONS = {"SecondsToTimestamp": 3, "MillisToTimestamp": 3}
# Plan nodes that make their output's attributes: the rest pass a child's on.
_PROJECTIONS = ("Project", "Aggregate")
# A VALUES list Spark keeps as expressions (one it cannot evaluate at analysis).
_INLINE_TABLE = "ResolvedInlineTable"


def declared_precisions(analyzed: Any, positions: Iterable[int]) -> dict[int, Shape]:
    """The precision Flink gives each output column at ``positions`` of the
    ``analyzed`` plan (a JVM ``LogicalPlan``), for the columns that have one
    below Spark's six digits (a nested column: in one of its parts)."""
    output = analyzed.output()
    found = {}
    for position in positions:
        shape = _attribute(analyzed, output.apply(position).exprId().id(), 0)
        if _narrower(shape):
            found[position] = shape
    return found


def _narrower(shape: Shape) -> bool:
    """Whether a value of this shape has a part below Spark's six digits."""
    if isinstance(shape, int):
        return shape < _SPARK_PRECISION
    if isinstance(shape, tuple):
        parts = shape[1] if shape[0] == "ROW" else shape[1:]
        return any(_narrower(part) for part in parts)
    return False


def _attribute(plan: Any, expr_id: int, depth: int) -> Shape:
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


#: A column type as the data reader walks it: ``("TIME", units a second)``,
#: ``("ARRAY", element)``, ``("MAP", key, value)``, ``("ROW", (field, ...))``, or
#: None for a part without a time in it. Read from the JVM type once, so the
#: walk over the values makes only calls for values.
_Layout: TypeAlias = "tuple[Any, ...] | None"


def _layout(data_type: Any) -> _Layout:
    name = _type_name(data_type)
    if name in _TIME_TYPES:
        # Spark keeps a timestamp as microseconds, a time of day as nanoseconds.
        return ("TIME", 1_000_000_000 if name == "TimeType" else 1_000_000)
    if name == "ArrayType":
        element = _layout(data_type.elementType())
        return None if element is None else ("ARRAY", element)
    if name == "MapType":
        key, value = _layout(data_type.keyType()), _layout(data_type.valueType())
        return None if key is None and value is None else ("MAP", key, value)
    if name == "StructType":
        fields = tuple(_layout(field.dataType()) for field in data_type.fields())
        return None if all(f is None for f in fields) else ("ROW", fields)
    return None


def _no_digits(layout: _Layout) -> Shape:
    """The shape of a column of this layout before any value is read."""
    if layout is None:
        return None
    if layout[0] == "TIME":
        return 0
    if layout[0] == "ROW":
        return ("ROW", tuple(_no_digits(f) for f in layout[1]))
    return (layout[0], *(_no_digits(part) for part in layout[1:]))


class _Exhausted(Exception):
    """More values than the reader reads for their digits."""


def _read_digits(values: Any, i: int, layout: _Layout, shape: Shape, budget: list[int]) -> Shape:
    """``shape`` widened by the digits of value ``i`` of ``values`` (a JVM
    ``InternalRow`` or ``ArrayData``: both get values by position)."""
    if layout is None:
        return shape
    budget[0] -= 1
    if budget[0] < 0:
        raise _Exhausted
    if values.isNullAt(i):
        return shape
    kind = layout[0]
    if kind == "TIME":
        per_second = layout[1]
        fraction = int(values.getLong(i)) % per_second
        written = f"{fraction:0{len(str(per_second)) - 1}d}".rstrip("0") if fraction else ""
        assert isinstance(shape, int)
        return max(shape, min(len(written), _SPARK_PRECISION))
    assert isinstance(shape, tuple)
    if kind == "ARRAY":
        array, element = values.getArray(i), shape[1]
        for j in range(int(array.numElements())):
            element = _read_digits(array, j, layout[1], element, budget)
        return ("ARRAY", element)
    if kind == "MAP":
        found = values.getMap(i)
        keys, items = found.keyArray(), found.valueArray()
        key, value = shape[1], shape[2]
        for j in range(int(found.numElements())):
            key = _read_digits(keys, j, layout[1], key, budget)
            value = _read_digits(items, j, layout[2], value, budget)
        return ("MAP", key, value)
    fields = layout[1]
    row = values.getStruct(i, len(fields))
    return (
        "ROW",
        tuple(
            _read_digits(row, j, field, part, budget)
            for j, (field, part) in enumerate(zip(fields, shape[1], strict=True))
        ),
    )


def _data_digits(relation: Any, at: int) -> Shape:
    """The fractional digits the values of column ``at`` of a ``LocalRelation``
    need, in each part of a nested column: its literals' digits as far as the
    values tell (a written trailing zero is not seen); unknown past
    :data:`_DATA_VALUES` values."""
    layout = _layout(relation.output().apply(at).dataType())
    if layout is None:
        return None
    data = relation.data()
    shape = _no_digits(layout)
    budget = [_DATA_VALUES]
    try:
        for r in range(data.size()):
            shape = _read_digits(data.apply(r), at, layout, shape, budget)
    except _Exhausted:
        return None
    return shape


def _widest(shapes: list[Shape]) -> Shape:
    """Flink's type of several rows, branches or elements: the widest; unknown if
    one is (nested ones only when they agree)."""
    if not shapes or any(s is None for s in shapes):
        return None
    if all(isinstance(s, int) for s in shapes):
        return max(s for s in shapes if isinstance(s, int))
    return shapes[0] if all(s == shapes[0] for s in shapes) else None


def _type_name(data_type: Any) -> str:
    return str(data_type.getClass().getSimpleName()).rstrip("$")


def _holds_time(data_type: Any) -> bool:
    """Whether a nested type has a time type in it, at any depth."""
    name = _type_name(data_type)
    if name in _TIME_TYPES:
        return True
    if name == "ArrayType":
        return _holds_time(data_type.elementType())
    if name == "MapType":
        return _holds_time(data_type.keyType()) or _holds_time(data_type.valueType())
    if name == "StructType":
        fields = data_type.fields()
        return any(_holds_time(field.dataType()) for field in fields)
    return False


def _nested(expr: Any, kind: str, child: Any | None, depth: int) -> Shape:
    """The shape of a nested value: what builds it, part by part."""
    if not _holds_time(expr.dataType()):
        return None
    parts = plan_children(expr)  # an expression's, as a plan node's
    if kind == "CreateArray":
        return ("ARRAY", _widest([_expression(p, child, depth + 1) for p in parts]))
    if kind == "CreateMap":
        keys = [_expression(p, child, depth + 1) for p in parts[0::2]]
        values = [_expression(p, child, depth + 1) for p in parts[1::2]]
        return ("MAP", _widest(keys), _widest(values))
    if kind == "CreateNamedStruct":
        return ("ROW", tuple(_expression(p, child, depth + 1) for p in parts[1::2]))
    if kind == "Cast" and _text(expr) is None:  # Spark's coercion of the parts
        return _expression(expr.child(), child, depth + 1)
    if kind == "AttributeReference" and child is not None:
        return _attribute(child, expr.exprId().id(), depth + 1)
    return None


# What takes a part out of a nested value: an element, a map's value, a field.
_EXTRACTORS = ("GetArrayItem", "ElementAt", "GetMapValue", "GetStructField")


def _part(expr: Any, kind: str, child: Any | None, depth: int) -> Shape:
    """The shape of the part ``expr`` takes out of a nested value."""
    whole = _expression(plan_children(expr)[0], child, depth + 1)
    if not isinstance(whole, tuple):
        return None
    if whole[0] == "ARRAY" and kind in ("GetArrayItem", "ElementAt"):
        return whole[1]  # type: ignore[no-any-return]
    if whole[0] == "MAP" and kind in ("GetMapValue", "ElementAt"):
        return whole[2]  # type: ignore[no-any-return]
    if whole[0] == "ROW" and kind == "GetStructField":
        fields = whole[1]
        ordinal = int(expr.ordinal())
        return fields[ordinal] if ordinal < len(fields) else None
    return None


def _expression(expr: Any, child: Any | None, depth: int) -> Shape:
    """The precision of what ``expr`` computes, its attributes read from ``child``."""
    if depth > _DEPTH:
        return None
    kind = str(expr.getClass().getSimpleName())
    if kind in _MILLISECOND_FUNCTIONS:
        return _MILLISECOND_FUNCTIONS[kind]
    type_name = _type_name(expr.dataType())
    if kind in _EXTRACTORS and (type_name in _TIME_TYPES or type_name in _NESTED_TYPES):
        return _part(expr, kind, child, depth)
    if type_name in _NESTED_TYPES:
        return _nested(expr, kind, child, depth)
    if type_name not in _TIME_TYPES:
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
