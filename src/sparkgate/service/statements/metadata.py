"""SHOW and DESCRIBE statements, answered in the shape of the session's protocol.

Flink and Spark both have SHOW DATABASES / TABLES / VIEWS / FUNCTIONS /
COLUMNS, DESCRIBE and SHOW CREATE TABLE, with different result columns. The
rule (docs/statements.md): sessions of the Flink REST endpoint (and the
embedded client) get Flink's columns (``table name``; ``name, type, null,
key, extras, watermark``; ``result``), HiveServer2 sessions get Spark's,
which beeline, PyHive and dbt-spark read. Flink's statements Spark lacks
(SHOW CURRENT CATALOG, SHOW [FULL] MODULES) answer in Flink's shape for
every session.

Connector tables (``CREATE TABLE ... WITH ('connector' = ...)``) are kept as
views, but they are tables to the user in every protocol: SHOW TABLES lists
them, SHOW VIEWS does not, SHOW CREATE TABLE prints the DDL the user wrote
(secret options masked) and DESCRIBE lists its declared columns.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from sparkgate.api.results import ResultKind
from sparkgate.api.types import BOOLEAN, STRING, LogicalType, ResultSchema, TypeRoot
from sparkgate.service.catalog import quote_name
from sparkgate.service.operation.operation import Execution
from sparkgate.service.result.fetcher import ResultTraits
from sparkgate.service.spark.jobs import to_execution_error
from sparkgate.service.spark.types import to_result_schema
from sparkgate.service.statements.kinds import MetadataQuery
from sparkgate.service.statements.results import table_result
from sparkgate.service.streaming.connectors import batch_frame, masked_options
from sparkgate.service.streaming.ddl import TableDefinition
from sparkgate.service.streaming.resolve import lookup
from sparkgate.sql.lexer import Token, TokenKind, dotted_name, unquote

if TYPE_CHECKING:
    from sparkgate.service.session.session import Session

__all__ = ["HIVESERVER2", "flink_ddl", "metadata_statement"]

log = logging.getLogger(__name__)

HIVESERVER2 = "hiveserver2"  # the endpoint id whose sessions get Spark's shapes

_DESCRIBE_COLUMNS = ("name", "type", "null", "key", "extras", "watermark")
# DESCRIBE <word> ... that describe something other than a table.
_DESCRIBE_OTHER = frozenset(
    {
        "DATABASE",
        "SCHEMA",
        "NAMESPACE",
        "FUNCTION",
        "QUERY",
        "CATALOG",
        "EXTENDED",
        "FORMATTED",
        "JOB",
        "MODEL",
        "SELECT",
        "WITH",
        "VALUES",
        "FROM",
    }
)
_DATABASE_WORDS = frozenset({"DATABASES", "SCHEMAS", "NAMESPACES"})


def flink_shapes(session: Session) -> bool:
    """Whether the session's protocol reads Flink's result columns."""
    version = session.environment.endpoint_version
    return version is None or version.endpoint != HIVESERVER2


def metadata_statement(session: Session, parsed: MetadataQuery) -> Execution | None:
    """The answer to a SHOW / DESCRIBE form the gateway shapes, or None for Spark's."""
    if parsed.keyword not in ("SHOW", "DESCRIBE", "DESC"):
        return None
    tokens = list(parsed.tokens)
    words = [t.upper if t.kind is TokenKind.WORD else None for t in tokens]
    flink = flink_shapes(session)
    if parsed.keyword == "SHOW":
        return _show(session, parsed.text, tokens, words, flink)
    return _describe(session, tokens, words, 1, flink)


