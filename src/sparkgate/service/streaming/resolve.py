"""Find the connector tables a statement reads, and swap in the gateway's frames.

Spark's parser says which tables a statement reads (see
:mod:`sparkgate.service.spark.plans`), ``STREAM(t)`` included, and where in the
text each is named. Names that are connector tables are replaced there by
temporary views over the frames the gateway built (batch or streaming, with
computed columns and watermark), which are dropped again once Spark has
analysed the statement: the analysed plan holds the frames themselves.

Lookups go to the metastore once per name; the answers are cached until the
gateway runs any DDL (:func:`invalidate`). A temporary connector table is a
temporary view of its session (so it shadows tables and lists as Spark's temporary
views do) whose definition the gateway keeps beside it, in the session's
:attr:`~sparkgate.service.session.context.SessionContext.temporary_tables`:
the functions here take that mapping, they keep nothing per session themselves.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import uuid
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from sparkgate.service.catalog import quote_name
from sparkgate.service.catalogs.objects import CatalogObjects, KeptFunction, KeptView, locate
from sparkgate.service.catalogs.spark import qualified_name
from sparkgate.service.spark.plans import (
    function_spans,
    parse_statement,
    read_spans,
    scala_strings,
    stateless_query,
)
from sparkgate.service.streaming.connectors import (
    DEFINITION_PROPERTY,
    Source,
    batch_frame,
    check_readable,
    stream_frame,
)
from sparkgate.service.streaming.ddl import TableDefinition
from sparkgate.sql.distinct_counts import distinct_counts
from sparkgate.sql.dynamic_options import hint_after, without_hints
from sparkgate.sql.quoting import quote_identifier, quote_string

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "BATCH",
    "COMPILED",
    "QUERY",
    "Reading",
    "Reference",
    "Resolution",
    "TemporaryTable",
    "ValuesReading",
    "forget_temporary",
    "invalidate",
    "kept_functions",
    "lookup",
    "provider",
    "register_temporary",
    "resolved",
    "table_references",
]

_SESSION_CATALOG = "spark_catalog"
_STREAMABLE_PROVIDERS = frozenset({"parquet", "orc", "json", "csv", "text", "avro", "delta"})

# Process-wide on purpose: it holds the shared metastore's answers, keyed by
# (database, table), and :func:`invalidate` drops entries by name after any DDL.
_cache: dict[tuple[str, str], _Entry] = {}
_cache_lock = threading.Lock()


@dataclass(frozen=True)
class Reference:
    """A table the statement reads; ``stream`` when read as ``STREAM(t)``."""

    name: tuple[str, ...]
    stream: bool = False


def table_references(text: str, spark: SparkSession) -> list[Reference]:
    """The tables ``text`` reads, by Spark's parser (a WITH clause's names are not
    tables, nor are a function's arguments); none when Spark cannot parse it."""
    plan = parse_statement(spark, text)
    if plan is None:
        return []
    return [Reference(read.name, read.stream) for read in plan.reads]


def invalidate(spark: SparkSession | None = None, statement: str | None = None) -> None:
    """Forget the cached lookups ``statement`` (a DDL statement ``spark`` ran) may have
    made stale: the tables it names and the databases it creates or drops; all of
    them when the statement or its session is not given or Spark's parser cannot
    tell which names it touches.

    The cache holds the shared metastore's answers, so it is one for the process,
    keyed by database and table; call this after the statement ran, so that no
    session caches an answer from before it.
    """
    plan = None
    if spark is not None and statement:
        plan = parse_statement(spark, statement)
    if spark is None or plan is None or not (plan.names or plan.namespaces):
        with _cache_lock:
            _cache.clear()
        return
    # Names outside the session catalog qualify to None: they are never cached.
    keys = {key for key in (_qualify(spark, name) for name in plan.names) if key}
    databases = {ns[-1].lower() for ns in plan.namespaces if len(ns) <= 2}
    with _cache_lock:
        for key in list(_cache):
            if key in keys or key[0] in databases:
                del _cache[key]


@dataclass(frozen=True)
class TemporaryTable:
    """What a session keeps of one of its temporary connector tables, by the
    lower-cased name of the temporary view standing for it."""

    definition: TableDefinition
    # The view's Java plan: a view replaced under the same name is not ours any more.
    plan: Any


