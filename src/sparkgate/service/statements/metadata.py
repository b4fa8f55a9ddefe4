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
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from sparkgate.api.results import ResultKind
from sparkgate.api.types import BOOLEAN, STRING, LogicalType, ResultSchema, TypeRoot
from sparkgate.service.catalog import list_catalogs, quote_name
from sparkgate.service.operation.operation import Execution
from sparkgate.service.result.fetcher import ResultTraits
from sparkgate.service.spark.jobs import to_execution_error
from sparkgate.service.spark.types import to_result_schema
from sparkgate.service.statements.kinds import (
    DescribeTable,
    MetadataQuery,
    ShowCatalogs,
    ShowCreateTable,
    ShowCurrentCatalog,
    ShowCurrentDatabase,
    ShowDatabases,
    ShowFunctions,
    ShowModules,
    ShowTables,
)
from sparkgate.service.statements.results import table_result
from sparkgate.service.streaming.connectors import batch_frame, masked_options
from sparkgate.service.streaming.ddl import TableDefinition
from sparkgate.service.streaming.resolve import lookup

if TYPE_CHECKING:
    from sparkgate.service.session.session import Session

__all__ = [
    "HIVESERVER2",
    "describe_table",
    "flink_ddl",
    "flink_literal",
    "flink_shapes",
    "show_catalogs",
    "show_create_table",
    "show_current_catalog",
    "show_current_database",
    "show_databases",
    "show_functions",
    "show_modules",
    "show_tables",
    "table_result_of",
]

log = logging.getLogger(__name__)

HIVESERVER2 = "hiveserver2"  # the endpoint id whose sessions get Spark's shapes

_DESCRIBE_COLUMNS = ("name", "type", "null", "key", "extras", "watermark")


def flink_shapes(session: Session) -> bool:
    """Whether the session's protocol reads Flink's result columns."""
    version = session.environment.endpoint_version
    return version is None or version.endpoint != HIVESERVER2


# Each function below answers one form, or returns None for Spark's own answer.


def show_current_catalog(session: Session, _statement: ShowCurrentCatalog) -> Execution:
    return table_result(["current catalog name"], [[session.spark.catalog.currentCatalog()]])


def show_current_database(session: Session, _statement: ShowCurrentDatabase) -> Execution | None:
    if not flink_shapes(session):
        return None
    return table_result(["current database name"], [[session.spark.catalog.currentDatabase()]])


def show_modules(_session: Session, statement: ShowModules) -> Execution:
    # Spark has one function namespace: Flink's `core` module, always used.
    if statement.full:
        return _typed_result((("module name", STRING), ("used", BOOLEAN)), [["core", True]])
    return table_result(["module name"], [["core"]])


def show_catalogs(session: Session, statement: ShowCatalogs) -> Execution | None:
    """Every catalog, loaded or not: Spark's own SHOW CATALOGS lists only the
    ones a statement used, and CREATE CATALOG's are loaded on first use."""
    if [word.upper() for word in statement.text.rstrip("; \n").split()] != ["SHOW", "CATALOGS"]:
        return _renamed(session, statement, "catalog name")  # LIKE: Spark's pattern
    try:
        names = list_catalogs(session.spark)
    except Exception as exc:
        raise to_execution_error(exc) from exc
    column = "catalog name" if flink_shapes(session) else "catalog"
    return table_result([column], [[name] for name in sorted(names)])


def show_databases(session: Session, statement: ShowDatabases) -> Execution | None:
    return _renamed(session, statement, "database name")


def show_functions(session: Session, statement: ShowFunctions) -> Execution | None:
    return _renamed(session, statement, "function name")


def _collect(session: Session, text: str) -> tuple[list[str], list[tuple[object, ...]]]:
    try:
        df = session.spark.sql(text)
        return list(df.columns), [tuple(row) for row in df.collect()]
    except Exception as exc:
        raise to_execution_error(exc) from exc


def _renamed(session: Session, statement: MetadataQuery, name: str) -> Execution | None:
    """Spark's one-column listing under Flink's column name."""
    if not flink_shapes(session):
        return None
    _, rows = _collect(session, statement.text)
    return table_result([name], [[str(row[0])] for row in rows])


