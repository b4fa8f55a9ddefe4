"""Run a compiled plan: one streaming frame per node, stateful nodes on ``transformWithState``.

Each node's frame is its output columns plus the changelog's kind column
(:data:`~sparkgate.service.streaming.changelog.KIND_COLUMN`). Scans read the
table the node names (so a plan runs against the catalog as it is when it
runs: a dropped table is an error naming the node), a values node its rows as
a stream of one row per micro-batch, calcs and watermarks stay
Spark SQL, and the stateful nodes run the operators of
:mod:`~sparkgate.service.plan.operators` with each state's TTL from the plan.
Before anything starts, every node's output is checked against the plan's
``outputType``: an edited or stale plan fails here, naming the node.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from sparkgate.api.errors import ExecutionError, PlanError
from sparkgate.service.plan import document as d
from sparkgate.service.plan import operators as ops
from sparkgate.service.plan.document import Node, Plan
from sparkgate.service.streaming.changelog import KIND_COLUMN
from sparkgate.sql.quoting import quote_identifier as _quote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sparkgate.service.streaming.resolve import Resolution

__all__ = ["Frames", "build_frames", "updating_nodes"]

log = logging.getLogger(__name__)


def _ddl(node: Node) -> str:
    columns = [f"{_quote(n)} {t}" for n, t in node.output_type]
    return ", ".join([*columns, f"{_quote(KIND_COLUMN)} TINYINT"])


def updating_nodes(plan: Plan) -> set[int]:
    """The nodes whose output has updates or deletes (not only inserts)."""
    updating: set[int] = set()
    for node in _ordered(plan):
        inputs = plan.inputs(node.id)
        from_inputs = any(i in updating for i in inputs)
        if node.type == d.DEDUPLICATE:
            if from_inputs:
                raise PlanError(
                    f"node {node.id}: a deduplication reads insert-only rows, but its input "
                    "has updates"
                )
            changes = bool(node.fields.get("keepLastRow"))
        elif node.type in (d.GROUP_AGGREGATE, d.RANK):
            changes = True
        elif node.type == d.JOIN:
            spec = node.fields.get("joinSpec", {})
            changes = from_inputs or spec.get("joinType") != "INNER"
        else:
            changes = from_inputs
        if changes:
            updating.add(node.id)
    return updating


def _ordered(plan: Plan) -> list[Node]:
    """Nodes with every input before the nodes reading it."""
    done: set[int] = set()
    order: list[Node] = []
    visiting: set[int] = set()

    def visit(node: Node) -> None:
        if node.id in done:
            return
        if node.id in visiting:
            raise PlanError(f"The plan's edges make a cycle through node {node.id}")
        visiting.add(node.id)
        for source in plan.inputs(node.id):
            visit(plan.node(source))
        visiting.discard(node.id)
        done.add(node.id)
        order.append(node)

    for node in sorted(plan.nodes, key=lambda n: n.id):
        visit(node)
    return order


@dataclass
class Frames:
    """The frames of a plan's nodes, and what its scans read."""

    frames: dict[int, DataFrame] = field(default_factory=dict)
    resolutions: list[Resolution] = field(default_factory=list)
    updating: set[int] = field(default_factory=set)


def _states(node: Node) -> list[dict[str, Any]]:
    assert node.state is not None
    return [
        {
            "name": f"n{node.id}_{spec.name}",
            "ttlMs": spec.ttl_ms,
            "ttlUpdate": spec.ttl_update,
            "ttlTime": spec.ttl_time,
        }
        for spec in node.state
    ]


def _field(node: Node, name: str) -> Any:
    if name not in node.fields:
        raise PlanError(f"node {node.id} ({node.type}) has no '{name}'")
    return node.fields[name]


def _index(node: Node, value: Any, width: int, what: str) -> int:
    if not isinstance(value, int) or not 0 <= value < width:
        raise PlanError(f"node {node.id}: {what} {value!r} is not a column of its input")
    return value


def _rowtime(node: Node) -> int | None:
    """The input's event-time column, needed by event-time TTL."""
    wanted = any(s.ttl_time == "EVENT_TIME" and s.ttl_ms > 0 for s in node.state or ())
    index = node.fields.get("inputRowtime")
    if not wanted:
        return index if isinstance(index, int) else None
    if not isinstance(index, int):
        raise PlanError(
            f"node {node.id}: a state has ttlTime EVENT_TIME, but its input has no event-time "
            "attribute (a column with a WATERMARK)"
        )
    return index


def _mode(node: Node) -> str:
    from sparkgate.service.plan.operators import time_mode

    times = {s.ttl_time for s in node.state or () if s.ttl_ms > 0}
    if len(times) > 1:
        raise PlanError(
            f"node {node.id}: its states mix PROCESSING_TIME and EVENT_TIME TTLs; "
            "one operator keeps one kind of time"
        )
    return time_mode(_states(node))