_NO_TEMPORARY: Mapping[str, TemporaryTable] = {}
_NO_FUNCTIONS: Mapping[str, tuple[str, str]] = {}


def register_temporary(
    spark: SparkSession, tables: MutableMapping[str, TemporaryTable], definition: TableDefinition
) -> None:
    """Remember, in the session's ``tables``, the temporary connector table behind
    the temporary view just created in ``spark``."""
    view = definition.name[-1]
    plan = spark._jsparkSession.sessionState().catalog().getTempView(view).get()
    tables[view.lower()] = TemporaryTable(definition, plan)


def forget_temporary(tables: MutableMapping[str, TemporaryTable], view: str) -> None:
    tables.pop(view.lower(), None)


def _temporary_view(
    spark: SparkSession, temporary: Mapping[str, TemporaryTable], view: str
) -> tuple[bool, _Entry]:
    """Whether a temporary view ``view`` exists, and what the gateway knows of it: its
    connector definition, or the query of a view made by SQL."""
    found = spark._jsparkSession.sessionState().catalog().getTempView(view)
    if not found.isDefined():
        return False, _NO_ENTRY
    relation = found.get()
    table = temporary.get(view.lower())
    if table is not None and table.plan.equals(relation):
        return True, _Entry(table.definition)
    # A view made from a DataFrame has no text: its plan is analysed already.
    return True, _Entry(None, view=_View.of(relation.desc()))


def _qualify(spark: SparkSession, name: tuple[str, ...]) -> tuple[str, str] | None:
    if len(name) == 3 and name[0].lower() != _SESSION_CATALOG:
        return None
    if len(name) == 3:
        return name[-2].lower(), name[-1].lower()
    if len(name) not in (1, 2):
        return None
    manager = spark._jsparkSession.sessionState().catalogManager()
    if manager.currentCatalog().name() != _SESSION_CATALOG:
        return None  # t and db.t are the current catalog's
    if len(name) == 2:
        return name[-2].lower(), name[-1].lower()
    return str(manager.currentNamespace()[0]).lower(), name[0].lower()


@dataclass(frozen=True)
class _View:
    """A Spark view's query, read again by the gateway when it reads connector
    tables (Spark would read their stored views, without computed columns)."""

    text: str
    # Where its names resolve, and its columns: Spark's and its query's.
    namespace: tuple[str, ...]
    names: tuple[str, ...]
    query_names: tuple[str, ...]

    # Kept by the gateway (its names qualified): only the gateway reads it.
    kept_here: bool = False

    @classmethod
    def kept(cls, body: str) -> _View:
        """A view kept in a catalog's objects."""
        view = KeptView.from_json(body)
        return cls(view.text, view.namespace, view.columns, view.query_columns, kept_here=True)

    @classmethod
    def of(cls, table: Any) -> _View | None:
        text = table.viewText()
        if not text.isDefined():
            return None
        return cls(
            str(text.get()),
            scala_strings(table.viewCatalogAndNamespace()),
            tuple(str(n) for n in table.schema().fieldNames()),
            scala_strings(table.viewQueryColumnNames()),
        )

    def here(self, spark: SparkSession) -> bool:
        """Its names resolve as the session's do (the current catalog and database)."""
        if self.kept_here:
            return True  # its names are qualified
        manager = spark._jsparkSession.sessionState().catalogManager()
        current = (manager.currentCatalog().name(), *(str(p) for p in manager.currentNamespace()))
        return tuple(p.lower() for p in current) == tuple(p.lower() for p in self.namespace)

    def shaped(self, frame: DataFrame) -> DataFrame:
        """``frame`` (its query's) under the view's own column names, when it has them."""
        if not self.query_names or self.query_names == self.names:
            return frame
        from pyspark.sql import functions as F

        return frame.select(
            *(
                F.col(quote_identifier(q)).alias(n)
                for q, n in zip(self.query_names, self.names, strict=True)
            )
        )


