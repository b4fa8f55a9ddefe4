"""Compile a query's analyzed Spark plan into a :class:`~.document.Plan`.

The walk goes over Spark's analyzed logical plan (the optimizer folds
``current_timestamp()`` into a constant on streams and dissolves the views
that name the tables, so its plan would not describe what runs). Each Spark
node becomes one plan node, or none when it only renames (``SubqueryAlias``,
a pass-through ``Project``):

* a connector table or a Spark table read as a stream: a table-source scan;
* a ``VALUES`` list (read as a stream of one row per micro-batch): a values
  node holding each row's literals in Spark SQL;
* ``Project`` / ``Filter``: a calc of Spark SQL expressions over the input's
  columns, which every node names uniquely (as Flink does: ``id``, ``id0``);
* ``Filter(rn = 1 | rn <= N)`` over ``Window(ROW_NUMBER())``: a deduplicate
  (ordered by a time attribute, N = 1) or a rank (top-N);
* ``Aggregate`` / ``Distinct``: a group aggregate, with calcs before it
  (grouping keys and arguments that are expressions) and after it;
* ``Join`` with an equality between its inputs: a regular join;
* ``EventTimeWatermark``: a watermark assigner; ``Union``: a union.

Anything else is refused with the node's name: it has no TTL-aware operator.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sparkgate.api.errors import PlanError
from sparkgate.service.plan import document as d
from sparkgate.service.plan.document import Edge, Node, StateSpec
from sparkgate.service.spark.types import WATERMARK_DELAY_KEY
from sparkgate.sql.quoting import quote_identifier as _quote

__all__ = ["Column", "PlanBuilder", "compile_query", "values_rows"]

_STREAM_LEAVES = ("StreamingRelationV2", "StreamingRelation", "StreamingDataSourceV2Relation")
_PROCTIME_FUNCTIONS = ("CurrentTimestamp", "Now", "LocalTimestamp", "CurrentTimestampLike")
_AGGREGATES = {"Count": "COUNT", "Sum": "SUM", "Min": "MIN", "Max": "MAX", "Average": "AVG"}
_JOIN_TYPES = {"Inner": "INNER", "LeftOuter": "LEFT", "RightOuter": "RIGHT", "FullOuter": "FULL"}


def _seq(scala: Any) -> list[Any]:
    return [scala.apply(i) for i in range(scala.size())]


def _kind(node: Any) -> str:
    return str(node.getClass().getSimpleName())


def _attr_id(expr: Any) -> int | None:
    """The expression id of an attribute reference, None for any other expression."""
    if _kind(expr).endswith("AttributeReference"):
        return int(expr.exprId().id())
    return None


@dataclass
class Column:
    """A column of a node's output: its unique name, Spark type, the expression
    id Spark gave it, and whether it is a time attribute."""

    name: str
    type: str
    expr_id: int
    time: str | None = None  # "proctime" | "rowtime"


@dataclass
class Built:
    node_id: int
    columns: list[Column]
    alias: str | None = None

    def names(self) -> list[str]:
        return [c.name for c in self.columns]


def _unique(names: Iterable[str]) -> list[str]:
    """Flink's way: a repeated name gets the first free numeric suffix."""
    seen: set[str] = set()
    out = []
    for name in names:
        candidate, n = name, 0
        while candidate.lower() in seen:
            candidate = f"{name}{n}"
            n += 1
        seen.add(candidate.lower())
        out.append(candidate)
    return out


@dataclass
class PlanBuilder:
    """Collects nodes and edges, numbering nodes as they are added."""

    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)

    def add(
        self,
        kind: str,
        description: str,
        columns: Sequence[Column],
        inputs: Sequence[int] = (),
        state: tuple[StateSpec, ...] | None = None,
        **fields: Any,
    ) -> int:
        node_id = len(self.nodes) + 1
        self.nodes.append(
            Node(
                id=node_id,
                type=kind,
                description=description,
                output_type=tuple((c.name, c.type) for c in columns),
                inputs=len(inputs),
                state=state,
                fields=fields,
            )
        )
        self.edges.extend(Edge(source, node_id, i) for i, source in enumerate(inputs))
        return node_id


def _longest_first(item: tuple[str, str]) -> int:
    return -len(item[0])