def _type_form(text: str) -> str:
    """A Spark type's written form made comparable: ``DECIMAL(10,2)``, ``STRUCT<A:INT>``
    read the same from ``DataType.simpleString()`` and from the plan's SQL names."""
    form = re.sub(r"[\s`:]", "", text).upper()
    for alias, name in _ALIASES.items():
        form = form.replace(alias, name)
    return form


_ALIASES = {"INTEGER": "INT", "LONG": "BIGINT", "SHORT": "SMALLINT"}


def _check(node: Node, frame: DataFrame) -> DataFrame:
    """The frame has the node's outputType (names by position, types exactly)."""
    fields = [f for f in frame.schema.fields if f.name != KIND_COLUMN]
    if len(fields) != len(node.output_type):
        raise PlanError(
            f"node {node.id} ({node.description or node.type}): it gives {len(fields)} "
            f"columns, its outputType has {len(node.output_type)}"
        )
    for (name, kind), field_ in zip(node.output_type, fields, strict=True):
        mine = field_.dataType.simpleString()
        if _type_form(mine) != _type_form(kind):
            raise PlanError(
                f"node {node.id} ({node.type}): column '{name}' is {mine.upper()}, but the "
                f"plan's outputType says {kind}"
            )
    names = [n for n, _ in node.output_type]
    return frame.toDF(*names, KIND_COLUMN)


Scan = Callable[[Node, tuple[str, ...]], tuple["DataFrame", "Resolution"]]
Values = Callable[[Node, str], tuple["DataFrame", "Resolution"]]


def build_frames(plan: Plan, scan: Scan, values: Values) -> Frames:
    """A frame per node (but sinks). ``scan`` reads a scan node's table,
    ``values`` a values node's rows (``VALUES (...), ... AS t(...)``)."""
    out = Frames(updating=updating_nodes(plan))
    for node in _ordered(plan):
        inputs = [out.frames[i] for i in plan.inputs(node.id) if i in out.frames]
        try:
            frame = _build(node, inputs, plan, out, scan, values)
        except (PlanError, ExecutionError):
            raise
        except Exception as exc:
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise PlanError(f"node {node.id} ({node.type}) cannot run: {message}") from exc
        if frame is not None:
            out.frames[node.id] = _check(node, frame)
    return out


def _build(
    node: Node,
    inputs: list[DataFrame],
    plan: Plan,
    out: Frames,
    scan: Scan,
    values: Values,
) -> DataFrame | None:
    if node.type in (d.SCAN, d.VALUES):
        if node.type == d.SCAN:
            frame, resolution = scan(node, node.table_name())
        else:
            frame, resolution = values(node, _values(node))
        out.resolutions.append(resolution)
        return frame.withColumn(KIND_COLUMN, F.lit(ops.INSERT).cast("tinyint"))
    if node.type == d.SINK:
        return None
    source = inputs[0]
    width = len(source.columns) - 1
    if node.type == d.WATERMARK:
        index = _index(node, _field(node, "rowtimeFieldIndex"), width, "rowtimeFieldIndex")
        delay = int(_field(node, "delayMs"))
        return source.withWatermark(source.columns[index], f"{delay} milliseconds")
    if node.type == d.CALC:
        condition = node.fields.get("condition")
        if condition:
            source = source.where(str(condition))
        projection = _field(node, "projection")
        exprs = [f"{p['expr']} AS {_quote(p['name'])}" for p in projection]
        return source.selectExpr(*exprs, _quote(KIND_COLUMN))
    if node.type == d.UNION:
        names = [*(n for n, _ in node.output_type), KIND_COLUMN]
        return functools.reduce(lambda a, b: a.unionByName(b), (f.toDF(*names) for f in inputs))
    states = _states(node)
    schema = _ddl(node)

    def run(processor: Any, grouped: Any) -> DataFrame:
        processor.names = [*(n for n, _ in node.output_type), KIND_COLUMN]
        mode = _mode(node)
        return grouped.transformWithState(processor, schema, "Append", mode)  # type: ignore[no-any-return]

    if node.type == d.DEDUPLICATE:
        keys = [_index(node, k, width, "uniqueKeys") for k in _field(node, "uniqueKeys")]
        processor: ops.Operator = ops.DeduplicateOperator(
            states, _rowtime(node), bool(node.fields.get("keepLastRow"))
        )
        grouped = source.groupBy(*(_quote(source.columns[k]) for k in keys))
        return run(processor, grouped)
    if node.type == d.GROUP_AGGREGATE:
        keys = [_index(node, k, width, "grouping") for k in _field(node, "grouping")]
        calls = []
        for call in _field(node, "aggCalls"):
            args = [_index(node, a, width, "argList") for a in call.get("argList", [])]
            scale = None
            kind = str(call.get("type", ""))
            if kind.startswith("DECIMAL(") and "," in kind:
                scale = int(kind.split(",")[1].rstrip(")").strip())
            calls.append({**call, "argList": args, "scale": scale})
        processor = ops.AggregateOperator(states, _rowtime(node), keys, calls)
        if keys:
            grouped = source.groupBy(*(_quote(source.columns[k]) for k in keys))
        else:  # a global aggregate: one key for all rows
            source = source.withColumn("__sparkgate_all", F.lit(0))
            grouped = source.groupBy("__sparkgate_all")
        return run(processor, grouped)
    if node.type == d.RANK:
        keys = [_index(node, k, width, "partitionKeys") for k in _field(node, "partitionKeys")]
        order = _field(node, "orderBy")
        for spec in order:
            _index(node, spec.get("index"), width, "orderBy index")
        limit = int(_field(node, "rankRange").get("end", 0))
        if limit < 1:
            raise PlanError(f"node {node.id}: rankRange.end must be at least 1")
        append_only = plan.inputs(node.id)[0] not in out.updating
        processor = ops.RankOperator(states, _rowtime(node), order, limit, append_only)
        grouped = source.groupBy(*(_quote(source.columns[k]) for k in keys))
        return run(processor, grouped)
    if node.type == d.JOIN:
        return _join(node, inputs, states, run)
    raise PlanError(f"node {node.id}: unknown node type {node.type}")