@dataclass(frozen=True)
class _Entry:
    definition: TableDefinition | None
    # The data source of a Spark table (None for views and for connector tables).
    provider: str | None = None
    # A view made by SQL (None for tables, connector tables and views made from frames).
    view: _View | None = None

    @property
    def streamable(self) -> bool:
        """Whether Spark can read the table's files as a stream (readStream.table)."""
        return self.provider in _STREAMABLE_PROVIDERS


_NO_ENTRY = _Entry(None)


def _entry(
    spark: SparkSession, name: tuple[str, ...], temporary: Mapping[str, TemporaryTable]
) -> _Entry:
    if len(name) == 1:
        shadowed, found = _temporary_view(spark, temporary, name[0])
        if shadowed:  # a temporary view shadows the table, as in Spark
            return found
    qualified = _qualify(spark, name)
    if qualified is None:
        return _kept_object(spark, name)
    with _cache_lock:
        if qualified in _cache:
            return _cache[qualified]
    catalog = spark._jsparkSession.sharedState().externalCatalog()
    entry = _NO_ENTRY
    if catalog.databaseExists(qualified[0]) and catalog.tableExists(*qualified):
        table = catalog.getTable(*qualified)
        stored = table.properties().get(DEFINITION_PROPERTY)
        if stored.isDefined():
            definition = TableDefinition.from_json(qualified, str(stored.get()))
            comment = table.comment()
            if comment.isDefined():
                definition = dataclasses.replace(definition, comment=str(comment.get()))
            entry = _Entry(definition)
        elif table.tableType().name() == "VIEW":
            entry = _Entry(None, view=_View.of(table))
        else:
            found = table.provider()
            if found.isDefined():
                entry = _Entry(None, provider=str(found.get()).lower())
    with _cache_lock:
        _cache[qualified] = entry
    return entry


def _kept_object(spark: SparkSession, name: tuple[str, ...]) -> _Entry:
    """A connector table or view the gateway keeps in another catalog (not cached:
    a lookup there is one JDBC query of an in-memory database)."""
    located = locate(spark, name)
    if located is None:
        return _NO_ENTRY
    objects, qualified = located
    kept = objects.get(qualified[1], qualified[2])
    if kept is None:
        return _NO_ENTRY
    if kept.kind == "view":
        return _Entry(None, view=_View.kept(kept.body))
    return _Entry(TableDefinition.from_json(qualified, kept.body))


def lookup(
    spark: SparkSession,
    name: tuple[str, ...],
    temporary: Mapping[str, TemporaryTable] = _NO_TEMPORARY,
) -> TableDefinition | None:
    """The connector definition stored for ``name``, or None for any other table;
    ``temporary`` is the session's temporary connector tables (a temporary view
    shadows a table of the same name either way)."""
    return _entry(spark, name, temporary).definition


def provider(
    spark: SparkSession,
    name: tuple[str, ...],
    temporary: Mapping[str, TemporaryTable] = _NO_TEMPORARY,
) -> str | None:
    """The data source of a Spark table of the session catalog (``parquet``, ...)."""
    return _entry(spark, name, temporary).provider


#: How a VALUES list is read in streaming mode (:class:`Reading`).
ValuesReading: TypeAlias = Literal["batch", "stateful", "stream"]


@dataclass(frozen=True)
class Reading:
    """How a statement in streaming mode reads what is not a table.

    ``values``: a ``VALUES`` list stays a batch relation (``"batch"``), is read
    as a stream of one row per micro-batch when the query keeps state
    (``"stateful"``: a streaming query, as Flink answers it) or always
    (``"stream"``: a compiled plan's Values node). ``distinct_as_sets``: a
    statement reading streams has its distinct counts written as sets' sizes
    (:mod:`sparkgate.sql.distinct_counts`), which Spark's streaming aggregation
    keeps; off for the plan compiler, whose operators keep distinct aggregates
    themselves.
    """

    values: ValuesReading = "batch"
    distinct_as_sets: bool = True


BATCH = Reading()
QUERY = Reading(values="stateful")
COMPILED = Reading(values="stream", distinct_as_sets=False)


