"""The structure of Spark SQL, from Spark's own parser.

The gateway needs to know which tables a statement reads (to swap in
connector tables' frames), the parts of an INSERT (to write connector and
streaming sinks itself) and the target and query of CREATE/REPLACE TABLE AS
SELECT. Rather than scanning tokens, it asks the session's parser
(``sessionState().sqlParser().parsePlan``) over py4j and walks the unresolved
plan: ``UnresolvedRelation`` nodes (their ``multipartIdentifier``, whether
read as ``STREAM(t)``, and the text span the parser recorded in ``origin``),
the names ``UnresolvedWith`` defines (not tables within their scope),
``InsertIntoStatement`` and ``CreateTableAsSelect``/``ReplaceTableAsSelect``.

This module is the one place that talks to the JVM parser. Scala values
over py4j: a ``Seq`` is read with ``size()``/``apply(i)``, an ``Option`` with
``isDefined()``/``get()``, a tuple with ``_1()``/``_2()``.

A parse costs about 2 ms and the walk about 0.05 ms per py4j call, so the
results are cached per statement text and the parser settings that can change
how the text parses (ANSI mode, double-quoted identifiers, reserved keywords).
Text Spark cannot parse yields None: Spark reports that error when it runs
the statement.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sparkgate.service.spark.confinement import (
    PathUse,
    analyzed_paths,
    needs_analysis,
    parsed_paths,
    plan_nodes,
    simple_name,
)
from sparkgate.service.spark.host_access import found_in
from sparkgate.service.spark.jvm_cache import jvm_constant, session_settings
from sparkgate.sql.flink_spellings import PRECISION_MARK, PRECISION_PREFIX
from sparkgate.sql.quoting import quote_string

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "FunctionSpan",
    "InsertPlan",
    "SelectList",
    "SessionObject",
    "StatementPlan",
    "TableAsSelect",
    "TableRead",
    "TableSpan",
    "active_session",
    "cached_statement",
    "function_spans",
    "output_ids",
    "parse_identifier",
    "parse_plan",
    "parse_statement",
    "plan_children",
    "read_spans",
    "scala_strings",
    "select_list",
    "stateless_query",
    "statement_paths",
    "statement_scope",
    "unnamed_columns",
]

# Settings that change what a text parses to (see SqlBaseParser's predicates).
_PARSER_SETTINGS = (
    ("spark.sql.ansi.enabled", "true"),
    ("spark.sql.ansi.doubleQuotedIdentifiers", "false"),
    ("spark.sql.ansi.enforceReservedKeywords", "false"),
)
# SubqueryExpression's kinds that a parsed plan holds (their plan is a query).
_SUBQUERY_EXPRESSIONS = frozenset({"scalarsubquery", "listquery", "exists", "lateralsubquery"})
_CACHE_SIZE = 512
# Process-wide on purpose: a parse depends only on the text and the parser
# settings, both in the key, so sessions share answers without seeing each other.
_cache: OrderedDict[tuple[str, tuple[str, ...]], StatementPlan | None] = OrderedDict()
_cache_lock = threading.Lock()


@dataclass(frozen=True)
class TableRead:
    """A table the statement reads (``STREAM(t)``: as a stream); ``alias`` as in FROM.

    ``inline``: a ``VALUES`` list (no name); its ``alias`` is set when the alias is
    written within it (Spark's ``FROM VALUES (1) AS t(k)``)."""

    name: tuple[str, ...]
    stream: bool = False
    alias: str | None = None
    inline: bool = False


@dataclass(frozen=True)
class TableSpan:
    """A table read and where it is named: ``text[start:end]`` (``STREAM(t)`` whole)."""

    read: TableRead
    start: int
    end: int


@dataclass(frozen=True)
class InsertPlan:
    """``INSERT INTO|OVERWRITE [TABLE] t [PARTITION (...)] [(cols)] <query>``.

    ``partition`` maps a column to its static value (Spark's string form of the
    literal) or None for a dynamic partition column. ``target_end`` is where the
    target's name ends in the text, ``query_start`` where the query begins.
    ``by_name``, ``replace_where`` and
    ``if_not_exists`` mark the forms Spark writes with semantics of its own.
    """

    target: tuple[str, ...]
    overwrite: bool
    target_end: int
    query_start: int
    partition: Mapping[str, str | None] = field(default_factory=dict)
    columns: tuple[str, ...] | None = None
    by_name: bool = False
    replace_where: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True)