def _values(node: Node) -> str:
    """A values node's rows as Spark SQL, named as its outputType."""
    tuples = _field(node, "tuples")
    width = len(node.output_type)
    if (
        not isinstance(tuples, list)
        or not tuples
        or not all(isinstance(row, list) and len(row) == width for row in tuples)
        or not all(isinstance(cell, str) and cell.strip() for row in tuples for cell in row)
    ):
        raise PlanError(
            f"node {node.id}: tuples must be a non-empty list of rows of {width} Spark SQL "
            "literal(s) each"
        )
    rows = ", ".join("(" + ", ".join(row) + ")" for row in tuples)
    names = ", ".join(_quote(n) for n, _ in node.output_type)
    return f"VALUES {rows} AS t({names})"


def _join(
    node: Node,
    inputs: list[DataFrame],
    states: list[dict[str, Any]],
    run: Callable[[Any, Any], DataFrame],
) -> DataFrame:
    left, right = inputs
    spec = _field(node, "joinSpec")
    join_type = str(spec.get("joinType", ""))
    if join_type not in ("INNER", "LEFT", "RIGHT", "FULL"):
        raise PlanError(f"node {node.id}: joinType {join_type!r} is not INNER, LEFT, RIGHT or FULL")
    left_cols = left.columns[:-1]
    right_cols = right.columns[:-1]
    left_keys = [_index(node, k, len(left_cols), "leftKeys") for k in spec.get("leftKeys", [])]
    right_keys = [_index(node, k, len(right_cols), "rightKeys") for k in spec.get("rightKeys", [])]
    if not left_keys or len(left_keys) != len(right_keys):
        raise PlanError(f"node {node.id}: leftKeys and rightKeys must pair up the join's keys")
    condition = spec.get("nonEquiCondition")
    if condition and join_type != "INNER":
        raise PlanError(
            f"node {node.id}: an outer join's condition must be equalities between its inputs"
        )
    names = [n for n, _ in node.output_type]
    lnames, rnames = names[: len(left_cols)], names[len(left_cols) :]
    left_types = dict(left.dtypes)
    key_types = [left_types[left_cols[k]] for k in left_keys]

    def side(frame: DataFrame, number: int, own: list[str], keys: list[int]) -> DataFrame:
        other_frame = right if number == 0 else left
        other = rnames if number == 0 else lnames
        other_cols = other_frame.columns[:-1]
        other_types = dict(other_frame.dtypes)
        columns = [F.lit(number).alias("__sparkgate_side")]
        columns += [F.col(_quote(c)).alias(n) for c, n in zip(frame.columns[:-1], own, strict=True)]
        columns += [
            F.lit(None).cast(other_types[c]).alias(n)
            for c, n in zip(other_cols, other, strict=True)
        ]
        columns += [
            F.col(_quote(frame.columns[k])).cast(t).alias(f"__sparkgate_k{i}")
            for i, (k, t) in enumerate(zip(keys, key_types, strict=True))
        ]
        columns.append(F.col(KIND_COLUMN))
        return frame.select(*columns)

    both = side(left, 0, lnames, left_keys).unionByName(side(right, 1, rnames, right_keys))
    width = len(lnames) + len(rnames)
    left_rowtime = node.fields.get("inputRowtime")
    rowtime = 1 + left_rowtime if isinstance(left_rowtime, int) else None
    if any(s["ttlTime"] == "EVENT_TIME" and s["ttlMs"] > 0 for s in states) and rowtime is None:
        raise PlanError(
            f"node {node.id}: a state has ttlTime EVENT_TIME, but the join's left input has no "
            "event-time attribute"
        )
    processor = ops.JoinOperator(
        states,
        rowtime,
        join_type,
        0,
        list(range(1, 1 + len(lnames))),
        list(range(1 + len(lnames), 1 + width)),
    )
    grouped = both.groupBy(*(f"__sparkgate_k{i}" for i in range(len(left_keys))))
    joined = run(processor, grouped)
    if condition:
        joined = joined.where(str(condition))
    return joined
