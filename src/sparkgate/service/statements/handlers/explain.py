"""Flink's EXPLAIN, answered from Spark's plans under Flink's section headings.

- ``== Abstract Syntax Tree ==``: Spark's analyzed logical plan;
- ``== Optimized Physical Plan ==``: Spark's optimized logical plan, with
  Spark's statistics on each node for ``ESTIMATED_COST`` and, in streaming
  mode, each operator's changelog mode for ``CHANGELOG_MODE`` (``[I]`` until
  an aggregation or a join, ``[I,UB,UA]`` from there up);
- ``== Optimized Execution Plan ==``: Spark's physical plan;
- ``== Physical Execution Plan ==`` (``JSON_EXECUTION_PLAN``): the physical
  plan's operators as JSON in the layout of Flink's execution plan.

Nothing is run: a query is analysed and planned, an INSERT's query likewise,
a statement set's INSERTs one after another. HiveServer2 sessions asking a
plain ``EXPLAIN <query>`` get Spark's own answer.
"""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql import DataFrame

from sparkgate.service.operation.operation import Execution
from sparkgate.service.session.session import Session
from sparkgate.service.spark.jobs import invalid, to_execution_error
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.query import run_query
from sparkgate.service.statements.kinds import (
    Dml,
    ExecuteStatementSet,
    Explain,
    SparkQuery,
    Statement,
)
from sparkgate.service.statements.metadata import flink_shapes
from sparkgate.service.statements.results import table_result
from sparkgate.service.streaming.strategy import RuntimeOptions, plan_insert, query_frame

__all__ = ["explain"]

_SPARK_SECTIONS = {
    "Analyzed Logical Plan": "ast",
    "Optimized Logical Plan": "optimized",
    "Physical Plan": "physical",
}
# Operators after which a stream carries updates (Flink's -U/+U).
_UPDATING = ("Aggregate", "Join", "Window", "Deduplicate", "Sort", "Expand")


def explain(context: StatementContext, statement: Explain) -> Execution:
    session = context.session
    flink = flink_shapes(session)
    if not flink and not statement.details and isinstance(statement.statement, SparkQuery):
        return run_query(context, SparkQuery(statement.text, "EXPLAIN", relational=False))
    runtime = context.runtime
    plans = [_plans(session, inner, runtime, statement.details) for inner in _explained(statement)]
    text = _render(plans, statement.details, runtime.streaming)
    if "JSON_EXECUTION_PLAN" in statement.details:
        frames = [p["frame"] for p in plans if p.get("frame") is not None]
        text += "\n== Physical Execution Plan ==\n" + _json_plan(session, frames) + "\n"
    return table_result(["result" if flink else "plan"], [[text]])


def _explained(statement: Explain) -> list[Statement]:
    inner = statement.statement
    members = inner.statements if isinstance(inner, ExecuteStatementSet) else (inner,)
    for member in members:
        relational = isinstance(member, SparkQuery) and member.relational
        if not (relational or (isinstance(member, Dml) and member.insert)):
            raise invalid(
                "EXPLAIN explains a query, an INSERT or a statement set of INSERTs, not: "
                + member.text
            )
    if not members:
        raise invalid("EXPLAIN of an empty statement set: there is nothing to explain")
    return list(members)


def _plans(
    session: Session, statement: Statement, runtime: RuntimeOptions, details: tuple[str, ...]
) -> dict[str, Any]:
    """The sections of one statement's plans, and its frame when it has one."""
    frame: DataFrame | None = None
    sink = ""
    try:
        if isinstance(statement, Dml):
            plan = plan_insert(session, statement.text, runtime)
            frame = plan.frame
            if frame is not None:
                sink = f"Sink(table=[{'.'.join(plan.target)}], fields=[{', '.join(frame.columns)}])"
        else:
            frame, _ = query_frame(session, statement.text, runtime)
        if frame is None:  # Spark's own INSERT: Spark explains it without running it
            rows = session.spark.sql(f"EXPLAIN EXTENDED {statement.text}").collect()
            sections = _sections(str(rows[0][0]))
            cost = sections
        else:
            sections = _sections(_explain_string(session, frame, "extended"))
            cost = (
                _sections(_explain_string(session, frame, "cost"))
                if "ESTIMATED_COST" in details
                else sections
            )
    except Exception as exc:
        raise to_execution_error(exc) from exc
    ast = sections.get("ast", "")
    if ast and ":" in ast.split("\n", 1)[0] and "\n" in ast:
        ast = ast.split("\n", 1)[1]  # Spark's first line is the output schema
    ast = _without_internal_views(ast)
    optimized = cost.get("optimized", sections.get("optimized", ""))
    physical = sections.get("physical", "")
    if sink:
        ast, optimized, physical = (_under(sink, part) for part in (ast, optimized, physical))
    return {"ast": ast, "optimized": optimized, "physical": physical, "frame": frame}


def _explain_string(session: Session, frame: DataFrame, mode: str) -> str:
    """Spark's EXPLAIN command over the frame's plan: it plans a streaming query
    as a micro-batch would run it, where the frame's own plans refuse to."""
    jvm = session.spark.sparkContext._jvm
    assert jvm is not None
    command = jvm.org.apache.spark.sql.execution.command.ExplainCommand(
        frame._jdf.queryExecution().analyzed(),  # its views may be gone: resolved already
        jvm.org.apache.spark.sql.execution.ExplainMode.fromString(mode),
    )
    return str(command.run(session.spark._jsparkSession).apply(0).getString(0))