class TableAsSelect:
    """``CREATE [OR REPLACE] TABLE t ... AS <query>`` / ``REPLACE TABLE t ... AS``."""

    name: tuple[str, ...]
    replace: bool
    query_start: int


@dataclass(frozen=True)
class SessionObject:
    """A session-local object a statement makes (``created``) or drops: a temporary
    view or function, a session variable or its value, the current namespace.

    ``key`` names it within its session (``view:v``, ``view:global_temp.g``,
    ``function:f``, ``variable:x``, ``variable-value:x``, ``catalog``,
    ``namespace``): making it
    again replaces it, dropping it ends it.
    """

    key: str
    created: bool


@dataclass(frozen=True)
class StatementPlan:
    """What the parser found in one statement: the tables read, in text order."""

    kind: str
    reads: tuple[TableRead, ...] = ()
    insert: InsertPlan | None = None
    table_as_select: TableAsSelect | None = None
    # Every table, view or namespace name the statement mentions (read, written,
    # created, dropped or renamed): what a DDL statement may have changed.
    names: tuple[tuple[str, ...], ...] = ()
    namespaces: tuple[tuple[str, ...], ...] = ()
    # Kinds of Spark SQL acting on the gateway's host found in the plan (host_access).
    host_statements: tuple[str, ...] = ()
    # The session-local object the statement makes or drops, if any.
    session_object: SessionObject | None = None
    # The paths it names (confinement), and whether it names tables by IDENTIFIER(),
    # whose paths only the analyzed plan shows.
    paths: tuple[PathUse, ...] = ()
    by_identifier: bool = False
    # It reads a VALUES list (streaming mode reads one as a stream, row by row).
    inline_tables: bool = False
    # The names of the functions it calls (built-in ones too), as written.
    functions: tuple[tuple[str, ...], ...] = ()


def scala_strings(seq: Any) -> tuple[str, ...]:
    """A Scala ``Seq[String]`` of the JVM, in one py4j call."""
    if seq.isEmpty():
        return ()
    # One call for the whole Seq; NUL never occurs in a parsed name.
    return tuple(str(seq.mkString("\u0000")).split("\u0000"))


# Origin(line, startPosition, startIndex, stopIndex, ...): read from one toString call.
_ORIGIN = re.compile(
    r"Origin\((?:Some\(\d+\)|None),(?:Some\(\d+\)|None),Some\((\d+)\),Some\((\d+)\),"
)


def _span(node: Any) -> tuple[int, int] | None:
    """The text ``[start, end)`` the parser made ``node`` from."""
    match = _ORIGIN.match(str(node.origin().toString()))
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)) + 1


def plan_children(node: Any) -> list[Any]:
    """A JVM plan node's children."""
    children = node.children()
    return [children.apply(i) for i in range(children.size())]


def output_ids(plan: Any) -> list[int]:
    """The expression ids of a JVM plan's output attributes, in order."""
    output = plan.output()
    return [output.apply(i).exprId().id() for i in range(output.size())]


