"""Find the connector tables a statement reads, and swap in the gateway's frames.

Spark's parser cannot be asked which tables a statement names without
analysing it, so a small scanner over the gateway's tokens takes the names
after FROM, JOIN, TABLE and the commas of a FROM list (``STREAM(t)``
included). Names that are connector tables are replaced in the text by
temporary views over the frames the gateway built (batch or streaming, with
computed columns and watermark), which are dropped again once Spark has
analysed the statement: the analysed plan holds the frames themselves.

Lookups go to the metastore once per name; the answers are cached until the
gateway runs any DDL (:func:`invalidate`). A temporary connector table is a
temporary view of its session (so it shadows tables and lists as Spark's temporary
views do) whose definition the gateway keeps beside it.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sparkgate.service.catalog import quote_name
from sparkgate.service.streaming.connectors import (
    DEFINITION_PROPERTY,
    Source,
    batch_frame,
    stream_frame,
)
from sparkgate.service.streaming.ddl import TableDefinition
from sparkgate.sql.lexer import Token, TokenKind, dotted_name, tokenize, unquote

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "Reference",
    "Resolution",
    "forget_temporary",
    "invalidate",
    "lookup",
    "provider",
    "register_temporary",
    "resolved",
    "table_references",
]

_CLAUSE_WORDS = frozenset(
    {"SELECT", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "ON", "UNION", "WINDOW", "USING"}
)
_NOT_NAMES = frozenset({"SELECT", "LATERAL", "VALUES", "TABLE", "UNNEST", "WITH"})
_SESSION_CATALOG = "spark_catalog"
_STREAMABLE_PROVIDERS = frozenset({"parquet", "orc", "json", "csv", "text", "avro", "delta"})

_cache: dict[tuple[str, str], _Entry] = {}
_cache_lock = threading.Lock()
_temporary: weakref.WeakKeyDictionary[SparkSession, dict[str, _Temporary]] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True)
class Reference:
    """A table name in the text: ``[start, end)`` covers ``STREAM(...)`` when given."""

    name: tuple[str, ...]
    start: int
    end: int
    stream: bool = False


def _name_at(tokens: list[Token], j: int) -> tuple[tuple[str, ...], int] | None:
    if j < len(tokens) and tokens[j].kind is TokenKind.WORD and tokens[j].upper in _NOT_NAMES:
        return None
    parts, j = dotted_name(tokens, j)
    if not parts:
        return None
    if j < len(tokens) and tokens[j].kind is TokenKind.LPAREN:
        return None  # a table-valued function such as range(10)
    return parts, j


def _cte_names(tokens: list[Token]) -> set[str]:
    """Names a WITH clause defines: ``WITH [RECURSIVE] n [(cols)] AS (``, ``, n AS (``."""
    names: set[str] = set()
    in_with = False
    for i, tok in enumerate(tokens):
        if tok.kind is TokenKind.WORD and tok.upper == "WITH":
            in_with = True
        if not in_with or tok.kind not in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER):
            continue
        before = tokens[i - 1] if i else None
        if before is None or not (
            before.kind is TokenKind.COMMA or before.upper in ("WITH", "RECURSIVE")
        ):
            continue
        j = i + 1
        if j < len(tokens) and tokens[j].kind is TokenKind.LPAREN:  # a column list
            while j < len(tokens) and tokens[j].kind is not TokenKind.RPAREN:
                j += 1
            j += 1
        if (
            j + 1 < len(tokens)
            and tokens[j].upper == "AS"
            and tokens[j + 1].kind is TokenKind.LPAREN
        ):
            names.add(unquote(tok).lower())
    return names


def table_references(text: str) -> list[Reference]:
    """The table names ``text`` reads, in order; a WITH clause's own names are not tables."""
    tokens = [t for t in tokenize(text) if not t.is_comment]
    ctes = _cte_names(tokens)
    refs: list[Reference] = []
    clause: dict[int, str | None] = {0: None}
    depth = 0

    def take(j: int) -> None:
        if j >= len(tokens):
            return
        tok = tokens[j]
        if (
            tok.kind is TokenKind.WORD
            and tok.upper == "STREAM"
            and j + 1 < len(tokens)
            and tokens[j + 1].kind is TokenKind.LPAREN
        ):
            found = _name_at(tokens, j + 2)
            if found is not None and found[1] < len(tokens):
                close = tokens[found[1]]
                if close.kind is TokenKind.RPAREN:
                    refs.append(Reference(found[0], tok.start, close.end, stream=True))
            return
        found = _name_at(tokens, j)
        if found is not None and not (len(found[0]) == 1 and found[0][0].lower() in ctes):
            refs.append(Reference(found[0], tok.start, tokens[found[1] - 1].end))

    for i, tok in enumerate(tokens):
        if tok.kind is TokenKind.LPAREN:
            depth += 1
            clause[depth] = None
        elif tok.kind is TokenKind.RPAREN:
            depth = max(depth - 1, 0)
        elif tok.kind is TokenKind.WORD:
            word = tok.upper
            if word in ("FROM", "JOIN"):
                clause[depth] = "FROM"
                take(i + 1)
            elif word == "TABLE" and not (i > 0 and tokens[i - 1].upper in ("INTO", "OVERWRITE")):
                take(i + 1)
            elif word in _CLAUSE_WORDS:
                clause[depth] = word
        elif tok.kind is TokenKind.COMMA and clause.get(depth) == "FROM":
            take(i + 1)
    return refs


def invalidate() -> None:
    """Forget cached lookups: a DDL statement may have created or dropped tables."""
    with _cache_lock:
        _cache.clear()


@dataclass(frozen=True)
class _Temporary:
    definition: TableDefinition
    # The view's Java plan: a view replaced under the same name is not ours any more.
    plan: Any


def register_temporary(spark: SparkSession, definition: TableDefinition) -> None:
    """Remember the session's temporary connector table behind its temporary view."""
    view = definition.name[-1]
    plan = spark._jsparkSession.sessionState().catalog().getTempView(view).get()
    _temporary.setdefault(spark, {})[view.lower()] = _Temporary(definition, plan)


def forget_temporary(spark: SparkSession, view: str) -> None:
    _temporary.get(spark, {}).pop(view.lower(), None)


def _temporary_view(spark: SparkSession, view: str) -> tuple[bool, TableDefinition | None]:
    """Whether a temporary view ``view`` exists, and its connector definition if any."""
    found = spark._jsparkSession.sessionState().catalog().getTempView(view)
    if not found.isDefined():
        return False, None
    temporary = _temporary.get(spark, {}).get(view.lower())
    if temporary is None or not temporary.plan.equals(found.get()):
        return True, None
    return True, temporary.definition


def _qualify(spark: SparkSession, name: tuple[str, ...]) -> tuple[str, str] | None:
    if len(name) == 3 and name[0].lower() != _SESSION_CATALOG:
        return None
    if len(name) in (2, 3):
        return name[-2].lower(), name[-1].lower()
    if len(name) != 1:
        return None
    manager = spark._jsparkSession.sessionState().catalogManager()
    if manager.currentCatalog().name() != _SESSION_CATALOG:
        return None
    return str(manager.currentNamespace()[0]).lower(), name[0].lower()


@dataclass(frozen=True)
class _Entry:
    definition: TableDefinition | None
    # The data source of a Spark table (None for views and for connector tables).
    provider: str | None = None

    @property
    def streamable(self) -> bool:
        """Whether Spark can read the table's files as a stream (readStream.table)."""
        return self.provider in _STREAMABLE_PROVIDERS


_NO_ENTRY = _Entry(None)


def _entry(spark: SparkSession, name: tuple[str, ...]) -> _Entry:
    if len(name) == 1:
        shadowed, temporary = _temporary_view(spark, name[0])
        if shadowed:  # a temporary view shadows the table, as in Spark
            return _Entry(temporary)
    qualified = _qualify(spark, name)
    if qualified is None:
        return _NO_ENTRY
    with _cache_lock:
        if qualified in _cache:
            return _cache[qualified]
    catalog = spark._jsparkSession.sharedState().externalCatalog()
    entry = _NO_ENTRY
    if catalog.databaseExists(qualified[0]) and catalog.tableExists(*qualified):
        table = catalog.getTable(*qualified)
        stored = table.properties().get(DEFINITION_PROPERTY)
        if stored.isDefined():
            entry = _Entry(TableDefinition.from_json(qualified, str(stored.get())))
        else:
            found = table.provider()
            if found.isDefined() and table.tableType().name() != "VIEW":
                entry = _Entry(None, provider=str(found.get()).lower())
    with _cache_lock:
        _cache[qualified] = entry
    return entry


def lookup(spark: SparkSession, name: tuple[str, ...]) -> TableDefinition | None:
    """The connector definition stored for ``name``, or None for any other table."""
    return _entry(spark, name).definition


def provider(spark: SparkSession, name: tuple[str, ...]) -> str | None:
    """The data source of a Spark table of the session catalog (``parquet``, ...)."""
    return _entry(spark, name).provider


@dataclass
class Resolution:
    """The rewritten text and the streaming sources the statement reads."""

    text: str
    sources: list[Source] = field(default_factory=list)
    definitions: list[TableDefinition] = field(default_factory=list)

    @property
    def bounded(self) -> bool:
        return bool(self.sources) and all(s.bounded for s in self.sources)

    @property
    def bounded_rows(self) -> int | None:
        """The largest datagen row count, when every source is bounded."""
        counts = [s.rows for s in self.sources if s.rows is not None]
        return max(counts) if counts and self.bounded else None


@contextlib.contextmanager
def resolved(
    spark: SparkSession, text: str, *, streaming: bool, trigger_s: float
) -> Iterator[Resolution]:
    """Rewrite ``text`` over temporary views; they live until the block ends."""
    views: list[str] = []
    pieces: list[str] = []
    last = 0
    resolution = Resolution(text)
    try:
        for ref in table_references(text):
            entry = _entry(spark, ref.name)
            definition = entry.definition
            if definition is not None and (streaming or ref.stream):
                source = stream_frame(spark, definition, trigger_s)
            elif definition is not None:
                source = Source(batch_frame(spark, definition), bounded=True)
            elif streaming and entry.streamable and not ref.stream:
                # Streaming mode reads a Spark file table as a stream of the files there.
                source = Source(spark.readStream.table(quote_name(ref.name)), bounded=True)
            else:
                continue
            view = f"__sparkgate_{uuid.uuid4().hex[:12]}"
            source.frame.createOrReplaceTempView(view)
            views.append(view)
            if source.frame.isStreaming:
                resolution.sources.append(source)
            if definition is not None:
                resolution.definitions.append(definition)
            pieces.append(text[last : ref.start])
            pieces.append(view)
            last = ref.end
        if views:
            pieces.append(text[last:])
            resolution.text = "".join(pieces)
        yield resolution
    finally:
        for view in views:
            with contextlib.suppress(Exception):
                spark.catalog.dropTempView(view)