def _show(
    session: Session,
    text: str,
    tokens: list[Token],
    words: list[str | None],
    flink: bool,
) -> Execution | None:
    second = words[1] if len(words) > 1 else None
    spark = session.spark
    if words == ["SHOW", "CURRENT", "CATALOG"]:
        return table_result(["current catalog name"], [[spark.catalog.currentCatalog()]])
    if words == ["SHOW", "CURRENT", "DATABASE"] and flink:
        return table_result(["current database name"], [[spark.catalog.currentDatabase()]])
    if words == ["SHOW", "MODULES"]:
        # Spark has one function namespace: Flink's `core` module, always used.
        return table_result(["module name"], [["core"]])
    if words == ["SHOW", "FULL", "MODULES"]:
        return _typed_result((("module name", STRING), ("used", BOOLEAN)), [["core", True]])
    if second == "TABLES":
        return _show_relations(session, text, tokens, "table name", views=False, flink=flink)
    if second == "VIEWS":
        return _show_relations(session, text, tokens, "view name", views=True, flink=flink)
    if second == "CREATE" and len(words) > 2 and words[2] in ("TABLE", "VIEW"):
        return _show_create(session, text, tokens, flink)
    if not flink:
        return None
    if second == "CATALOGS":
        return _renamed(session, text, "catalog name")
    if second in _DATABASE_WORDS:
        return _renamed(session, text, "database name")
    if "FUNCTIONS" in words[1:3]:
        return _renamed(session, text, "function name")
    if second == "COLUMNS" and len(words) > 2 and words[2] in ("FROM", "IN"):
        return _describe(session, tokens, words, 3, flink)
    return None


def _collect(session: Session, text: str) -> tuple[list[str], list[tuple[object, ...]]]:
    try:
        df = session.spark.sql(text)
        return list(df.columns), [tuple(row) for row in df.collect()]
    except Exception as exc:
        raise to_execution_error(exc) from exc


def _renamed(session: Session, text: str, name: str) -> Execution:
    """Spark's one-column listing under Flink's column name."""
    _, rows = _collect(session, text)
    return table_result([name], [[str(row[0])] for row in rows])


def _like_filter(tokens: list[Token], at: int) -> tuple[int, Callable[[str], bool]] | None:
    """``[NOT] [I]LIKE 'pattern'`` at ``at`` (Flink's SQL LIKE), as a name filter."""
    j = at
    negate = j < len(tokens) and tokens[j].upper == "NOT"
    j += negate
    if j + 1 >= len(tokens) or tokens[j].upper not in ("LIKE", "ILIKE"):
        return None
    if tokens[j + 1].kind is not TokenKind.STRING or j + 2 != len(tokens):
        return None
    pattern = unquote(tokens[j + 1])
    regex = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    flags = re.IGNORECASE if tokens[j].upper == "ILIKE" else 0
    compiled = re.compile(regex, flags | re.DOTALL)
    return at, lambda name: (compiled.fullmatch(name) is None) == negate


def _show_relations(
    session: Session,
    text: str,
    tokens: list[Token],
    column: str,
    *,
    views: bool,
    flink: bool,
) -> Execution | None:
    """SHOW TABLES / SHOW VIEWS: Spark lists connector tables as views; they are tables."""
    keep: Callable[[str], bool] = lambda _name: True  # noqa: E731
    statement = text
    if flink:
        # Flink's LIKE is SQL's (% and _); Spark's is its own: filter here.
        start = 2
        if start < len(tokens) and tokens[start].upper in ("FROM", "IN"):
            _, start = dotted_name(tokens, start + 1)
        like = _like_filter(tokens, start)
        if like is not None:
            cut, keep = like
            statement = text[: tokens[cut].start] if cut < len(tokens) else text
        elif start != len(tokens):
            return None
    columns, rows = _collect(session, statement)
    if views:
        rows = [row for row in rows if not _is_connector(session, row)]
    if not flink:
        return table_result_of(session, columns, rows) if views else None
    names = sorted({str(row[1]) for row in rows if keep(str(row[1]))})
    return table_result([column], [[name] for name in names])


def table_result_of(
    session: Session, columns: Sequence[str], rows: Sequence[tuple[object, ...]]
) -> Execution:
    """Spark's own rows of a listing (namespace, name, isTemporary), as Spark typed them."""
    typed = ((columns[0], STRING), (columns[1], STRING), (columns[2], BOOLEAN.not_null()))
    return _typed_result(typed, [list(row) for row in rows])


def _is_connector(session: Session, row: tuple[object, ...]) -> bool:
    namespace, name, temporary = str(row[0]), str(row[1]), bool(row[2])
    parts = (name,) if temporary and not namespace else (namespace, name)
    try:
        return lookup(session.spark, parts, session.context.temporary_tables) is not None
    except Exception:
        log.debug("connector lookup of %s failed", parts, exc_info=True)
        return False