class _SpanWalker:
    """The relations of a parsed plan with their text spans (py4j calls per node)."""

    def __init__(self, jvm: Any, root: Any) -> None:
        self._subqueries = _subquery_pattern(jvm)
        # Most statements have no subquery: then no node needs asking.
        self._any_subquery = bool(root.containsPattern(self._subqueries))
        self.reads: list[TableSpan] = []

    def plan(
        self,
        node: Any,
        ctes: frozenset[str],
        alias: str | None = None,
        alias_span: tuple[int, int] | None = None,
    ) -> None:
        kind = str(node.nodeName())
        if kind == "UnresolvedRelation":
            self._relation(node, ctes, alias)
            return
        if kind in ("LocalRelation", "UnresolvedInlineTable"):
            span = _span(node)
            if span is not None:
                own = alias if span == alias_span else None  # `VALUES ... AS t(k)` within it
                self.reads.append(TableSpan(TableRead((), alias=own, inline=True), *span))
            return
        if kind == "UnresolvedWith":
            self._with(node, ctes)
            return
        if kind == "SubqueryAlias":
            alias, alias_span = str(node.alias()), _span(node)
        elif kind != "NamedStreamingRelation":
            alias = None
        for child in plan_children(node):
            self.plan(child, ctes, alias, alias_span)
        if self._any_subquery and node.containsPattern(self._subqueries):
            expressions = node.expressions()
            for i in range(expressions.size()):
                self._expression(expressions.apply(i), ctes)

    def _relation(self, node: Any, ctes: frozenset[str], alias: str | None) -> None:
        name = scala_strings(node.multipartIdentifier())
        if len(name) == 1 and name[0].lower() in ctes:
            return
        span = _span(node)
        if span is not None:
            read = TableRead(name, bool(node.isStreaming()), alias)
            self.reads.append(TableSpan(read, span[0], span[1]))

    def _with(self, node: Any, ctes: frozenset[str]) -> None:
        relations = node.cteRelations()
        recursive = bool(node.allowRecursion())
        scope = set(ctes)
        for i in range(relations.size()):
            pair = relations.apply(i)
            name = str(pair._1()).lower()
            # A CTE sees the ones before it (and itself when RECURSIVE).
            inner = frozenset(scope | {name}) if recursive else frozenset(scope)
            self.plan(pair._2().child(), inner)
            scope.add(name)
        self.plan(node.child(), frozenset(scope))

    def _expression(self, expr: Any, ctes: frozenset[str]) -> None:
        if not expr.containsPattern(self._subqueries):
            return
        if str(expr.nodeName()).lower() in _SUBQUERY_EXPRESSIONS:
            self.plan(expr.plan(), ctes)
        for child in plan_children(expr):
            self._expression(child, ctes)


# JVM-wide constants (a Java enum value, a class), keyed by the py4j gateway's JVM.


def _subquery_pattern(jvm: Any) -> Any:
    """TreePattern.PLAN_EXPRESSION, a Java enum value (:mod:`.jvm_cache`)."""
    return jvm_constant(
        jvm,
        "plan-expression",
        lambda jvm: jvm.org.apache.spark.sql.catalyst.trees.TreePattern.PLAN_EXPRESSION(),
    )


# The parser settings read once per statement (``statement_scope``), by session:
# the gateway parses one text several times (checks at submit, then at run).
_scoped: ContextVar[dict[int, tuple[str, ...]] | None] = ContextVar(
    "sparkgate_parser_settings", default=None
)


@contextlib.contextmanager
def statement_scope() -> Iterator[None]:
    """Within the block (one statement's checks or run, on one thread), the parser
    settings are read from the JVM once per session, not at every parse."""
    if _scoped.get() is not None:  # within a statement's scope already
        yield
        return
    token = _scoped.set({})
    try:
        yield
    finally:
        _scoped.reset(token)


def _settings(spark: SparkSession) -> tuple[str, ...]:
    scoped = _scoped.get()
    if scoped is not None and id(spark) in scoped:
        return scoped[id(spark)]
    settings = session_settings(spark)
    found = tuple(settings.get(key, default) for key, default in _PARSER_SETTINGS)
    if scoped is not None:
        scoped[id(spark)] = found
    return found


def _insert(node: Any, text: str) -> InsertPlan | None:
    table = node.table()
    span, target = _span(node), _span(table)
    if str(table.nodeName()) != "UnresolvedRelation" or span is None or target is None:
        return None
    partition: dict[str, str | None] = {}
    entries = node.partitionSpec().iterator()
    while entries.hasNext():
        entry = entries.next()
        value = entry._2()
        partition[str(entry._1())] = None if not value.isDefined() else _literal_text(value.get())
    columns = scala_strings(node.userSpecifiedCols())
    return InsertPlan(
        target=scala_strings(table.multipartIdentifier()),
        overwrite=bool(node.overwrite()),
        target_end=target[1],
        query_start=_query_start(text, span[1]),
        partition=partition,
        columns=columns or None,
        by_name=bool(node.byName()),
        replace_where=bool(node.replaceCriteriaOpt().isDefined()),
        if_not_exists=bool(node.ifPartitionNotExists()),
    )