@dataclass
class Resolution:
    """The rewritten text and the streaming sources the statement reads."""

    text: str
    sources: list[Source] = field(default_factory=list)
    definitions: list[TableDefinition] = field(default_factory=list)
    # The temporary view that stands for each table read, by view name.
    tables: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # The temporary view that stands for each VALUES list read as a stream, and
    # the list (Spark SQL: ``VALUES (...), ... AS t(k, v)``).
    values: dict[str, str] = field(default_factory=dict)
    # The OPTIONS hint's options of a table read with one, by view name.
    options: dict[str, dict[str, str]] = field(default_factory=dict)
    # The temporary functions that stand for kept functions it calls.
    functions: list[str] = field(default_factory=list)

    @property
    def bounded(self) -> bool:
        return bool(self.sources) and all(s.bounded for s in self.sources)

    @property
    def available_now(self) -> bool:
        """Bounded by what is there when it starts (files): Spark's availableNow trigger."""
        return self.bounded and self.bounded_rows is None

    @property
    def values_only(self) -> bool:
        """Every source is a VALUES list read row by row (:func:`values_stream`)."""
        return bool(self.sources) and all(s.values for s in self.sources)

    @property
    def bounded_rows(self) -> int | None:
        """The largest datagen row count, when every source is bounded."""
        counts = [s.rows for s in self.sources if s.rows is not None]
        return max(counts) if counts and self.bounded else None


# Views over views are read again this deep at most (Spark refuses cycles anyway).
_VIEW_DEPTH = 16


def _replaced(
    spark: SparkSession,
    temporary: Mapping[str, TemporaryTable],
    ref: Reference,
    streaming: bool,
    depth: int = 0,
) -> bool:
    """Whether the gateway supplies the frame of ``ref`` (see :func:`resolved`)."""
    entry = _entry(spark, ref.name, temporary)
    if entry.definition is not None or (streaming and entry.streamable and not ref.stream):
        return True
    return _view_read_again(spark, temporary, entry, ref, streaming, depth)


def _view_read_again(
    spark: SparkSession,
    temporary: Mapping[str, TemporaryTable],
    entry: _Entry,
    ref: Reference,
    streaming: bool,
    depth: int,
) -> bool:
    """A view whose query reads what the gateway supplies is read by the gateway too."""
    view = entry.view
    if view is None or ref.stream or depth >= _VIEW_DEPTH or not view.here(spark):
        return False
    if view.kept_here:
        return True  # Spark does not know it
    return any(
        _replaced(spark, temporary, inner, streaming, depth + 1)
        for inner in table_references(view.text, spark)
    )