def _table_name(tokens: list[Token], start: int) -> tuple[tuple[str, ...], int] | None:
    parts, end = dotted_name(tokens, start)
    return (parts, end) if parts else None


def _definition(session: Session, name: tuple[str, ...]) -> TableDefinition | None:
    try:
        return lookup(session.spark, name, session.context.temporary_tables)
    except Exception:
        log.debug("connector lookup of %s failed", name, exc_info=True)
        return None


def _show_create(session: Session, text: str, tokens: list[Token], flink: bool) -> Execution | None:
    found = _table_name(tokens, 3)
    if found is None or found[1] != len(tokens):
        return None  # e.g. SHOW CREATE TABLE t AS SERDE: Spark's
    column = "result" if flink else "createtab_stmt"
    definition = _definition(session, found[0])
    if definition is not None:
        return table_result([column], [[flink_ddl(definition)]])
    if not flink:
        return None
    _, rows = _collect(session, text)
    return table_result([column], [[str(row[0])] for row in rows])


def flink_ddl(definition: TableDefinition) -> str:
    """``CREATE TABLE`` in Flink's SHOW CREATE TABLE layout; secrets masked."""
    keys = {k.lower() for k in definition.primary_key}
    lines = []
    for column in definition.columns:
        name = quote_name((column.name,))
        if column.expression is not None:
            lines.append(f"  {name} AS {column.expression}")
        elif column.metadata is not None:
            source = "" if column.metadata == column.name else f" FROM {_literal(column.metadata)}"
            lines.append(f"  {name} {_type_text(column.type)} METADATA{source}")
        else:
            # Key columns are NOT NULL (Flink adds it; the stored type lacks it).
            in_key = column.name.lower() in keys
            lines.append(f"  {name} {_type_text(column.type)}{' NOT NULL' if in_key else ''}")
    if definition.watermark is not None:
        mark = definition.watermark
        lines.append(f"  WATERMARK FOR {quote_name((mark.column,))} AS {mark.expression}")
    if definition.primary_key:
        listed = ", ".join(quote_name((k,)) for k in definition.primary_key)
        constraint = quote_name(("PK_" + "_".join(definition.primary_key),))
        lines.append(f"  CONSTRAINT {constraint} PRIMARY KEY ({listed}) NOT ENFORCED")
    temporary = "TEMPORARY " if definition.temporary else ""
    name = quote_name(_qualified(definition.name))
    text = f"CREATE {temporary}TABLE {name} (\n" + ",\n".join(lines) + "\n)\n"
    if definition.comment:
        text += f"COMMENT {_literal(definition.comment)}\n"
    if definition.partition_keys:
        partitions = ", ".join(quote_name((k,)) for k in definition.partition_keys)
        text += f"PARTITIONED BY ({partitions})\n"
    options = masked_options(definition.options)
    text += "WITH (\n"
    text += ",\n".join(f"  {_literal(k)} = {_literal(v)}" for k, v in options.items())
    return text + "\n)\n"


def _qualified(name: tuple[str, ...]) -> tuple[str, ...]:
    # Stored definitions are named (database, table) of the session catalog.
    return ("spark_catalog", *name) if len(name) == 2 else name


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _type_text(declared: str | None) -> str:
    return " ".join((declared or "").split()).upper()