def _literal_text(value: Any) -> str:
    """A static partition value as a SQL expression: Spark keeps the literal's string."""
    return "NULL" if value is None else quote_string(str(value))


def _query_start(text: str, after: int) -> int:
    while after < len(text) and text[after].isspace():
        after += 1
    return after


_LEADING_KEYWORD = re.compile(r"(?:^|\s)(FROM|TABLE)$", re.IGNORECASE)


def _start(node: Any, text: str) -> int | None:
    """Where the text of the query ``node`` begins.

    A wrapping node's own span may start late (a Sort's is its ORDER BY), so its
    first children are asked too; the parentheses around a query and the FROM of
    ``FROM t SELECT ...`` belong to no node's span and are taken in by hand.
    """
    starts = []
    while node is not None:
        span = _span(node)
        if span is not None:
            starts.append(span[0])
        children = node.children()
        node = children.apply(0) if children.size() else None
    start = min(starts, default=None)
    while start is not None:
        before = text[:start].rstrip()
        if before.endswith("("):
            start = len(before) - 1
        elif keyword := _LEADING_KEYWORD.search(before):
            start = keyword.start(1)
        else:
            break
    return start


def _table_as_select(node: Any, text: str, replace: bool) -> TableAsSelect | None:
    name = node.name()
    query = _start(node.query(), text)
    if str(name.nodeName()) != "UnresolvedIdentifier" or query is None:
        return None
    return TableAsSelect(scala_strings(name.nameParts()), replace, query)


def _tree(nodes: list[dict[str, Any]], i: int = 0) -> tuple[_Node, int]:
    """The tree of TreeNode.toJSON's pre-order list, from ``nodes[i]``."""
    node = nodes[i]
    i += 1
    children = []
    for _ in range(int(node.get("num-children", 0))):
        child, i = _tree(nodes, i)
        children.append(child)
    return _Node(node, children), i


@dataclass
class _Node:
    fields: dict[str, Any]
    children: list[_Node]

    @property
    def kind(self) -> str:
        return str(self.fields.get("class", "")).rsplit(".", 1)[-1]


def _nested(value: Any) -> list[_Node]:
    """Trees held in a field: expressions, a subquery's plan, a CTE's definition."""
    if isinstance(value, list) and value and isinstance(value[0], dict) and "class" in value[0]:
        return [_tree(value)[0]]
    if isinstance(value, list):
        return [tree for item in value for tree in _nested(item)]
    if isinstance(value, dict) and "product-class" in value:
        return [tree for item in value.values() for tree in _nested(item)]
    return []


def _name(value: Any) -> tuple[str, ...]:
    # A Seq[String] as "[a, b]": a part holding ", " would be split (never looked up right).
    text = str(value)
    return tuple(text[1:-1].split(", ")) if text.startswith("[") and text.endswith("]") else ()


class _Reader:
    """The relations of a plan from its JSON (one py4j call), CTE names scoped."""

    def __init__(self) -> None:
        self.reads: list[TableRead] = []

    def walk(self, node: _Node, ctes: frozenset[str], alias: str | None = None) -> None:
        kind = node.kind
        if kind == "UnresolvedRelation":
            name = _name(node.fields.get("multipartIdentifier"))
            if name and not (len(name) == 1 and name[0].lower() in ctes):
                self.reads.append(TableRead(name, bool(node.fields.get("isStreaming")), alias))
            return
        if kind == "UnresolvedWith":
            self._with(node, ctes)
            return
        if kind == "SubqueryAlias":
            identifier = node.fields.get("identifier")
            alias = str(identifier["name"]) if isinstance(identifier, dict) else None
        elif kind != "NamedStreamingRelation":
            alias = None
        for child in node.children:
            self.walk(child, ctes, alias)
        for key, value in node.fields.items():
            if key not in ("class", "num-children"):
                for tree in _nested(value):
                    self.walk(tree, ctes)

    def _with(self, node: _Node, ctes: frozenset[str]) -> None:
        recursive = bool(node.fields.get("allowRecursion"))
        scope = set(ctes)
        for relation in node.fields.get("cteRelations") or []:
            name = str(relation.get("_1", "")).lower()
            inner = frozenset(scope | {name}) if recursive else frozenset(scope)
            for tree in _nested(relation.get("_2")):
                self.walk(tree, inner)
            scope.add(name)
        for child in node.children:
            self.walk(child, frozenset(scope))


