"""Compiled plans for the statement handlers: compile, store, read, explain and run.

``COMPILE PLAN`` compiles INSERTs (one, or a statement set) on the session's
catalog into a :class:`~.document.Plan` and writes it to a URI (a path,
``file://`` or any Hadoop file system the Spark session reaches);
``EXECUTE PLAN`` reads one back and runs it as a job of the job manager;
``EXPLAIN PLAN`` checks it as EXECUTE would (nothing starts) and draws it.
A streaming SELECT or INSERT with a positive ``table.exec.state.ttl`` or a
STATE_TTL hint is compiled in memory and run the same way.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING

from sparkgate import version
from sparkgate.api.errors import ExecutionError, PlanError, SqlParseError
from sparkgate.api.session import RESOURCE_SCHEME
from sparkgate.service.catalog import quote_name
from sparkgate.service.catalogs.spark import qualified_name
from sparkgate.service.plan import document as d
from sparkgate.service.plan.compiler import PlanBuilder, compile_query, values_rows
from sparkgate.service.plan.document import Node, Plan
from sparkgate.service.plan.executor import Frames, build_frames, updating_nodes
from sparkgate.service.plan.hints import state_ttl_hints
from sparkgate.service.spark.confinement import PathUse
from sparkgate.service.spark.files import Files
from sparkgate.service.spark.plans import expression_refusal
from sparkgate.service.streaming import connectors, resolve
from sparkgate.service.streaming.changelog import KIND_COLUMN
from sparkgate.service.streaming.resolve import Resolution
from sparkgate.service.streaming.strategy import (
    InsertPlan,
    RuntimeOptions,
    plan_insert,
    query_frame,
)
from sparkgate.sql.dynamic_options import hint_text

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sparkgate.service.session.session import Session

__all__ = [
    "compile_inserts",
    "compile_select",
    "explain",
    "insert_plans",
    "read_plan",
    "sets_state_ttl",
    "shown_uri",
    "uses_state_ttl",
    "write_plan",
]

log = logging.getLogger(__name__)

_UPDATING_SINKS = ("print", "blackhole")


# -- where plans live ------------------------------------------------------------------


def shown_uri(uri: str) -> str:
    """A plan URI as its user wrote it: a session resource by its file's name."""
    scheme, _, name = uri.partition(":")
    if scheme != RESOURCE_SCHEME:
        return uri
    return f"{name.partition('-')[2] or name} (the SQL client's file)"


def _located(session: Session, uri: str) -> str:
    """Where the plan is: a session resource (a file the SQL client put in the
    session from its own machine) or the URI itself."""
    scheme, _, name = uri.partition(":")
    if scheme != RESOURCE_SCHEME:
        return uri
    try:
        return session.resources.uri(name)
    except ExecutionError as exc:
        raise PlanError(str(exc)) from None


def _checked(session: Session, uri: str) -> tuple[Files, bool]:
    """The file system of ``uri`` and whether the file is there; a URI no file
    system serves is a PlanError."""
    uri = _located(session, uri)
    files = Files(session.spark)
    try:
        return files, files.exists(uri)
    except Exception as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        scheme = uri.partition(":")[0] if ":" in uri else "file"
        raise PlanError(
            f"No file system serves the plan URI '{shown_uri(uri)}' (scheme '{scheme}'): {message}"
        ) from None


def plan_exists(session: Session, uri: str) -> bool:
    return _checked(session, uri)[1]


def read_plan(session: Session, uri: str) -> Plan:
    files, _ = _checked(session, uri)
    try:
        text = files.read(_located(session, uri))
    except Exception as exc:
        message = str(exc).splitlines()[0]
        raise PlanError(f"Cannot read the plan '{shown_uri(uri)}': {message}") from None
    if text is None:
        raise PlanError(f"The plan file '{shown_uri(uri)}' does not exist")
    return Plan.from_json(text, source=f"plan '{shown_uri(uri)}'")


def write_plan(session: Session, uri: str, plan: Plan) -> None:
    files, _ = _checked(session, uri)
    try:
        files.write(_located(session, uri), plan.to_json())
    except Exception as exc:
        message = str(exc).splitlines()[0]
        raise PlanError(f"Cannot write the plan '{shown_uri(uri)}': {message}") from None
    log.info("Wrote the compiled plan %s (%d nodes)", shown_uri(uri), len(plan.nodes))