@contextlib.contextmanager
def resolved(
    spark: SparkSession,
    text: str,
    *,
    temporary: Mapping[str, TemporaryTable],
    streaming: bool,
    trigger_s: float,
    reading: Reading = BATCH,
    temporary_functions: Mapping[str, tuple[str, str]] = _NO_FUNCTIONS,
    _depth: int = 0,
) -> Iterator[Resolution]:
    """Rewrite ``text`` over temporary views; they live until the block ends.

    ``temporary`` is the session's temporary connector tables, and
    ``temporary_functions`` where its temporary catalog functions live (a call
    by full name, ``c.db.f``, is of its Spark temporary function ``f``). ``reading`` says
    how VALUES lists and distinct counts are read (:class:`Reading`): a VALUES
    list read as a stream of one row per micro-batch, as Flink reads it row by
    row, makes an aggregation over it answer with updates (``-U``/``+U``) as
    Flink's. A view whose query reads connector tables is read the same way,
    from its query, so that it has their computed columns and watermarks."""
    views: list[str] = []
    pieces: list[str] = []
    last = 0
    functions: list[str] = []
    try:
        text = _kept_calls(spark, text, functions, temporary_functions)
    except BaseException:
        _drop_functions(spark, functions)
        raise
    # Spark's parser refuses Flink's OPTIONS hints after a table's name: it sees
    # the text without them, at the same offsets.
    written = text
    text, hints = without_hints(text)
    resolution = Resolution(text, functions=functions)
    try:
        plan = parse_statement(spark, text)
        values = reading.values != "batch" and streaming and plan is not None and plan.inline_tables
        refs = table_references(text, spark)
        replaced = any(_replaced(spark, temporary, ref, streaming, _depth) for ref in refs)
        stateful_only = reading.values == "stateful"
        if values and stateful_only and not replaced and stateless_query(spark, text):
            # Row by row or all at once, a query keeping no state answers the same
            # inserts: Spark runs it as a batch, without a stream's micro-batches.
            values = False
        if not values and not replaced:
            yield resolution
            return
        for span in read_spans(spark, text):
            if span.read.inline:
                if not values:
                    continue
                view = f"__sparkgate_{uuid.uuid4().hex[:12]}"
                source = values_stream(spark, text[span.start : span.end])
                source.frame.createOrReplaceTempView(view)
                views.append(view)
                resolution.sources.append(source)
                resolution.values[view] = text[span.start : span.end]
                pieces.append(text[last : span.start])
                alias = span.read.alias
                pieces.append(
                    f"{view} AS {quote_identifier(alias)}" if alias else f"(SELECT * FROM {view})"
                )
                last = span.end
                continue
            ref = Reference(span.read.name, span.read.stream)
            entry = _entry(spark, ref.name, temporary)
            definition = entry.definition
            hint = hint_after(written, span.end, hints)
            if definition is not None:
                if hint.options:
                    definition = dataclasses.replace(
                        definition, options={**definition.options, **hint.options}
                    )
                check_readable(definition)
            if definition is not None and (streaming or ref.stream):
                source = stream_frame(spark, definition, trigger_s)
            elif definition is not None:
                source = Source(batch_frame(spark, definition), bounded=True)
            elif streaming and entry.streamable and not ref.stream:
                # Streaming mode reads a Spark file table as a stream of the files there.
                source = Source(spark.readStream.table(quote_name(ref.name)), bounded=True)
            elif entry.view is not None and _view_read_again(
                spark, temporary, entry, ref, streaming, _depth
            ):
                with resolved(
                    spark,
                    entry.view.text,
                    temporary=temporary,
                    streaming=streaming,
                    trigger_s=trigger_s,
                    reading=dataclasses.replace(reading, values="batch"),
                    _depth=_depth + 1,
                ) as inner:
                    frame = entry.view.shaped(spark.sql(inner.text))
                # What the view reads is what the statement reads.
                resolution.sources.extend(inner.sources)
                resolution.definitions.extend(inner.definitions)
                resolution.tables.update(inner.tables)
                resolution.options.update(inner.options)
                source = Source(frame, bounded=inner.bounded)
            else:
                continue
            view = f"__sparkgate_{uuid.uuid4().hex[:12]}"
            source.frame.createOrReplaceTempView(view)
            views.append(view)
            resolution.tables[view] = ref.name
            if hint.options and definition is not None:
                resolution.options[view] = dict(hint.options)
            if source.frame.isStreaming and entry.view is None:
                resolution.sources.append(source)
            if definition is not None:
                resolution.definitions.append(definition)
            pieces.append(text[last : span.start])
            # Without an alias of its own, the view takes the table's name, so
            # columns qualified by it (``t.k``) still resolve.
            alias = "" if span.read.alias is not None else f" AS {quote_identifier(ref.name[-1])}"
            pieces.append(view + alias)
            last = hint.end
        if views:
            pieces.append(text[last:])
            resolution.text = "".join(pieces)
        if reading.distinct_as_sets and resolution.sources:  # read as streams
            resolution.text = distinct_counts(resolution.text)
        yield resolution
    finally:
        for view in views:
            with contextlib.suppress(Exception):
                spark.catalog.dropTempView(view)
        _drop_functions(spark, functions)


def _drop_functions(spark: SparkSession, functions: list[str]) -> None:
    for function in functions:
        with contextlib.suppress(Exception):
            spark.sql(f"DROP TEMPORARY FUNCTION IF EXISTS {quote_identifier(function)}")