def _sections(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    name = None
    lines: list[str] = []
    for line in [*text.splitlines(), "== end =="]:
        if line.startswith("== ") and line.endswith(" =="):
            if name in _SPARK_SECTIONS:
                found[_SPARK_SECTIONS[name]] = "\n".join(lines).strip("\n")
            name, lines = line[3:-3], []
        else:
            lines.append(line)
    return found


def _without_internal_views(plan: str) -> str:
    """The plan without the temporary views the gateway reads connector tables
    through (``__sparkgate_...``): their children move up in their place."""
    # Parse Spark's tree (each node's text after its ":- " / "+- " connector) ...
    root: list[Any] = ["", []]
    stack: list[tuple[int, list[Any]]] = [(-1, root)]
    for line in plan.splitlines():
        depth = len(line) - len(line.lstrip(" :+-"))
        node: list[Any] = [line[depth:], []]
        while stack[-1][0] >= depth:
            stack.pop()
        stack[-1][1][1].append(node)
        stack.append((depth, node))

    def kept(node: list[Any]) -> list[list[Any]]:
        children = [child for c in node[1] for child in kept(c)]
        if "__sparkgate_" in node[0] and ("SubqueryAlias" in node[0] or "View (" in node[0]):
            return children
        return [[node[0], children]]

    # ... and draw it again as Spark does.
    lines: list[str] = []

    def draw(node: list[Any], lead: str, connector: str, last: bool) -> None:
        lines.append(lead + connector + node[0])
        below = lead + ("" if not connector else "   " if last else ":  ")
        for i, child in enumerate(node[1]):
            final = i == len(node[1]) - 1
            draw(child, below, "+- " if final else ":- ", final)

    for top in (n for c in root[1] for n in kept(c)):
        draw(top, "", "", True)
    return "\n".join(lines)


def _under(root: str, plan: str) -> str:
    lines = plan.splitlines()
    if not lines:
        return root
    return "\n".join([root, "+- " + lines[0], *("   " + line for line in lines[1:])])


def _changelog(plan: str) -> str:
    """Each operator line with its changelog mode: updates from the first
    updating operator (read bottom-up) to the root."""
    lines = plan.splitlines()
    updating_depth: int | None = None
    marked: list[str] = []
    for line in reversed(lines):
        depth = len(line) - len(line.lstrip(" :+-"))
        name = line.lstrip(" :+-*()0123456789~")
        if updating_depth is not None and depth > updating_depth:
            updating_depth = None  # another branch, below the updating operator
        if name.startswith(_UPDATING):
            updating_depth = depth if updating_depth is None else min(updating_depth, depth)
        mode = "[I,UB,UA]" if updating_depth is not None and depth <= updating_depth else "[I]"
        marked.append(f"{line}, changelogMode={mode}")
    return "\n".join(reversed(marked))


def _render(plans: list[dict[str, Any]], details: tuple[str, ...], streaming: bool) -> str:
    def joined(key: str) -> str:
        return "\n\n".join(p[key] for p in plans if p[key])

    optimized = joined("optimized")
    if "CHANGELOG_MODE" in details and streaming:
        optimized = "\n\n".join(_changelog(p["optimized"]) for p in plans if p["optimized"])
    heading = (
        "== Optimized Physical Plan With Advice =="
        if "PLAN_ADVICE" in details
        else "== Optimized Physical Plan =="
    )
    text = f"== Abstract Syntax Tree ==\n{joined('ast')}\n\n{heading}\n"
    if "PLAN_ADVICE" in details:
        text += "\nNo available advice...\n\n"
    text += f"{optimized}\n\n== Optimized Execution Plan ==\n{joined('physical')}\n"
    return text


def _json_plan(session: Session, frames: list[DataFrame]) -> str:
    """The physical operators as Flink's JSON execution plan lists them: sources
    first, each with its predecessors and how rows are shipped to it."""
    nodes: list[dict[str, Any]] = []
    parallelism = session.spark.sparkContext.defaultParallelism

    def walk(node: Any) -> int:
        name = str(node.nodeName())
        if name == "AdaptiveSparkPlan":
            return walk(node.executedPlan())
        if name in ("WholeStageCodegen", "InputAdapter"):
            return walk(node.children().apply(0))  # Spark's code generation, not an operator
        children = node.children()
        inputs = [walk(children.apply(i)) for i in range(children.size())]
        entry: dict[str, Any] = {
            "id": len(nodes) + 1,
            "type": name,
            "pact": "Data Source" if not inputs else "Operator",
            "contents": str(node.simpleString(25)),
            "parallelism": 1 if name == "CollectLimit" else parallelism,
        }
        if inputs:
            shipping = "HASH" if name.endswith("Exchange") else "FORWARD"
            entry["predecessors"] = [
                {"id": i, "ship_strategy": shipping, "side": "second" if n else "first"}
                for n, i in enumerate(inputs)
            ]
        nodes.append(entry)
        return int(entry["id"])

    for frame in frames:
        if frame.isStreaming:
            raise invalid(
                "JSON_EXECUTION_PLAN explains batch queries: a streaming query's operators are "
                "planned per micro-batch (EXPLAIN without it shows them)"
            )
        walk(frame._jdf.queryExecution().executedPlan())
    return json.dumps({"nodes": nodes}, indent=2)