class _Renderer:
    """Spark SQL text of an expression over its input's unique column names."""

    def __init__(self, inputs: Sequence[Column]) -> None:
        self._by_id = {c.expr_id: c.name for c in inputs}

    def render(self, expr: Any, extra: Mapping[str, str] | None = None) -> str:
        text = str(expr.sql())
        # Whole sub-expressions first (an aggregate call, a grouping expression).
        for sql, whole in sorted((extra or {}).items(), key=_longest_first):
            text = text.replace(sql, _quote(whole))
        replacements: dict[str, str] = {}
        for ref in _seq(expr.references().toSeq()):
            name = self._by_id.get(ref.exprId().id())
            if name is None:
                continue
            sql = str(ref.sql())
            if replacements.get(sql, name) != name:
                raise PlanError(
                    f"The column {sql} is ambiguous in a compiled plan; give the tables "
                    "different aliases"
                )
            replacements[sql] = name
        for sql, name in sorted(replacements.items(), key=_longest_first):
            pattern = r"(?<![\w.`])" + re.escape(sql) + r"(?![\w`])"
            text = re.sub(pattern, _quote(name).replace("\\", "\\\\"), text)
        return text


def values_rows(sql: str) -> list[list[str]]:
    """Each cell's literal of Spark's ``VALUES (1, 'a'), (2, 'b') AS t(k, v)`` text
    (``LocalRelation.toSQL``): ``[["1", "'a'"], ["2", "'b'"]]``. Spark writes a
    string's quote and backslash escaped with a backslash."""
    if not sql.startswith("VALUES "):
        raise PlanError(f"Not a VALUES list: {sql[:80]}")
    rows: list[list[str]] = []
    row: list[str] = []
    cell: list[str] = []
    depth, quoted, escaped = 0, False, False
    for ch in sql[len("VALUES ") :]:
        if quoted:
            cell.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == "'":
                quoted = False
            continue
        if depth == 0:
            if ch == "(":
                depth, row, cell = 1, [], []
            elif ch not in ", ":
                break  # the list's " AS t(...)"
            continue
        if ch == "'":
            quoted = True
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth == 0:
                row.append("".join(cell).strip())
                rows.append(row)
                continue
        elif ch == "," and depth == 1:
            row.append("".join(cell).strip())
            cell = []
            continue
        cell.append(ch)
    return rows