def show_tables(session: Session, statement: ShowTables) -> Execution | None:
    """SHOW TABLES / SHOW VIEWS: Spark lists connector tables as views; they are tables."""
    flink = flink_shapes(session)
    like = statement.like
    if not flink:
        if not statement.views:
            return None
        columns, rows = _collect(session, statement.text)
        rows = [row for row in rows if not _is_connector(session, row)]
        return table_result_of(session, columns, rows)
    if like is not None and not like.sql:
        return None  # Spark's own pattern syntax: Spark's answer
    # Flink's LIKE is SQL's (% and _); Spark's is its own: filter here.
    listing = "SHOW VIEWS" if statement.views else "SHOW TABLES"
    if statement.database:
        listing += f" IN {quote_name(statement.database)}"
    _, rows = _collect(session, listing)
    if statement.views:
        rows = [row for row in rows if not _is_connector(session, row)]
    names = sorted({str(row[1]) for row in rows if like is None or like.matches(str(row[1]))})
    column = "view name" if statement.views else "table name"
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


def _definition(session: Session, name: tuple[str, ...]) -> TableDefinition | None:
    try:
        return lookup(session.spark, name, session.context.temporary_tables)
    except Exception:
        log.debug("connector lookup of %s failed", name, exc_info=True)
        return None


def show_create_table(session: Session, statement: ShowCreateTable) -> Execution | None:
    flink = flink_shapes(session)
    column = "result" if flink else "createtab_stmt"
    definition = _definition(session, statement.table)
    if definition is not None:
        return table_result([column], [[flink_ddl(definition)]])
    if not flink:
        return None
    _, rows = _collect(session, statement.text)
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
            source = (
                "" if column.metadata == column.name else f" FROM {flink_literal(column.metadata)}"
            )
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
        text += f"COMMENT {flink_literal(definition.comment)}\n"
    if definition.partition_keys:
        partitions = ", ".join(quote_name((k,)) for k in definition.partition_keys)
        text += f"PARTITIONED BY ({partitions})\n"
    options = masked_options(definition.options)
    text += "WITH (\n"
    text += ",\n".join(f"  {flink_literal(k)} = {flink_literal(v)}" for k, v in options.items())
    return text + "\n)\n"


def _qualified(name: tuple[str, ...]) -> tuple[str, ...]:
    # Stored definitions are named (database, table) of the session catalog.
    return ("spark_catalog", *name) if len(name) == 2 else name


def flink_literal(text: str) -> str:
    """A string literal as Flink's DDL prints it (quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


def _type_text(declared: str | None) -> str:
    return " ".join((declared or "").split()).upper()


def describe_table(session: Session, statement: DescribeTable) -> Execution | None:
    """DESCRIBE [TABLE] t, DESC t, SHOW COLUMNS FROM t: Flink's columns.

    In a HiveServer2 session only a connector table's DESCRIBE is answered
    here, in Spark's columns: Spark would describe the stored view, which
    lacks the computed and metadata columns.
    """
    flink = flink_shapes(session)
    if not flink and statement.columns:
        return None
    definition = _definition(session, statement.table)
    materialized = None if statement.columns else _materialized_rows(session, statement.table)
    if not flink:
        if definition is not None:
            return _spark_describe(session, definition)
        if materialized is None:
            return None
        columns, spark_rows = _collect(session, statement.text)
        extra = [[label, value, None] for label, value in materialized]
        return table_result(columns, [[*map(_text, row)] for row in spark_rows] + extra)
    if definition is not None:
        rows = _connector_columns(session, definition)
    else:
        rows = _spark_columns(session, statement.table)
    types = (STRING, STRING, BOOLEAN, STRING, STRING, STRING)
    like = statement.like
    rows = [row for row in rows if like is None or like.matches(str(row[0]))]
    if materialized is not None and like is None:
        rows += [[label, value, None, None, None, None] for label, value in materialized]
    return _typed_result(tuple(zip(_DESCRIBE_COLUMNS, types, strict=True)), rows)


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _materialized_rows(session: Session, name: tuple[str, ...]) -> list[tuple[str, str]] | None:
    """A materialized table's freshness, refresh mode, status and handler (FLIP-435),
    the rows DESCRIBE adds after its columns; None for any other table."""
    manager = session.context.materialized
    if manager is None:
        return None
    try:
        table = manager.read(session.spark, manager.identifier(session.spark, name))
    except Exception:
        log.debug("no materialized table %s", name, exc_info=True)
        return None
    if table is None:
        return None
    return [
        ("freshness", str(table.freshness)),
        ("refresh mode", table.mode.value),
        ("refresh status", table.status.value),
        # One line: a table cell (Flink's summaries span lines).
        ("refresh handler", " ".join((table.handler_description or "").split())),
    ]


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
                    ""
                    if column.metadata == column.name
                    else f" FROM {flink_literal(column.metadata)}"
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