# -- compiling --------------------------------------------------------------------------


def _qualified(
    session: Session, views: Mapping[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    """Each table by its full name, so a plan reads the same tables from any
    database; a session's temporary table keeps its one-part name."""
    temporary = session.context.temporary_tables
    return {
        view: name
        if len(name) == 1 and name[0] in temporary
        else qualified_name(session.spark, name)
        for view, name in views.items()
    }


def _tuples(session: Session, resolution: Resolution) -> dict[str, list[list[str]]]:
    """Each VALUES list the statement reads, by the view that stands for it, as its
    rows' literals: Spark folds the list into a local relation and writes it back
    as SQL (``LocalRelation.toSQL``), so a row of expressions keeps its values."""
    tuples = {}
    for view, relation in resolution.values.items():
        try:
            folded = session.spark.sql(f"SELECT * FROM {relation}")._jdf.queryExecution()
            tuples[view] = values_rows(str(folded.optimizedPlan().toSQL("t")))
        except PlanError:
            raise
        except Exception as exc:
            message = str(exc).strip().splitlines()[0]
            raise PlanError(f"Cannot compile the VALUES list {relation}: {message}") from None
    return tuples


def _sink(
    builder: PlanBuilder,
    input_id: int,
    table: tuple[str, ...],
    plan: InsertPlan,
    columns: Sequence[tuple[str, str]],
) -> None:
    from sparkgate.service.plan.compiler import Column

    target = list(table)
    connector = plan.sink.connector if plan.sink is not None else None
    description = f"Sink(table=[{'.'.join(target)}], fields=[{', '.join(n for n, _ in columns)}])"
    builder.add(
        d.SINK,
        description,
        [Column(n, t, -1) for n, t in columns],
        [input_id],
        table=d.table_field(target, plan.sink_options if plan.sink is not None else {}),
        connector=connector,
    )


def compile_inserts(
    session: Session, texts: Sequence[str], runtime: RuntimeOptions, statement: str
) -> Plan:
    """The plan of one INSERT or a statement set's INSERTs."""
    streaming = runtime.as_streaming()
    builder = PlanBuilder()
    for text in texts:
        stripped, hints = state_ttl_hints(text)
        insert = plan_insert(session, stripped, streaming, reading=resolve.COMPILED)
        if insert.frame is None or not insert.frame.isStreaming:
            raise PlanError(f"COMPILE PLAN needs an INSERT reading tables as streams: {text}")
        assert insert.resolution is not None
        analyzed = insert.frame._jdf.queryExecution().analyzed()
        last, columns = compile_query(
            analyzed,
            _qualified(session, insert.resolution.tables),
            builder,
            ttl=runtime.state_ttl,
            hints=hints,
            values=_tuples(session, insert.resolution),
            table_options=insert.resolution.options,
        )
        target = _qualified(session, {"": insert.target})[""]
        _sink(builder, last, target, insert, [(c.name, c.type) for c in columns])
    plan = Plan(statement, tuple(builder.nodes), tuple(builder.edges), gateway_version=version())
    check_sinks(plan)
    return plan


def check_sinks(plan: Plan) -> None:
    """Flink's rule: a sink that cannot take updates refuses an updating input."""
    updating = updating_nodes(plan)
    for sink in plan.sinks():
        source = plan.inputs(sink.id)[0]
        connector = sink.fields.get("connector")
        if source in updating and connector not in _UPDATING_SINKS:
            producer = plan.node(source)
            raise PlanError(
                f"Table sink '{'.'.join(sink.fields['table']['identifier'])}' doesn't support "
                f"consuming update changes which is produced by node {producer.id} "
                f"({producer.description or producer.type}); write updates to a print or "
                "blackhole table, or read them as a streaming query's changelog"
            )


# What Spark's streaming refuses and the operators run: ROW_NUMBER() OVER (...)
# and its kin (Flink's deduplication and Top-N), and outer joins of two streams
# without watermarks (Flink's regular joins, which retract).
_OPERATOR_ONLY = re.compile(
    r"\b(?:ROW_NUMBER|RANK|DENSE_RANK)\s*\(\s*\)\s*OVER\b|\b(?:LEFT|RIGHT|FULL)\s+(?:OUTER\s+)?JOIN\b",
    re.IGNORECASE,
)


def uses_state_ttl(text: str, runtime: RuntimeOptions) -> bool:
    """A streaming statement runs on the gateway's TTL-aware operators: it has a
    state TTL, or ranks rows (a deduplication, a Top-N) or outer-joins streams,
    which Spark's streaming refuses without watermarks and these operators do
    (with no TTL, state is kept as long as the query runs, as in Flink). What
    they cannot compile still goes to Spark."""
    if not runtime.streaming:
        return False
    return _OPERATOR_ONLY.search(text) is not None or sets_state_ttl(text, runtime)


def sets_state_ttl(text: str, runtime: RuntimeOptions) -> bool:
    """The statement asks for a state TTL (``table.exec.state.ttl``, a
    ``STATE_TTL`` hint): one the operators cannot compile is refused, rather
    than run by Spark without it."""
    return runtime.state_ttl > timedelta(0) or bool(state_ttl_hints(text)[1])


def compile_select(
    session: Session, text: str, runtime: RuntimeOptions
) -> tuple[DataFrame, Resolution] | None:
    """A streaming SELECT's changelog frame on the TTL-aware operators; None
    when it keeps no state (Spark runs it as it is) or cannot be compiled and
    names no STATE_TTL hint (then Spark runs it, without per-operator TTL)."""
    stripped, hints = state_ttl_hints(text)
    frame, resolution = query_frame(session, stripped, runtime, reading=resolve.COMPILED)
    if not frame.isStreaming:
        return None
    analyzed = frame._jdf.queryExecution().analyzed()
    builder = PlanBuilder()
    try:
        last, _ = compile_query(
            analyzed,
            _qualified(session, resolution.tables),
            builder,
            ttl=runtime.state_ttl,
            hints=hints,
            values=_tuples(session, resolution),
            table_options=resolution.options,
        )
    except PlanError as exc:
        if hints:
            raise
        if sets_state_ttl(text, runtime):
            log.warning("table.exec.state.ttl is not applied to this query: %s", exc)
        else:
            log.debug("Spark runs the query: %s", exc)
        return None
    plan = Plan(stripped, tuple(builder.nodes), tuple(builder.edges))
    if not plan.stateful:
        return None
    frames = run_frames(session, plan, runtime)
    return frames.frames[last], _combined(frames)


# -- running ------------------------------------------------------------------------------


def _combined(frames: Frames) -> Resolution:
    combined = Resolution("")
    for resolution in frames.resolutions:
        combined.sources.extend(resolution.sources)
        combined.definitions.extend(resolution.definitions)
    return combined


def _fragments(node: Node) -> list[str]:
    """The Spark SQL a node holds: a calc's expressions and condition, a join's
    condition, a values node's literals."""
    found: list[object] = []
    fields = node.fields
    if node.type == d.CALC:
        projection = fields.get("projection")
        if isinstance(projection, list):
            found += [p.get("expr") for p in projection if isinstance(p, dict)]
        found.append(fields.get("condition"))
    elif node.type == d.JOIN and isinstance(fields.get("joinSpec"), dict):
        found.append(fields["joinSpec"].get("nonEquiCondition"))
    elif node.type == d.VALUES and isinstance(fields.get("tuples"), list):
        found += [cell for row in fields["tuples"] if isinstance(row, list) for cell in row]
    return [f for f in found if isinstance(f, str) and f.strip()]


def _check_fragments(session: Session, plan: Plan) -> None:
    """A plan file's Spark SQL is expressions over each node's input: one holding a
    query (a subquery reading a table or a file the statement's checks never saw,
    or text closing the expression early) is refused before anything runs."""
    for node in plan.nodes:
        for fragment in _fragments(node):
            refusal = expression_refusal(session.spark, fragment)
            if refusal is not None:
                shown = fragment if len(fragment) <= 80 else fragment[:77] + "..."
                raise PlanError(
                    f"node {node.id} ({node.type}): {shown!r} {refusal}; a plan's "
                    "expressions compute over their input only"
                )


def _table_options(session: Session, node: Node) -> dict[str, str]:
    """A scan's or a sink's options from a statement's OPTIONS hint; a path among
    them must lie under the gateway's allowed roots, as the statement's would."""
    options = node.table_options()
    roots = session.path_roots
    if roots is not None and "path" in options:
        refusal = roots.refusal(session.spark, [PathUse(options["path"], "a table's files")])
        if refusal is not None:
            raise PlanError(f"node {node.id}: {refusal}")
    return options


def run_frames(session: Session, plan: Plan, runtime: RuntimeOptions) -> Frames:
    """The frames of ``plan``'s nodes on this session (nothing starts yet)."""
    streaming = runtime.as_streaming()
    plan = plan.with_ttl(runtime.state_ttl)
    _check_fragments(session, plan)

    def scan(node: Node, table: tuple[str, ...]) -> tuple[DataFrame, Resolution]:
        temporary = session.context.temporary_tables
        known = resolve.lookup(session.spark, table, temporary) is not None
        if not known and not session.spark.catalog.tableExists(quote_name(table)):
            raise PlanError(f"node {node.id}: the table {'.'.join(table)} does not exist")
        options = _table_options(session, node)
        try:
            hint = hint_text(options) if options else ""
            return query_frame(session, f"SELECT * FROM {quote_name(table)}{hint}", streaming)
        except (ExecutionError, SqlParseError) as exc:
            raise PlanError(f"node {node.id}: cannot read {'.'.join(table)}: {exc}") from None

    def values(node: Node, relation: str) -> tuple[DataFrame, Resolution]:
        try:
            source = resolve.values_stream(session.spark, relation)
        except Exception as exc:
            message = str(exc).strip().splitlines()[0]
            raise PlanError(f"node {node.id}: cannot read its tuples: {message}") from None
        return source.frame, Resolution(relation, sources=[source])

    return build_frames(plan, scan, values)


def insert_plans(session: Session, plan: Plan, runtime: RuntimeOptions) -> list[InsertPlan]:
    """One prepared INSERT per sink of ``plan``, to submit as one job."""
    check_sinks(plan)
    frames = run_frames(session, plan, runtime)
    resolution = _combined(frames)
    spark = session.spark
    temporary = session.context.temporary_tables
    prepared = []
    updating = frames.updating
    for sink in plan.sinks():
        source = plan.inputs(sink.id)[0]
        frame = frames.frames[source]
        target = sink.table_name()
        definition = resolve.lookup(spark, target, temporary)
        if definition is None and not spark.catalog.tableExists(quote_name(target)):
            raise PlanError(f"node {sink.id}: the sink table {'.'.join(target)} does not exist")
        options = _table_options(session, sink)
        if definition is not None and options:
            definition = replace(definition, options={**definition.options, **options})
            try:
                connectors.sink_kind(definition)
            except ExecutionError as exc:
                raise PlanError(f"node {sink.id}: {exc}") from None
        if source not in updating:
            frame = frame.drop(KIND_COLUMN)
        prepared.append(
            InsertPlan(plan.statement, frame, target, sink=definition, resolution=resolution)
        )
    return prepared


# -- explaining ------------------------------------------------------------------------------


def explain(plan: Plan, uri: str) -> str:
    """The operator graph from each sink down, with every state's TTL and policy."""
    lines = [
        f"== Compiled plan '{shown_uri(uri)}' (plan version {plan.version}"
        + (f", compiled by sparkgate {plan.gateway_version}" if plan.gateway_version else "")
        + ") ==",
    ]
    if plan.statement:
        lines += ["", plan.statement.strip(), ""]
    updating = updating_nodes(plan)

    def draw(node_id: int, depth: int) -> None:
        node = plan.node(node_id)
        pad = "   " * depth
        mark = "+- " if depth else ""
        changes = "updates" if node_id in updating else "insert-only"
        lines.append(f"{pad}{mark}[{node.id}] {node.description or node.type}  <{changes}>")
        for spec in node.state or ():
            lines.append(f"{pad}{'   ' if depth else ''}   state[{spec.index}] {spec.describe()}")
        for source in plan.inputs(node_id):
            draw(source, depth + 1)

    for sink in plan.sinks():
        draw(sink.id, 0)
    return "\n".join(lines)