def kept_functions(
    spark: SparkSession, text: str
) -> dict[tuple[str, ...], tuple[tuple[str, str, str], KeptFunction]]:
    """The functions ``text`` calls that a catalog's objects keep (Spark does not
    know them): by the name as written (lower case), their full names and what
    is kept of them. As in Flink, a built-in or temporary function comes first: a
    one-part name is a kept function's only when the session has no function of
    that name."""
    plan = parse_statement(spark, text)
    if plan is None or not plan.functions:
        return {}
    named = any(len(name) > 1 for name in plan.functions)
    current = CatalogObjects.of(spark, str(spark.catalog.currentCatalog()))
    if current is None and not named:
        return {}  # the common case, in two py4j calls
    registry = spark._jsparkSession.sessionState().catalog()
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    make, none = jvm.org.apache.spark.sql.catalyst.FunctionIdentifier, jvm.scala.Option.empty()
    kept: dict[tuple[str, ...], tuple[tuple[str, str, str], KeptFunction]] = {}
    for name in plan.functions:
        if len(name) == 1 and (
            current is None or registry.isRegisteredFunction(make(name[0], none, none))
        ):
            continue  # built-in or temporary: it comes first
        located = locate(spark, name)
        if located is None:
            continue
        objects, qualified = located
        found = objects.get(qualified[1], qualified[2], function=True)
        if found is not None:
            full = (qualified[0], found.database, found.name)
            kept[tuple(p.lower() for p in name)] = (full, KeptFunction.from_json(found.body))
    return kept


def _session_calls(
    spark: SparkSession, text: str, scopes: Mapping[str, tuple[str, str]]
) -> dict[tuple[str, ...], str]:
    """The calls in ``text`` of the session's temporary catalog functions by their
    full names (``c.db.f``): by the name as written (lower case), their Spark
    temporary function's name (``f``)."""
    plan = parse_statement(spark, text) if scopes else None
    if plan is None:
        return {}
    found: dict[tuple[str, ...], str] = {}
    for name in plan.functions:
        scope = scopes.get(name[-1].lower()) if len(name) > 1 else None
        if scope is None:
            continue
        full = qualified_name(spark, name)
        if tuple(p.lower() for p in full[:2]) == tuple(p.lower() for p in scope):
            found[tuple(p.lower() for p in name)] = name[-1]
    return found


def _kept_calls(
    spark: SparkSession, text: str, made: list[str], scopes: Mapping[str, tuple[str, str]]
) -> str:
    """``text`` calling, in place of the functions a catalog's objects keep,
    temporary functions of their classes, made here and named in ``made`` (the
    caller drops them once Spark has analysed the text); and the session's
    temporary catalog functions (``scopes``) named in full by their own names."""
    named = _session_calls(spark, text, scopes)
    kept = {n: f for n, f in kept_functions(spark, text).items() if n not in named}
    if not kept and not named:
        return text
    for name, (_, function) in kept.items():
        temporary = name[-1]
        if len(name) > 1 or temporary in made:
            temporary = f"{name[-1]}_{uuid.uuid4().hex[:8]}"
        jars = "".join(f" USING JAR {quote_string(jar)}" for jar in function.jars[:1])
        jars += "".join(f", JAR {quote_string(jar)}" for jar in function.jars[1:])
        spark.sql(
            f"CREATE TEMPORARY FUNCTION {quote_identifier(temporary)} AS "
            f"{quote_string(function.class_name)}{jars}"
        )
        made.append(temporary)
        named[name] = temporary
    pieces: list[str] = []
    last = 0
    for call in function_spans(spark, text):
        renamed = named.get(tuple(p.lower() for p in call.name))
        if renamed is None or len(call.name) == 1:
            continue
        pieces += [text[last : call.start], quote_identifier(renamed)]
        last = call.end
    return "".join(pieces) + text[last:]


_ROW = "__sparkgate_row"


def values_stream(spark: SparkSession, relation: str) -> Source:
    """The rows of a ``VALUES`` list as a stream of one row per micro-batch: a rate
    source's ticks joined to the rows by position."""
    from pyspark.sql.types import LongType, StructField, StructType

    rows = spark.sql(f"SELECT * FROM {relation}")
    collected = rows.collect()
    indexed = spark.createDataFrame(
        [(i, *row) for i, row in enumerate(collected)],
        StructType([StructField(_ROW, LongType(), False), *rows.schema.fields]),
    )
    ticks = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", 1)
        .option("numPartitions", 1)
        .load()
        .where(f"value < {len(collected)}")
    )
    frame = ticks.join(indexed, ticks["value"] == indexed[_ROW]).select(
        *(indexed[quote_identifier(name)] for name in rows.columns)
    )
    return Source(frame, bounded=True, rows=len(collected), values=True)