def _describe(
    session: Session, tokens: list[Token], words: list[str | None], start: int, flink: bool
) -> Execution | None:
    """DESCRIBE [TABLE] t, DESC t, SHOW COLUMNS FROM t: Flink's columns.

    In a HiveServer2 session only a connector table's DESCRIBE is answered
    here, in Spark's columns: Spark would describe the stored view, which
    lacks the computed and metadata columns.
    """
    if not flink and start != 1:
        return None
    j = start
    if start == 1 and j < len(words) and words[j] == "TABLE" and j + 1 < len(words):
        j += 1
    if j < len(words) and words[j] in _DESCRIBE_OTHER and j + 1 < len(words):
        return None
    found = _table_name(tokens, j)
    if found is None:
        return None
    name, end = found
    keep: Callable[[str], bool] = lambda _name: True  # noqa: E731
    if end != len(tokens):
        like = _like_filter(tokens, end) if start == 3 else None
        if like is None:
            return None  # DESCRIBE t column, PARTITION (...): Spark's
        keep = like[1]
    definition = _definition(session, name)
    if not flink:
        if definition is None or end != len(tokens):
            return None
        return _spark_describe(session, definition)
    if definition is not None:
        rows = _connector_columns(session, definition)
    else:
        rows = _spark_columns(session, name)
    types = (STRING, STRING, BOOLEAN, STRING, STRING, STRING)
    return _typed_result(
        tuple(zip(_DESCRIBE_COLUMNS, types, strict=True)),
        [row for row in rows if keep(str(row[0]))],
    )


def _spark_describe(session: Session, definition: TableDefinition) -> Execution:
    """Spark's DESCRIBE columns for a connector table's declared columns."""
    try:
        fields = batch_frame(session.spark, definition).schema.fields
    except Exception as exc:
        raise to_execution_error(exc) from exc
    return table_result(
        ["col_name", "data_type", "comment"],
        [[f.name, f.dataType.simpleString(), None] for f in fields],
    )


def _spark_columns(session: Session, name: tuple[str, ...]) -> list[list[object]]:
    try:
        struct = session.spark.table(quote_name(name)).schema
        schema = to_result_schema(struct)
    except Exception as exc:
        raise to_execution_error(exc) from exc
    return [
        [
            c.name,
            c.logical_type.with_nullable(True).summary(),
            c.logical_type.nullable,
            None,
            None,
            None,
        ]
        for c in schema
    ]


def _connector_columns(session: Session, definition: TableDefinition) -> list[list[object]]:
    keys = {k.lower() for k in definition.primary_key}
    key_text = f"PRI({', '.join(definition.primary_key)})" if keys else None
    mark = definition.watermark
    computed = _computed_types(session, definition)
    rows: list[list[object]] = []
    for column in definition.columns:
        in_key = column.name.lower() in keys
        extras: str | None = None
        nullable = not in_key
        if column.is_proctime:
            type_text, nullable = "TIMESTAMP_LTZ(3) *PROCTIME*", False
            extras = f"AS {column.expression}"
        elif column.expression is not None:
            type_text = computed.get(column.name, "")
            extras = f"AS {column.expression}"
        else:
            type_text = _type_text(column.type)
            if column.metadata is not None:
                extras = "METADATA" + (
                    "" if column.metadata == column.name else f" FROM {_literal(column.metadata)}"
                )
        watermark = None
        if mark is not None and mark.column.lower() == column.name.lower():
            type_text += " *ROWTIME*"
            watermark = mark.expression
        rows.append(
            [column.name, type_text, nullable, key_text if in_key else None, extras, watermark]
        )
    return rows


def _computed_types(session: Session, definition: TableDefinition) -> dict[str, str]:
    """Types of computed columns, as Spark derives them (no job runs)."""
    if all(c.expression is None or c.is_proctime for c in definition.columns):
        return {}
    try:
        schema = to_result_schema(batch_frame(session.spark, definition).schema)
    except Exception:
        log.debug("no schema for %s", definition.name, exc_info=True)
        return {}
    return {c.name: c.logical_type.with_nullable(True).summary() for c in schema}


def _typed_result(
    columns: Sequence[tuple[str, LogicalType]], rows: Sequence[Sequence[object]]
) -> Execution:
    """A small result of STRING and BOOLEAN columns."""
    schema = ResultSchema.of(*columns)
    arrays = [
        pa.array(
            [row[i] for row in rows],
            type=pa.bool_() if logical.type_root is TypeRoot.BOOLEAN else pa.string(),
        )
        for i, (_, logical) in enumerate(columns)
    ]
    batch = pa.RecordBatch.from_arrays(arrays, names=[name for name, _ in columns])
    return Execution(
        schema, ResultTraits(result_kind=ResultKind.SUCCESS_WITH_CONTENT), [(batch, None)]
    )