@contextlib.contextmanager
def active_session(spark: SparkSession) -> Iterator[None]:
    """Make ``spark`` the JVM thread's active session for the block, then put the
    previous one back.

    Spark reads settings (the parser's, a catalog plug-in's options) from the
    active session's conf (``SQLConf.get``), not from the session asked; its
    own ``sql()`` sets it, direct calls into the session state do not.
    """
    jvm = spark.sparkContext._jvm
    sessions = jvm_constant(
        jvm, "session-class", lambda jvm: getattr(jvm, "org.apache.spark.sql.classic.SparkSession")
    )
    previous = sessions.getActiveSession()
    sessions.setActiveSession(spark._jsparkSession)
    try:
        yield
    finally:
        if previous.isDefined():
            sessions.setActiveSession(previous.get())
        else:
            sessions.clearActiveSession()


def parse_plan(spark: SparkSession, text: str) -> Any:
    """Spark's parsed (unresolved) plan of ``text``; raises Spark's parse error."""
    with active_session(spark):
        return spark._jsparkSession.sessionState().sqlParser().parsePlan(text)


def expression_refusal(spark: SparkSession, text: str) -> str | None:
    """Why ``text`` is not one Spark SQL expression free of subqueries, or None:
    a fragment a file supplies (a compiled plan's) may compute over its input,
    never read tables or files of its own."""
    try:
        with active_session(spark):
            expr = spark._jsparkSession.sessionState().sqlParser().parseExpression(text)
    except Exception:
        return "is not one Spark SQL expression"
    if expr.containsPattern(_subquery_pattern(spark.sparkContext._jvm)):
        return "holds a subquery"
    return None


def _parse(spark: SparkSession, text: str) -> Any:
    try:
        return parse_plan(spark, text)
    except Exception:
        return None  # not Spark SQL (or not valid): Spark says why when it runs it


def _analyse(spark: SparkSession, text: str) -> StatementPlan | None:
    plan = _parse(spark, text)
    if plan is None:
        return None
    rendered = str(plan.toJSON())
    nodes = json.loads(rendered)
    tree = _tree(nodes)[0]
    reader = _Reader()
    kind = tree.kind
    insert = table_as_select = None
    if kind == "InsertIntoStatement":
        insert = _insert(plan, text)
    elif kind in ("CreateTableAsSelect", "ReplaceTableAsSelect"):
        table_as_select = _table_as_select(plan, text, kind == "ReplaceTableAsSelect")
    if kind in ("InsertIntoStatement", "CreateTableAsSelect", "ReplaceTableAsSelect"):
        # The target is written, not read: only the query's (the last child's) tables count.
        reader.walk(tree.children[-1], frozenset())
    else:
        reader.walk(tree, frozenset())
    names: list[tuple[str, ...]] = []
    namespaces: list[tuple[str, ...]] = []
    _mentioned(nodes, names, namespaces)
    return StatementPlan(
        kind,
        tuple(reader.reads),
        insert,
        table_as_select,
        tuple(names),
        tuple(namespaces),
        found_in(nodes),
        _session_object(tree, names),
        tuple(parsed_paths(spark, plan, nodes)),
        needs_analysis(nodes),
        any(str(node.get("class", "")).endswith(_INLINE_TABLES) for node in nodes),
        tuple(
            dict.fromkeys(
                tuple(part.strip() for part in found.split(","))
                for found in _CALLED.findall(rendered)
            )
        ),
    )


# A function call in a plan's JSON: its name's parts, "[a, b, f]".
_CALLED = re.compile(
    r'"class":"org\.apache\.spark\.sql\.catalyst\.analysis\.UnresolvedFunction",'
    r'"num-children":\d+,"nameParts":"\[([^\]"]*)\]"'
)