class _Compiler:
    def __init__(
        self,
        views: Mapping[str, tuple[str, ...]],
        ttl: timedelta,
        hints: Mapping[str, timedelta],
        builder: PlanBuilder,
        values: Mapping[str, Sequence[Sequence[str]]],
        options: Mapping[str, Mapping[str, str]],
    ) -> None:
        self.views = views
        self.values = values
        self.options = options
        self.ttl = ttl
        self.hints = {k.lower(): v for k, v in hints.items()}
        self.builder = builder

    # -- helpers -------------------------------------------------------------------

    def state(self, kind: str, inputs: Sequence[Built]) -> tuple[StateSpec, ...]:
        specs = []
        for index, name in enumerate(d.STATEFUL_TYPES[kind]):
            alias = inputs[index].alias if index < len(inputs) else None
            ttl = self.ttl
            if alias is not None and alias.lower() in self.hints:
                ttl = self.hints[alias.lower()]
            specs.append(StateSpec(index, name, ttl))
        return tuple(specs)

    def calc(
        self,
        child: Built,
        projection: Sequence[tuple[str, str, str, int, str | None]],
        condition: str | None,
    ) -> Built:
        """A calc node; ``projection`` is (name, expression, type, expr id, time)."""
        names = _unique(p[0] for p in projection)
        columns = [
            Column(name, p[2], p[3], p[4]) for name, p in zip(names, projection, strict=True)
        ]
        identity = [p[1] for p in projection] == [_quote(n) for n in child.names()] and names == [
            c.name for c in child.columns
        ]
        if identity and condition is None:
            return Built(child.node_id, columns, child.alias)
        exprs = [{"name": name, "expr": p[1]} for name, p in zip(names, projection, strict=True)]
        below = self.builder.nodes[-1] if self.builder.nodes else None
        if (
            condition is None
            and below is not None
            and below.id == child.node_id
            and below.type == d.CALC
            and all(e["expr"] in {_quote(n) for n in child.names()} for e in exprs)
        ):
            # Only picks or renames columns of the calc just made: one calc does both.
            by_name = {_quote(p["name"]): p["expr"] for p in below.fields["projection"]}
            exprs = [{"name": e["name"], "expr": by_name[e["expr"]]} for e in exprs]
            self.builder.nodes.pop()
            inputs = [e.source for e in self.builder.edges if e.target == below.id]
            self.builder.edges = [e for e in self.builder.edges if e.target != below.id]
            return self._calc_node(exprs, columns, below.fields.get("condition"), inputs, child)
        return self._calc_node(exprs, columns, condition, [child.node_id], child)

    def _calc_node(
        self,
        exprs: list[dict[str, str]],
        columns: list[Column],
        condition: str | None,
        inputs: list[int],
        child: Built,
    ) -> Built:
        parts = [f"{e['expr']} AS {_quote(e['name'])}" for e in exprs]
        description = f"Calc(select=[{', '.join(parts)}]"
        description += f", where=[{condition}])" if condition else ")"
        node_id = self.builder.add(
            d.CALC, description, columns, inputs, projection=exprs, condition=condition
        )
        return Built(node_id, columns, child.alias)

    @staticmethod
    def rowtime(child: Built) -> int | None:
        """The index of the input's event-time column (for event-time TTL)."""
        for i, column in enumerate(child.columns):
            if column.time == "rowtime":
                return i
        return None

    def passthrough(self, child: Built) -> list[tuple[str, str, str, int, str | None]]:
        return [(c.name, _quote(c.name), c.type, c.expr_id, c.time) for c in child.columns]

    # -- the walk ------------------------------------------------------------------

    def build(self, node: Any) -> Built:
        kind = _kind(node)
        method = getattr(self, f"_{kind}", None)
        if method is None:
            raise PlanError(
                f"COMPILE PLAN does not support {node.nodeName()} in a streaming plan "
                f"(no state-TTL-aware operator for it): {str(node.simpleString(80)).strip()}"
            )
        built: Built = method(node)
        return built

    def _scan(
        self,
        node: Any,
        table: tuple[str, ...],
        alias: str | None,
        options: Mapping[str, str] | None = None,
    ) -> Built:
        columns = []
        names = _unique(str(a.name()) for a in _seq(node.output()))
        for name, attr in zip(names, _seq(node.output()), strict=True):
            time = "rowtime" if attr.metadata().contains(WATERMARK_DELAY_KEY) else None
            columns.append(Column(name, str(attr.dataType().sql()), attr.exprId().id(), time))
        self._proctime_columns(node, columns)
        identifier = ".".join(_quote(p) for p in table)
        description = f"TableSourceScan(table=[[{', '.join(table)}]], fields=[{', '.join(names)}])"
        # A read with an OPTIONS hint keeps its options: the plan reads as the statement did.
        fields = d.table_field(table, options or {})
        node_id = self.builder.add(d.SCAN, description, columns, table=fields, quoted=identifier)
        return Built(node_id, columns, alias or table[-1])

    def _values(self, node: Any, tuples: Sequence[Sequence[str]]) -> Built:
        names = _unique(str(a.name()) for a in _seq(node.output()))
        columns = [
            Column(name, str(attr.dataType().sql()), attr.exprId().id())
            for name, attr in zip(names, _seq(node.output()), strict=True)
        ]
        shown = ", ".join("{ " + ", ".join(row) + " }" for row in tuples)
        node_id = self.builder.add(
            d.VALUES,
            f"Values(tuples=[[{shown}]])",
            columns,
            tuples=[list(row) for row in tuples],
        )
        return Built(node_id, columns)

    def _proctime_columns(self, node: Any, columns: list[Column]) -> None:
        """Columns defined as ``PROCTIME()`` (``current_timestamp()``) below a scan."""
        by_id = {c.expr_id: c for c in columns}
        pending = [node]
        while pending:
            current = pending.pop()
            if _kind(current) == "Project":
                for ne in _seq(current.projectList()):
                    if _kind(ne) == "Alias" and _kind(ne.child()) in _PROCTIME_FUNCTIONS:
                        column = by_id.get(ne.exprId().id())
                        if column is not None:
                            column.time = "proctime"
            pending.extend(_seq(current.children()))

    def _SubqueryAlias(self, node: Any) -> Built:
        child = node.child()
        alias = str(node.alias())
        if _kind(child) == "View":
            source = self._source(child)
            if source is not None:
                return source
        if _kind(child) in _STREAM_LEAVES:
            parts = [str(p) for p in _seq(node.identifier().nameParts())]
            return self._scan(child, tuple(parts), None)
        built = self.build(child)
        return Built(built.node_id, built.columns, alias if not alias.startswith("__") else None)

    def _source(self, view_node: Any) -> Built | None:
        """The scan or values node a gateway's temporary view stands for; None
        for any other view (its query is compiled)."""
        view = str(view_node.desc().identifier().table())
        table = self.views.get(view)
        if table is not None:
            return self._scan(view_node, table, None, self.options.get(view))
        if view in self.values:
            return self._values(view_node, self.values[view])
        return None

    def _View(self, node: Any) -> Built:
        source = self._source(node)
        return source if source is not None else self.build(node.child())

    def _Project(self, node: Any) -> Built:
        child_node = node.child()
        condition = None
        if _kind(child_node) == "Filter" and self._rank_filter(child_node) is None:
            child = self.build(child_node.child())
            condition = _Renderer(child.columns).render(child_node.condition())
        else:
            child = self.build(child_node)
        return self._project(node, child, condition)

    def _project(self, node: Any, child: Built, condition: str | None) -> Built:
        renderer = _Renderer(child.columns)
        by_id = {c.expr_id: c for c in child.columns}
        projection = []
        for ne in _seq(node.projectList()):
            expr = ne.child() if _kind(ne) == "Alias" else ne
            source = by_id.get(ne.exprId().id()) if _kind(ne) != "Alias" else None
            time = source.time if source is not None else None
            if _kind(expr) in _PROCTIME_FUNCTIONS:
                time = "proctime"
            elif _kind(expr).endswith("AttributeReference"):
                origin = by_id.get(expr.exprId().id())
                time = origin.time if origin is not None else time
            projection.append(
                (
                    str(ne.name()),
                    renderer.render(expr),
                    str(ne.dataType().sql()),
                    ne.exprId().id(),
                    time,
                )
            )
        return self.calc(child, projection, condition)

    def _Filter(self, node: Any) -> Built:
        rank = self._rank_filter(node)
        if rank is not None:
            return self._rank(node, *rank)
        child = self.build(node.child())
        condition = _Renderer(child.columns).render(node.condition())
        return self.calc(child, self.passthrough(child), condition)

    def _EventTimeWatermark(self, node: Any) -> Built:
        child = self.build(node.child())
        event_time = node.eventTime()
        delay = node.delay()
        delay_ms = int(delay.months()) * 31 * 86_400_000 + int(delay.days()) * 86_400_000
        delay_ms += int(delay.microseconds()) // 1000
        columns = [
            Column(
                c.name,
                c.type,
                c.expr_id,
                "rowtime" if c.expr_id == event_time.exprId().id() else c.time,
            )
            for c in child.columns
        ]
        index = [c.expr_id for c in child.columns].index(event_time.exprId().id())
        description = f"WatermarkAssigner(rowtime=[{columns[index].name}], delay=[{delay_ms} ms])"
        node_id = self.builder.add(
            d.WATERMARK,
            description,
            columns,
            [child.node_id],
            rowtimeFieldIndex=index,
            delayMs=delay_ms,
        )
        return Built(node_id, columns, child.alias)

    def _Union(self, node: Any) -> Built:
        children = [self.build(c) for c in _seq(node.children())]
        output = _seq(node.output())
        names = _unique(str(a.name()) for a in output)
        columns = [
            Column(n, str(a.dataType().sql()), a.exprId().id())
            for n, a in zip(names, output, strict=True)
        ]
        node_id = self.builder.add(
            d.UNION,
            f"Union(all=[true], union=[{', '.join(names)}])",
            columns,
            [c.node_id for c in children],
        )
        return Built(node_id, columns)

    # -- ranks and deduplication -------------------------------------------------------

    def _rank_filter(self, node: Any) -> tuple[Any, int, list[Any]] | None:
        """``(window, N, projects between)`` when ``node`` filters a ROW_NUMBER."""
        condition = node.condition()
        op = _kind(condition)
        if op not in ("EqualTo", "LessThanOrEqual", "LessThan"):
            return None
        left, right = condition.left(), condition.right()
        if _kind(right) != "Literal" or not _kind(left).endswith("AttributeReference"):
            return None
        try:
            bound = int(str(right.value()))
        except ValueError:
            return None
        limit = bound - 1 if op == "LessThan" else bound
        if op == "EqualTo" and bound != 1:
            return None
        between: list[Any] = []
        current = node.child()
        while _kind(current) in ("Project", "SubqueryAlias"):
            between.append(current)
            current = current.child()
        if _kind(current) != "Window":
            return None
        exprs = _seq(current.windowExpressions())
        if len(exprs) != 1 or exprs[0].exprId().id() != left.exprId().id():
            return None
        function = exprs[0].child().windowFunction()
        if _kind(function) != "RowNumber":
            raise PlanError(
                f"Only ROW_NUMBER() ranks in compiled plans, not {function.prettyName()}()"
            )
        if limit < 1:
            raise PlanError(f"A rank filter keeps no row: {condition.sql()}")
        return current, limit, between

    def _rank(self, node: Any, window: Any, limit: int, between: list[Any]) -> Built:
        child = self.build(window.child())
        by_id = {c.expr_id: (i, c) for i, c in enumerate(child.columns)}
        partition = []
        for expr in _seq(window.partitionSpec()):
            ref = _attr_id(expr)
            if ref is None or ref not in by_id:
                raise PlanError("PARTITION BY of a compiled rank takes columns, not expressions")
            partition.append(by_id[ref][0])
        order = []
        for sort in _seq(window.orderSpec()):
            ref = _attr_id(sort.child())
            if ref is None or ref not in by_id:
                raise PlanError("ORDER BY of a compiled rank takes columns, not expressions")
            order.append(
                {
                    "index": by_id[ref][0],
                    "ascending": str(sort.direction().sql()) == "ASC",
                    "nullsFirst": str(sort.nullOrdering().sql()) == "NULLS FIRST",
                }
            )
        keys = [child.columns[i].name for i in partition]
        rn = _seq(window.windowExpressions())[0]
        time = child.columns[order[0]["index"]].time if len(order) == 1 else None
        if limit == 1 and time is not None:
            keep_last = not order[0]["ascending"]
            description = (
                f"Deduplicate(keep=[{'LastRow' if keep_last else 'FirstRow'}], "
                f"key=[{', '.join(keys)}], order=[{time.upper()}])"
            )
            node_id = self.builder.add(
                d.DEDUPLICATE,
                description,
                child.columns,
                [child.node_id],
                state=self.state(d.DEDUPLICATE, [child]),
                inputRowtime=self.rowtime(child),
                uniqueKeys=partition,
                isRowtime=time == "rowtime",
                keepLastRow=keep_last,
                generateUpdateBefore=True,
            )
            built = Built(node_id, list(child.columns), child.alias)
            # ROW_NUMBER() of a kept row is 1, for the calcs above that read it.
            projection = self.passthrough(built)
            projection.append(("rn", "1", "INT", rn.exprId().id(), None))
            built = self.calc(built, projection, None)
        else:
            columns = [*child.columns, Column("rn", str(rn.dataType().sql()), rn.exprId().id())]
            names = _unique(c.name for c in columns)
            columns = [
                Column(n, c.type, c.expr_id, c.time) for n, c in zip(names, columns, strict=True)
            ]
            sort_text = ", ".join(
                f"{child.columns[o['index']].name} {'ASC' if o['ascending'] else 'DESC'}"
                for o in order
            )
            description = (
                f"Rank(rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd={limit}], "
                f"partitionBy=[{', '.join(keys)}], orderBy=[{sort_text}], "
                f"select=[{', '.join(names)}])"
            )
            node_id = self.builder.add(
                d.RANK,
                description,
                columns,
                [child.node_id],
                state=self.state(d.RANK, [child]),
                inputRowtime=self.rowtime(child),
                partitionKeys=partition,
                orderBy=order,
                rankRange={"start": 1, "end": limit},
                outputRankNumber=True,
            )
            built = Built(node_id, columns, child.alias)
        for project in reversed(between):
            if _kind(project) == "Project":
                built = self._project(project, built, None)
        return built

    # -- aggregation ---------------------------------------------------------------

    def _Distinct(self, node: Any) -> Built:
        child = self.build(node.child())
        return self._group(child, list(range(len(child.columns))), [], node, None)

    def _Aggregate(self, node: Any) -> Built:
        child = self.build(node.child())
        renderer = _Renderer(child.columns)
        by_id = {c.expr_id: i for i, c in enumerate(child.columns)}
        pre: list[tuple[str, str, str, int, str | None]] = self.passthrough(child)
        grouping: list[int] = []
        group_sql: dict[str, int] = {}
        for expr in _seq(node.groupingExpressions()):
            ref = _attr_id(expr)
            if ref is not None and ref in by_id:
                grouping.append(by_id[ref])
                continue
            pre.append(
                (
                    f"$f{len(pre)}",
                    renderer.render(expr),
                    str(expr.dataType().sql()),
                    -len(pre),
                    None,
                )
            )
            grouping.append(len(pre) - 1)
            group_sql[str(expr.sql())] = len(pre) - 1
        calls: list[dict[str, Any]] = []
        seen: dict[str, int] = {}
        for ne in _seq(node.aggregateExpressions()):
            pending = [ne]
            while pending:
                expr = pending.pop()
                if _kind(expr) == "AggregateExpression":
                    sql = str(expr.sql())
                    if sql in seen:
                        continue
                    function = expr.aggregateFunction()
                    kind = _AGGREGATES.get(_kind(function))
                    if kind is None:
                        raise PlanError(
                            f"Compiled plans aggregate with COUNT, SUM, MIN, MAX and AVG, "
                            f"not {function.prettyName()}"
                        )
                    args = []
                    for arg in _seq(function.children()):
                        if _kind(arg) == "Literal" and kind == "COUNT":
                            continue  # COUNT(*) / COUNT(1)
                        ref = _attr_id(arg)
                        if ref is not None and ref in by_id:
                            args.append(by_id[ref])
                        else:
                            pre.append(
                                (
                                    f"$f{len(pre)}",
                                    renderer.render(arg),
                                    str(arg.dataType().sql()),
                                    -len(pre),
                                    None,
                                )
                            )
                            args.append(len(pre) - 1)
                    seen[sql] = len(calls)
                    calls.append(
                        {
                            "kind": kind,
                            "argList": args,
                            "distinct": bool(expr.isDistinct()),
                            "type": str(expr.dataType().sql()),
                            "sql": sql,
                        }
                    )
                    continue
                pending.extend(_seq(expr.children()))
        if len(pre) > len(child.columns):
            child = self.calc(child, pre, None)
        return self._group(child, grouping, calls, node, group_sql)

    def _group(
        self,
        child: Built,
        grouping: list[int],
        calls: list[dict[str, Any]],
        node: Any,
        group_sql: dict[str, int] | None,
    ) -> Built:
        keys = [child.columns[i] for i in grouping]
        agg_names = _unique([*(c.name for c in keys), *(f"agg{i}" for i in range(len(calls)))])
        columns = [Column(n, c.type, c.expr_id) for n, c in zip(agg_names, keys, strict=False)]
        columns += [
            Column(agg_names[len(keys) + i], call["type"], -1000 - i)
            for i, call in enumerate(calls)
        ]
        call_text = [
            f"{c['kind']}({'DISTINCT ' if c['distinct'] else ''}"
            f"{', '.join(child.columns[a].name for a in c['argList']) or '*'}) "
            f"AS {columns[len(keys) + i].name}"
            for i, c in enumerate(calls)
        ]
        description = (
            f"GroupAggregate(groupBy=[{', '.join(c.name for c in keys)}], "
            f"select=[{', '.join([*(c.name for c in keys), *call_text])}])"
        )
        node_id = self.builder.add(
            d.GROUP_AGGREGATE,
            description,
            columns,
            [child.node_id],
            state=self.state(d.GROUP_AGGREGATE, [child]),
            inputRowtime=self.rowtime(child),
            grouping=grouping,
            aggCalls=[
                {"name": columns[len(keys) + i].name, **{k: v for k, v in c.items() if k != "sql"}}
                for i, c in enumerate(calls)
            ],
        )
        built = Built(node_id, columns)
        if _kind(node) == "Distinct":
            return Built(
                node_id,
                [Column(c.name, c.type, k.expr_id) for c, k in zip(columns, keys, strict=True)],
            )
        # The Aggregate's output list over the aggregate node's columns.
        extra = {c["sql"]: columns[len(keys) + i].name for i, c in enumerate(calls)}
        for sql, index in (group_sql or {}).items():
            extra[sql] = columns[grouping.index(index)].name
        key_columns = [
            Column(c.name, c.type, child.columns[g].expr_id)
            for c, g in zip(columns, grouping, strict=False)
        ]
        renderer = _Renderer(key_columns)
        projection = []
        for ne in _seq(node.aggregateExpressions()):
            expr = ne.child() if _kind(ne) == "Alias" else ne
            projection.append(
                (
                    str(ne.name()),
                    renderer.render(expr, extra),
                    str(ne.dataType().sql()),
                    ne.exprId().id(),
                    None,
                )
            )
        return self.calc(built, projection, None)

    # -- joins -----------------------------------------------------------------------

    def _Join(self, node: Any) -> Built:
        join_type = _JOIN_TYPES.get(str(node.joinType().toString()))
        if join_type is None:
            raise PlanError(
                "Compiled plans join with INNER, LEFT, RIGHT and FULL joins, "
                f"not {node.joinType().sql()}"
            )
        left = self.build(node.left())
        right = self.build(node.right())
        left_ids = {c.expr_id: i for i, c in enumerate(left.columns)}
        right_ids = {c.expr_id: i for i, c in enumerate(right.columns)}
        names = _unique([*left.names(), *right.names()])
        columns = [
            Column(n, c.type, c.expr_id, c.time)
            for n, c in zip(names, [*left.columns, *right.columns], strict=True)
        ]
        conjuncts: list[Any] = []
        if node.condition().isDefined():
            pending = [node.condition().get()]
            while pending:
                expr = pending.pop(0)
                if _kind(expr) == "And":
                    pending[:0] = [expr.left(), expr.right()]
                else:
                    conjuncts.append(expr)
        left_keys, right_keys, rest = [], [], []
        for expr in conjuncts:
            pair = None
            if _kind(expr) == "EqualTo":
                a, b = expr.left(), expr.right()
                ida, idb = _attr_id(a), _attr_id(b)
                if ida in left_ids and idb in right_ids:
                    pair = (left_ids[ida], right_ids[idb])
                elif idb in left_ids and ida in right_ids:
                    pair = (left_ids[idb], right_ids[ida])
            if pair is None:
                rest.append(expr)
            else:
                left_keys.append(pair[0])
                right_keys.append(pair[1])
        if not left_keys:
            raise PlanError(
                "A compiled regular join needs an equality between a column of each input "
                "(its key): " + (str(node.condition().get().sql()) if conjuncts else "no condition")
            )
        renderer = _Renderer(columns)
        condition = " AND ".join(f"({renderer.render(e)})" for e in rest) or None
        description = (
            f"Join(joinType=[{join_type.title()}Join], "
            f"where=[{renderer.render(node.condition().get())}], "
            f"select=[{', '.join(names)}])"
        )
        node_id = self.builder.add(
            d.JOIN,
            description,
            columns,
            [left.node_id, right.node_id],
            state=self.state(d.JOIN, [left, right]),
            inputRowtime=self.rowtime(left),
            joinSpec={
                "joinType": join_type,
                "leftKeys": left_keys,
                "rightKeys": right_keys,
                "nonEquiCondition": condition,
            },
        )
        return Built(node_id, columns)


def compile_query(
    analyzed: Any,
    views: Mapping[str, tuple[str, ...]],
    builder: PlanBuilder,
    *,
    ttl: timedelta,
    hints: Mapping[str, timedelta] | None = None,
    values: Mapping[str, Sequence[Sequence[str]]] | None = None,
    table_options: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[int, list[Column]]:
    """Compile one query's analyzed plan into ``builder``: the id and columns of
    the query's last node. ``views`` names the table each temporary view of the
    gateway's table resolution stands for; ``values`` the rows (each cell's
    literal) of each view that stands for a VALUES list; ``table_options`` the
    OPTIONS hint of each view's table read with one."""
    compiler = _Compiler(views, ttl, hints or {}, builder, values or {}, table_options or {})
    built = compiler.build(analyzed)
    return built.node_id, built.columns