@dataclass(frozen=True)
class FunctionSpan:
    """A function call's name and where it is written: ``text[start:end]``."""

    name: tuple[str, ...]
    start: int
    end: int


def function_spans(spark: SparkSession, text: str) -> tuple[FunctionSpan, ...]:
    """The functions ``text`` calls, with where each one's name is written, in
    text order. Walks the plan node by node over py4j, subqueries and WITH
    clauses too: for rewriting the calls of functions Spark does not know."""
    plan = _parse(spark, text)
    if plan is None:
        return ()
    found: list[FunctionSpan] = []
    seen: set[int] = set()

    def visit(node: Any) -> None:
        kind = str(node.nodeName())
        if kind == "UnresolvedFunction":
            span = _span(node)
            if span is not None and span[0] not in seen:
                seen.add(span[0])
                end = _name_end(text, span[0])
                found.append(FunctionSpan(scala_strings(node.nameParts()), span[0], end))
        elif kind == "UnresolvedWith":
            relations = node.cteRelations()
            for i in range(relations.size()):
                visit(relations.apply(i)._2())
        if hasattr(node, "expressions") and kind not in _EXPRESSION_LEAVES:
            try:
                expressions = node.expressions()
            except Exception:
                expressions = None
            if expressions is not None:
                for i in range(expressions.size()):
                    visit(expressions.apply(i))
        if kind.endswith(("Subquery", "Exists", "InSubquery")) or kind == "ListQuery":
            with contextlib.suppress(Exception):
                visit(node.plan())
        for child in plan_children(node):
            visit(child)

    visit(plan)
    return tuple(sorted(found, key=lambda call: call.start))


# Nodes without expressions of their own worth asking about.
_EXPRESSION_LEAVES = frozenset({"UnresolvedRelation", "UnresolvedAttribute", "Literal"})


def _name_end(text: str, start: int) -> int:
    """Where the (possibly dotted, back-quoted) name that starts at ``start`` ends."""
    i = start
    while i < len(text):
        char = text[i]
        if char == "`":
            close = text.find("`", i + 1)
            while close != -1 and text[close + 1 : close + 2] == "`":
                close = text.find("`", close + 2)
            i = len(text) if close == -1 else close + 1
        elif char.isalnum() or char in "_$." or (char.isspace() and text[i:].lstrip()[:1] == "."):
            i += 1
        else:
            break
    return i


# The parser's nodes for a VALUES list: folded to rows when it can, else unresolved.
_INLINE_TABLES = (".LocalRelation", ".UnresolvedInlineTable")

# Spark's commands that change the session's current namespace.
_NAMESPACE_COMMANDS = frozenset({"SetCatalogAndNamespace", "SetNamespaceCommand"})
_GLOBAL_TEMP = "global_temp"
_FUNCTION_COMMANDS = frozenset(
    {"CreateFunctionCommand", "CreateSQLFunctionCommand", "DropFunctionCommand"}
)


def _session_object(tree: _Node, names: list[tuple[str, ...]]) -> SessionObject | None:
    """What a statement does to its session's temporary objects (see SessionObject)."""
    kind, fields = tree.kind, tree.fields
    named = ".".join(names[0]).lower() if names else ""
    if kind == "SetCatalogCommand":
        return SessionObject("catalog", True)
    if kind in _NAMESPACE_COMMANDS:
        return SessionObject("namespace", True)
    if kind == "CreateViewCommand":
        view_type = str((fields.get("viewType") or {}).get("object", ""))
        if "TempView" not in view_type:
            return None
        view = str(fields["name"]["table"]).lower()
        scope = f"{_GLOBAL_TEMP}." if "GlobalTempView" in view_type else ""
        return SessionObject(f"view:{scope}{view}", True)
    if kind == "CreateTempViewUsing":
        view = str(fields["tableIdent"]["table"]).lower()
        scope = f"{_GLOBAL_TEMP}." if fields.get("global") else ""
        return SessionObject(f"view:{scope}{view}", True)
    if kind == "CacheTableAsSelect":
        literal = (fields.get("tempViewName") or [{}])[0]
        return SessionObject(f"view:{str(literal.get('value', '')).lower()}", True)
    if kind == "DropView" and named:
        return SessionObject(f"view:{named}", False)
    if kind in _FUNCTION_COMMANDS and fields.get("isTemp"):
        identifier = fields.get("identifier") or fields.get("name") or {}
        function = str(identifier.get("funcName", "")).lower()
        return SessionObject(f"function:{function}", kind != "DropFunctionCommand")
    if kind in ("CreateVariable", "DropVariable") and named:
        return SessionObject(f"variable:{named}", kind == "CreateVariable")
    if kind == "SetVariable" and names:
        return SessionObject("variable-value:" + ",".join(".".join(n).lower() for n in names), True)
    if kind == "SetCommand":  # SET TIME ZONE (a SET of a key is the session's property)
        return SessionObject("time-zone", True)
    return None


# Fields of plan nodes that hold a name (UnresolvedIdentifier, UnresolvedTable[OrView],
# UnresolvedRelation, UnresolvedNamespace, RenameTable's new name, ...).
_NAME_FIELDS = ("nameParts", "multipartIdentifier", "newName")


def _mentioned(value: Any, names: list[tuple[str, ...]], namespaces: list[tuple[str, ...]]) -> None:
    if isinstance(value, list):
        for item in value:
            _mentioned(item, names, namespaces)
    elif isinstance(value, dict):
        namespace = str(value.get("class", "")).endswith(".UnresolvedNamespace")
        for key in _NAME_FIELDS:
            name = _name(value.get(key)) if key in value else ()
            if name:
                (namespaces if namespace else names).append(name)
        for item in value.values():
            _mentioned(item, names, namespaces)


# Analyzed-plan nodes that keep no state in a streaming query: each row is
# answered alone, once, as an insert.
_STATELESS_NODES = frozenset(
    {"Project", "Filter", "SubqueryAlias", "LocalRelation", "OneRowRelation", "Union", "View"}
)
_LOGICAL = "org.apache.spark.sql.catalyst.plans.logical."


def stateless_query(spark: SparkSession, text: str) -> bool:
    """Whether the query ``text`` would keep no state in a streaming run (no
    aggregate, join, window, deduplication, sort, limit or subquery), by its
    analyzed plan; False when Spark cannot analyse it."""
    try:
        with active_session(spark):
            analyzed = spark.sql(text)._jdf.queryExecution().analyzed()
            nodes = json.loads(str(analyzed.toJSON()))
    except Exception:
        return False
    for node in plan_nodes(nodes):
        name = str(node.get("class", ""))
        simple = simple_name(name)
        if name.startswith(_LOGICAL) and simple not in _STATELESS_NODES:
            return False
        if simple.lower() in _SUBQUERY_EXPRESSIONS or simple == "InSubquery":
            return False
    return True


def parse_statement(spark: SparkSession, text: str) -> StatementPlan | None:
    """What Spark's parser makes of ``text``; None when it does not parse.

    About 4 ms (parse and one JSON rendering of the plan), then cached.
    """
    key = (text, _settings(spark))
    cached, found = _cached(key)
    if cached:
        return found
    found = _analyse(spark, text)
    with _cache_lock:
        _cache[key] = found
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return found


def cached_statement(spark: SparkSession, text: str) -> tuple[bool, StatementPlan | None]:
    """``(True, plan)`` when :func:`parse_statement` has ``text``'s answer cached,
    else ``(False, None)``: no parse."""
    return _cached((text, _settings(spark)))


def _cached(key: tuple[str, tuple[str, ...]]) -> tuple[bool, StatementPlan | None]:
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return True, _cache[key]
    return False, None


def read_spans(spark: SparkSession, text: str) -> tuple[TableSpan, ...]:
    """The tables ``text`` reads with where each is named, in text order.

    Walks the plan node by node over py4j (slower than :func:`parse_statement`):
    for rewriting a statement that reads tables the gateway supplies.
    """
    plan = _parse(spark, text)
    if plan is None:
        return ()
    walker = _SpanWalker(spark.sparkContext._jvm, plan)
    kind = str(plan.nodeName())
    if kind in ("InsertIntoStatement", "CreateTableAsSelect", "ReplaceTableAsSelect"):
        walker.plan(plan.query(), frozenset())
    else:
        walker.plan(plan, frozenset())
    return tuple(sorted(walker.reads, key=lambda span: span.start))


def parse_identifier(spark: SparkSession, name: str) -> tuple[str, ...]:
    """``a.`b c`.d`` as its parts, by Spark's parser; ValueError when malformed."""
    parser = spark._jsparkSession.sessionState().sqlParser()
    try:
        return scala_strings(parser.parseMultipartIdentifier(name))
    except Exception as exc:
        raise ValueError(f"Malformed name: {name!r}") from exc


def statement_paths(spark: SparkSession, text: str) -> tuple[PathUse, ...]:
    """The paths ``text`` names, from its parsed plan, and from its analyzed plan
    when it names tables with ``IDENTIFIER()`` (see :mod:`.confinement`)."""
    found = parse_statement(spark, text)
    if found is None:
        return ()
    if not found.by_identifier:
        return found.paths
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    try:
        with active_session(spark):
            mode = jvm.org.apache.spark.sql.execution.CommandExecutionMode.SKIP()
            execution = spark._jsparkSession.sessionState().executePlan(
                parse_plan(spark, text), mode
            )
            analyzed = execution.analyzed()
    except Exception:
        return found.paths  # Spark reports the statement's error when it runs it
    return found.paths + tuple(analyzed_paths(analyzed))


@dataclass(frozen=True)
class SelectList:
    """What a query's select list says of its output columns, by position."""

    #: Columns without a name of their own (an expression without an alias),
    #: named as Flink names them: ``EXPR$<position>``.
    unnamed: dict[int, str]
    #: Columns that are a cast to a timestamp of a declared precision below
    #: Spark's six (``CAST(x AS TIMESTAMP(3))``, kept by the gateway's rewrite
    #: as :data:`~sparkgate.sql.flink_spellings.PRECISION_MARK`).
    precisions: dict[int, int]


def select_list(spark: SparkSession, query: str) -> SelectList:
    """The :class:`SelectList` of ``query``'s first select list; empty when
    positions cannot be told (more than one ``*``). Raises Spark's parse error."""
    empty = SelectList({}, {})
    node = parse_plan(spark, query)
    while str(node.nodeName()) not in ("Project", "Aggregate"):
        children = plan_children(node)
        if not children:
            return empty
        node = children[0]  # a set operation's columns are its first query's
    items = node.projectList() if str(node.nodeName()) == "Project" else node.aggregateExpressions()
    expressions = [items.apply(i) for i in range(items.size())]
    kinds = [str(e.nodeName()) for e in expressions]
    stars = [i for i, kind in enumerate(kinds) if kind == "UnresolvedStar"]
    marked = PRECISION_PREFIX in query
    if ("UnresolvedAlias" not in kinds and not marked) or len(stars) > 1:
        return empty
    shift = 0
    if stars:
        width = len(spark._jsparkSession.sql(query).schema().fieldNames())
        shift = width - len(kinds)  # the columns the star adds beyond its own place
    positions = [i + shift if stars and i > stars[0] else i for i in range(len(kinds))]
    unnamed = {
        positions[i]: f"EXPR${positions[i]}" for i, k in enumerate(kinds) if k == "UnresolvedAlias"
    }
    precisions = {}
    for i, expression in enumerate(expressions) if marked else ():
        if kinds[i] not in ("Alias", "UnresolvedAlias"):
            continue  # a column, a star: no cast of its own
        precision = _declared_precision(query, expression.child())
        if precision is not None:
            precisions[positions[i]] = precision
    return SelectList(unnamed, precisions)


def _declared_precision(query: str, expression: Any) -> int | None:
    if str(expression.nodeName()) != "Cast":
        return None
    origin = expression.origin()
    if not (origin.startIndex().isDefined() and origin.stopIndex().isDefined()):
        return None
    span = query[origin.startIndex().get() : origin.stopIndex().get() + 1]
    mark = PRECISION_MARK.search(span)
    return int(mark.group(1)) if mark else None


def unnamed_columns(spark: SparkSession, query: str) -> dict[int, str]:
    """:attr:`SelectList.unnamed` of ``query``."""
    return select_list(spark, query).unnamed
