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

import dataclasses
import logging
import re
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

import pyarrow as pa

from sparkgate.api.catalog import CatalogTable, ObjectIdentifier, TableInfo, TableKind
from sparkgate.api.errors import ExecutionError
from sparkgate.api.results import ResultKind
from sparkgate.api.types import BOOLEAN, STRING, LogicalType, ResultSchema, TypeRoot
from sparkgate.service.catalog import SESSION_CATALOG, list_catalogs, quote_name
from sparkgate.service.catalogs import objects
from sparkgate.service.catalogs.spark import holds_views
from sparkgate.service.operation.operation import Execution
from sparkgate.service.result.fetcher import ResultTraits
from sparkgate.service.spark.jobs import invalid, to_execution_error
from sparkgate.service.spark.plans import scala_strings
from sparkgate.service.spark.types import to_result_schema
from sparkgate.service.statements.expanded import expanded_query
from sparkgate.service.statements.kinds import (
    DescribeDatabase,
    DescribeTable,
    LikePattern,
    MetadataQuery,
    ShowCatalogs,
    ShowCreateTable,
    ShowCurrentCatalog,
    ShowCurrentDatabase,
    ShowDatabases,
    ShowFunctions,
    ShowModules,
    ShowProcedures,
    ShowTables,
)
from sparkgate.service.statements.results import table_result
from sparkgate.service.streaming.connectors import batch_frame, flink_column, masked_options
from sparkgate.service.streaming.ddl import Column, TableDefinition
from sparkgate.service.streaming.resolve import lookup, resolved
from sparkgate.sql.flink_expression import flink_expression
from sparkgate.sql.flink_spellings import flink_precisions
from sparkgate.sql.secrets import SHOWN_HIDDEN

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    from sparkgate.service.session.session import Session

__all__ = [
    "describe_database",
    "describe_table",
    "flink_ddl",
    "flink_literal",
    "flink_path",
    "flink_shapes",
    "full_name",
    "kept_table",
    "kept_tables",
    "registry_database",
    "show_catalogs",
    "show_create_table",
    "show_current_catalog",
    "show_current_database",
    "show_databases",
    "show_functions",
    "show_modules",
    "show_procedures",
    "show_tables",
    "table_result_of",
]

log = logging.getLogger(__name__)


_DESCRIBE_COLUMNS = ("name", "type", "null", "key", "extras", "watermark")


def flink_shapes(session: Session) -> bool:
    """Whether the session's protocol reads Flink's result columns."""
    return session.flink_shapes


# Each function below answers one form, or returns None for Spark's own answer.


def show_current_catalog(session: Session, _statement: ShowCurrentCatalog) -> Execution:
    return table_result(["current catalog name"], [[session.spark.catalog.currentCatalog()]])


def show_current_database(session: Session, _statement: ShowCurrentDatabase) -> Execution | None:
    if not flink_shapes(session):
        return None
    return table_result(["current database name"], [[session.spark.catalog.currentDatabase()]])


def show_modules(session: Session, statement: ShowModules) -> Execution:
    rows = session.context.modules.rows()
    if statement.full:
        return _typed_result(
            (("module name", STRING), ("used", BOOLEAN)), [[name, used] for name, used in rows]
        )
    return table_result(["module name"], [[name] for name, used in rows if used])


def show_catalogs(session: Session, statement: ShowCatalogs) -> Execution | None:
    """Every catalog, loaded or not: Spark's own SHOW CATALOGS lists only the
    ones a statement used, and CREATE CATALOG's are loaded on first use."""
    if statement.spark_form:
        return _renamed(session, statement, "catalog name")
    try:
        names = list_catalogs(session.spark)
    except Exception as exc:
        raise to_execution_error(exc) from exc
    column = "catalog name" if flink_shapes(session) else "catalog"
    return _listing(column, sorted(names), statement.like)


def show_databases(session: Session, statement: ShowDatabases) -> Execution | None:
    if not flink_shapes(session) or statement.spark_form:
        return _renamed(session, statement, "database name")
    listing = "SHOW DATABASES"
    if statement.catalog:
        listing += f" IN {quote_name(statement.catalog)}"
    _, rows = _collect(session, listing)
    registry = session.context.catalogs
    catalog = statement.catalog[0] if statement.catalog else session.spark.catalog.currentCatalog()
    hidden = registry.hidden_namespaces(catalog) if registry is not None else frozenset()
    names = [str(row[0]) for row in rows if str(row[0]) not in hidden]
    return _listing("database name", names, statement.like)


def registry_database(session: Session, name: tuple[str, ...]) -> tuple[str, str] | None:
    """The catalog of the gateway's registry and the database ``name`` names
    (in the current catalog for one part); None for a name of more parts or a
    catalog the registry does not hold."""
    registry = session.context.catalogs
    if registry is None or len(name) > 2:
        return None
    catalog = name[0] if len(name) == 2 else session.spark.catalog.currentCatalog()
    return (catalog, name[-1]) if catalog in registry else None


def describe_database(session: Session, statement: DescribeDatabase) -> Execution | None:
    """A database whose catalog keeps its comment and properties itself
    (``generic_in_memory``), in Spark's rows; None: Spark answers."""
    registry = session.context.catalogs
    named = registry_database(session, statement.database)
    if named is None or registry is None:
        return None
    catalog, database = named
    kept = registry.namespace_metadata(catalog, database)
    if kept is None:
        return None
    _collect(session, f"DESCRIBE DATABASE {quote_name(named)}")  # it exists
    comment, properties = kept
    rows = [["Catalog Name", catalog], ["Namespace Name", database]]
    if comment is not None:
        rows.append(["Comment", comment])
    if statement.extended:
        pairs = ", ".join(f"({k},{v})" for k, v in sorted(properties.items()))
        rows.append(["Properties", f"({pairs})" if pairs else ""])
    return table_result(["info_name", "info_value"], rows)


def show_functions(session: Session, statement: ShowFunctions) -> Execution | None:
    if not flink_shapes(session) or statement.spark_form:
        return _renamed(session, statement, "function name")
    listing = "SHOW " + (f"{statement.scope} " if statement.scope else "") + "FUNCTIONS"
    if statement.database:
        listing += f" IN {quote_name(statement.database)}"
    _, rows = _collect(session, listing)
    # Spark names a user function in full (spark_catalog.db.f); Flink by its name.
    names = [str(row[0]).rsplit(".", 1)[-1] for row in rows]
    spark = session.spark
    other = _other_catalog(session, statement.database)
    listed = full_name(session, (*statement.database, "")) if statement.database else None
    here = tuple(p.lower() for p in (listed or full_name(session, ("",)))[:2])
    # A temporary catalog function is listed in its catalog and database only.
    scopes = session.context.temporary_functions
    names = [n for n in names if tuple(p.lower() for p in scopes.get(n.lower(), here)) == here]
    kept = objects.CatalogObjects.of(spark, other) if other is not None else None
    if kept is not None and (statement.scope or "").upper() != "SYSTEM":
        database = statement.database[-1] if statement.database else spark.catalog.currentDatabase()
        names += [found.name for found in kept.listed(database) if found.kind == "function"]
    return _listing("function name", sorted(names), statement.like)


def show_procedures(session: Session, statement: ShowProcedures) -> Execution:
    """Flink's SHOW PROCEDURES: a catalog without procedures has none (Spark: an error)."""
    listing = "SHOW PROCEDURES"
    if statement.database:
        listing += f" IN {quote_name(statement.database)}"
    try:
        _, rows = _collect(session, listing)
    except ExecutionError as exc:
        if not (exc.error_class or "").startswith("MISSING_CATALOG_ABILITY"):
            raise
        rows = []
    names = sorted(str(row[-1]) for row in rows)
    column = "procedure name" if flink_shapes(session) else "procedure_name"
    return _listing(column, names, statement.like)


def _listing(column: str, names: Sequence[str], like: LikePattern | None) -> Execution:
    """One column of names, in their order, filtered by SQL's LIKE."""
    kept = [name for name in dict.fromkeys(names) if like is None or like.matches(name)]
    return table_result([column], [[name] for name in kept])


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
    kept = _kept_rows(session, statement)
    if not flink:
        if not statement.views and not kept:
            return None
        rows: list[tuple[object, ...]] = []
        if statement.views and kept is not None:  # Spark lists no views there
            columns = ["namespace", "viewName", "isTemporary"]
        else:
            columns, rows = _collect(session, statement.text)
        rows = [row for row in rows if not _is_connector(session, row)]
        return table_result_of(session, columns, [*rows, *(kept or [])])
    if like is not None and not like.sql:
        return None  # Spark's own pattern syntax: Spark's answer
    # Flink's LIKE is SQL's (% and _); Spark's is its own: filter here.
    listing = "SHOW VIEWS" if statement.views else "SHOW TABLES"
    if statement.database:
        listing += f" IN {quote_name(statement.database)}"
    other = _other_catalog(session, statement.database)
    if other is not None and statement.views and not holds_views(session.spark, other)[0]:
        rows = []  # Spark refuses to list views there (MISSING_CATALOG_ABILITY)
    else:
        _, rows = _collect(session, listing)
    rows = [*rows, *(kept or [])]
    # The session's temporary tables and views are listed with the current
    # database's, as Flink's are; Spark lists them with every database of its own.
    if not _is_current(session, statement.database):
        rows = [row for row in rows if not bool(row[2])]
    elif other is not None:
        kind = "VIEWS" if statement.views else "TABLES"
        _, mine = _collect(session, f"SHOW {kind} IN {SESSION_CATALOG}.`default`")
        rows = [*rows, *(row for row in mine if bool(row[2]))]
    if statement.views:
        rows = [row for row in rows if not _is_connector(session, row)]
    names = sorted({str(row[1]) for row in rows if like is None or like.matches(str(row[1]))})
    column = "view name" if statement.views else "table name"
    return table_result([column], [[name] for name in names])


def _kept_rows(session: Session, statement: ShowTables) -> list[tuple[object, ...]] | None:
    """The connector tables and views (SHOW VIEWS: the views) the gateway keeps in
    the listed database's catalog, as Spark's rows; None: it keeps none there."""
    spark = session.spark
    other = _other_catalog(session, statement.database)
    kept = objects.CatalogObjects.of(spark, other) if other is not None else None
    if kept is None:
        return None
    database = statement.database[-1] if statement.database else spark.catalog.currentDatabase()
    return [
        (found.database, found.name, False)
        for found in kept.listed(database)
        if found.kind == "view" or (found.kind == "table" and not statement.views)
    ]


def _is_current(session: Session, database: tuple[str, ...]) -> bool:
    """Whether ``database`` (empty: the current one) is the session's current database."""
    if not database:
        return True
    catalog = session.spark.catalog
    current = (str(catalog.currentCatalog()), str(catalog.currentDatabase()))
    named = database if len(database) > 1 else (current[0], *database)
    return [p.lower() for p in named] == [p.lower() for p in current]


def _other_catalog(session: Session, database: tuple[str, ...]) -> str | None:
    """The catalog a listing of ``database`` (empty: the current one) is of, when
    it is not Spark's session catalog."""
    catalog = database[0] if len(database) > 1 else session.spark.catalog.currentCatalog()
    return None if catalog.lower() == SESSION_CATALOG else catalog


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
    shown = flink_path if flink else _as_is
    definition = _definition(session, statement.table)
    if definition is not None:
        if flink and definition.temporary:
            # Flink's temporary tables live in the current catalog and database.
            definition = dataclasses.replace(definition, name=full_name(session, definition.name))
        if statement.view:
            raise _wrong_kind("VIEW", shown(_qualified(definition.name)), "a table", "TABLE")
        return table_result([column], [[flink_ddl(definition, shown)]])
    view = _view(session, statement.table, shown)
    if statement.view:
        if view is None:
            # Not a view: Spark's SHOW CREATE TABLE says whether there is a table.
            spark_text = "SHOW CREATE TABLE " + quote_name(statement.table)
            _collect(session, spark_text)
            full = shown(full_name(session, statement.table))
            raise _wrong_kind("VIEW", full, "a table", "TABLE")
        return table_result([column], [[view]])
    if not flink:
        return None
    if view is not None:
        raise _wrong_kind("TABLE", shown(full_name(session, statement.table)), "a view", "VIEW")
    _, rows = _collect(session, statement.text)
    return table_result([column], [[str(row[0])] for row in rows])


_FLINK_FIRST = ("default_catalog", "default_database")


def flink_path(name: tuple[str, ...]) -> tuple[str, ...]:
    """A full name as Flink prints it: the session's first catalog and database
    (Spark's ``spark_catalog.default``) by Flink's names, which statements take too
    (:mod:`sparkgate.sql.flink_spellings`)."""
    if len(name) >= 3 and name[0].lower() == SESSION_CATALOG and name[1].lower() == "default":
        return (*_FLINK_FIRST, *name[2:])
    return name


def _as_is(name: tuple[str, ...]) -> tuple[str, ...]:
    return name


def full_name(session: Session, name: tuple[str, ...]) -> tuple[str, ...]:
    """``name`` with the current catalog and database in front of its missing parts."""
    spark = session.spark
    current = (spark.catalog.currentCatalog(), spark.catalog.currentDatabase())
    return (*current[: max(3 - len(name), 0)], *name)


def _wrong_kind(asked: str, name: tuple[str, ...], found: str, instead: str) -> ExecutionError:
    what = "tables" if asked == "TABLE" else "views"
    return invalid(
        f"SHOW CREATE {asked} is only supported for {what}, but {quote_name(name)} is {found}. "
        f"Please use SHOW CREATE {instead} instead."
    )


def _view(
    session: Session, name: tuple[str, ...], shown: Callable[[tuple[str, ...]], tuple[str, ...]]
) -> str | None:
    """Flink's ``SHOW CREATE VIEW`` text of the view ``name``; None when no view
    has that name (a table, a connector table, or nothing)."""
    spark = session.spark
    jss = spark._jsparkSession
    catalog = jss.sessionState().catalog()
    current = (spark.catalog.currentCatalog(), spark.catalog.currentDatabase())
    temporary = len(name) == 1 and name[0] not in session.context.temporary_tables
    found = catalog.getTempView(name[0]) if temporary else None
    if found is not None and found.isDefined():
        desc = found.get().desc()
        full = (*current, name[0])
    else:
        temporary = False
        kept = _kept_view(session, name, shown)
        if kept is not None:
            return kept
        if full_name(session, name)[0].lower() != SESSION_CATALOG or len(name) > 3:
            return None  # another catalog's: Spark answers
        database = name[-2] if len(name) > 1 else current[1]
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        identifier = jvm.org.apache.spark.sql.catalyst.TableIdentifier(
            name[-1], jvm.scala.Option.apply(database)
        )
        try:
            desc = catalog.getTableMetadata(identifier)
        except Exception:
            return None
        if str(desc.tableType().name()) != "VIEW":
            return None
        full = ("spark_catalog", database, name[-1])
    text = desc.viewText()
    if not text.isDefined():
        return None
    # The gateway's reading of the view (Spark's stored schema lacks a connector
    # table's computed columns).
    try:
        names = _frame_schema(session, name).fieldNames()
    except Exception:  # a view that no longer reads: its text is still shown
        log.debug("view %s does not read", name, exc_info=True)
        names = [str(c) for c in desc.schema().fieldNames()]
    columns = ",\n".join(f"  {quote_name((str(c),))}" for c in names)
    kind = "TEMPORARY VIEW" if temporary else "VIEW"
    ddl = f"CREATE {kind} {quote_name(shown(full))} (\n{columns}\n)\n"
    comment = desc.comment()
    if comment.isDefined():
        ddl += f"COMMENT {flink_literal(str(comment.get()))}\n"
    query = str(text.get()).strip()
    expanded = None
    if shown is flink_path:  # Flink prints the query its validator expanded
        # The view's names resolve where it was created, as Spark reads it.
        home = scala_strings(desc.viewCatalogAndNamespace()) or full[:2]
        expanded = flink_expanded(session, query, (home[0], home[1]))
    return ddl + f"AS {expanded or flink_precisions(query)}\n"


def _kept_view(
    session: Session, name: tuple[str, ...], shown: Callable[[tuple[str, ...]], tuple[str, ...]]
) -> str | None:
    """SHOW CREATE VIEW of a view a catalog's objects keep; None: no such view."""
    located = objects.locate(session.spark, name)
    found = located[0].get(*located[1][1:]) if located is not None else None
    if located is None or found is None or found.kind != "view":
        return None
    view = objects.KeptView.from_json(found.body)
    columns = ",\n".join(f"  {quote_name((c,))}" for c in view.columns)
    full = (located[1][0], found.database, found.name)
    ddl = f"CREATE VIEW {quote_name(shown(full))} (\n{columns}\n)\n"
    if view.comment is not None:
        ddl += f"COMMENT {flink_literal(view.comment)}\n"
    expanded = None
    if shown is flink_path:
        expanded = flink_expanded(session, view.query, (full[0], full[1]))
    return ddl + f"AS {expanded or flink_precisions(view.query.strip())}\n"


def flink_expanded(session: Session, query: str, home: tuple[str, str]) -> str | None:
    """``query`` as Flink's validator expands a stored query (a view's, a materialized
    table's), its names read in the ``home`` catalog and database; None for a form
    that is not expanded (:mod:`.expanded`)."""

    def table(written: tuple[str, ...]) -> tuple[tuple[str, ...], Sequence[str]]:
        qualified = (*home[: max(3 - len(written), 0)], *written)
        try:
            names = _frame_schema(session, qualified).fieldNames()
        except Exception:  # a temporary view: it is in no database
            names = _frame_schema(session, written).fieldNames()
        return flink_path(qualified), [str(c) for c in names]

    return expanded_query(session.spark, query, table)


def flink_ddl(
    definition: TableDefinition,
    shown: Callable[[tuple[str, ...]], tuple[str, ...]] = flink_path,
) -> str:
    """``CREATE TABLE`` in Flink's SHOW CREATE TABLE layout, the table's name as
    ``shown`` prints it; secrets masked."""
    keys = {k.lower() for k in definition.primary_key}
    lines = []
    for column in definition.columns:
        name = quote_name((column.name,))
        if column.expression is not None:
            line = f"  {name} AS {flink_expression(column.expression)}"
        elif column.metadata is not None:
            source = (
                "" if column.metadata == column.name else f" FROM {flink_literal(column.metadata)}"
            )
            virtual = " VIRTUAL" if column.virtual else ""
            line = f"  {name} {_ddl_type_text(column)} METADATA{source}{virtual}"
        else:
            # Key columns are NOT NULL (Flink adds it; the stored type lacks it).
            not_null = column.not_null or column.name.lower() in keys
            not_null_text = " NOT NULL" if not_null else ""
            line = f"  {name} {_ddl_type_text(column)}{not_null_text}"
        if column.comment is not None:
            line += f" COMMENT {flink_literal(column.comment)}"
        lines.append(line)
    if definition.watermark is not None:
        mark = definition.watermark
        lines.append(f"  WATERMARK FOR {quote_name((mark.column,))} AS {mark.flink_text}")
    if definition.primary_key:
        listed = ", ".join(quote_name((k,)) for k in definition.primary_key)
        constraint = quote_name((definition.constraint_name,))
        lines.append(f"  CONSTRAINT {constraint} PRIMARY KEY ({listed}) NOT ENFORCED")
    temporary = "TEMPORARY " if definition.temporary else ""
    name = quote_name(shown(_qualified(definition.name)))
    text = f"CREATE {temporary}TABLE {name} (\n" + ",\n".join(lines) + "\n)\n"
    if definition.comment:
        text += f"COMMENT {flink_literal(definition.comment)}\n"
    if definition.partition_keys:
        partitions = ", ".join(quote_name((k,)) for k in definition.partition_keys)
        text += f"PARTITIONED BY ({partitions})\n"
    options = masked_options(definition.options, SHOWN_HIDDEN)
    text += "WITH (\n"
    text += ",\n".join(f"  {flink_literal(k)} = {flink_literal(v)}" for k, v in options.items())
    return text + "\n)\n"


def _qualified(name: tuple[str, ...]) -> tuple[str, ...]:
    # Stored definitions are named (database, table) of the session catalog.
    return ("spark_catalog", *name) if len(name) == 2 else name


def flink_literal(text: str) -> str:
    """A string literal as Flink's DDL prints it (quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


# Flink's DDL spells these types with their length (LogicalType.asSerializableString).
_SERIALIZABLE = {
    "STRING": "VARCHAR(2147483647)",
    "BYTES": "VARBINARY(2147483647)",
    "INTEGER": "INT",
}


def _ddl_type_text(column: Column) -> str:
    """A declared type as Flink's SHOW CREATE TABLE prints it."""
    return re.sub(
        r"\b(STRING|BYTES|INTEGER)\b", lambda m: _SERIALIZABLE[m.group(1)], column.type_text
    )


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
    # Flink adds the comment column when a column of the table has a comment.
    names = _DESCRIBE_COLUMNS + (("comment",) if any(row[6] for row in rows) else ())
    like = statement.like
    rows = [row[: len(names)] for row in rows if like is None or like.matches(str(row[0]))]
    if materialized is not None and like is None:
        filler = [None] * (len(names) - 2)
        rows += [[label, value, *filler] for label, value in materialized]
    types = (STRING, STRING, BOOLEAN, *[STRING] * (len(names) - 3))
    return _typed_result(tuple(zip(names, types, strict=True)), rows)


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
    comments = {c.name: c.comment for c in definition.columns}
    return table_result(
        ["col_name", "data_type", "comment"],
        [[f.name, f.dataType.simpleString(), comments.get(f.name)] for f in fields],
    )


def _frame_schema(session: Session, name: tuple[str, ...]) -> StructType:
    """The columns of table or view ``name`` as the gateway reads it (batch)."""
    spark = session.spark
    with resolved(
        spark,
        f"SELECT * FROM {quote_name(name)}",
        temporary=session.context.temporary_tables,
        streaming=False,
        trigger_s=1.0,
    ) as resolution:
        return spark.sql(resolution.text).schema


def _spark_columns(session: Session, name: tuple[str, ...]) -> list[list[object]]:
    """A Spark table's or view's columns; a view over connector tables describes
    their columns as they were declared (types, NOT NULL, rowtime, proctime)."""
    try:
        struct = _frame_schema(session, name)
        schema = to_result_schema(struct)
    except Exception as exc:
        raise to_execution_error(exc) from exc
    rows: list[list[object]] = []
    for c, f in zip(schema, struct.fields, strict=True):
        type_text = c.logical_type.with_nullable(True).summary()
        nullable = c.logical_type.nullable
        declared = flink_column(f.metadata)
        if declared is not None:
            if declared.proctime:
                type_text = "TIMESTAMP_LTZ(3) *PROCTIME*"
            elif declared.type is not None:
                type_text = declared.type + (" *ROWTIME*" if declared.rowtime else "")
            # As declared (the datagen connector's values, say, are never null).
            nullable = not (declared.not_null or declared.proctime)
        comment = f.metadata.get("comment")
        rows.append([c.name, type_text, nullable, None, None, None, comment])
    return rows


def _connector_columns(session: Session, definition: TableDefinition) -> list[list[object]]:
    keys = {k.lower() for k in definition.primary_key}
    key_text = f"PRI({', '.join(definition.primary_key)})" if keys else None
    mark = definition.watermark
    computed = _computed_types(session, definition)
    rows: list[list[object]] = []
    for column in definition.columns:
        in_key = column.name.lower() in keys
        extras: str | None = None
        nullable = not (in_key or column.not_null)
        if column.is_proctime:
            type_text, nullable = "TIMESTAMP_LTZ(3) *PROCTIME*", False
            extras = f"AS {flink_expression(column.expression or '')}"
        elif column.expression is not None:
            type_text = computed.get(column.name, "")
            extras = f"AS {flink_expression(column.expression)}"
        else:
            type_text = column.type_text
            if column.metadata is not None:
                extras = "METADATA" + (
                    ""
                    if column.metadata == column.name
                    else f" FROM {flink_literal(column.metadata)}"
                )
                if column.virtual:
                    extras += " VIRTUAL"
        watermark = None
        if mark is not None and mark.column.lower() == column.name.lower():
            type_text += " *ROWTIME*"
            watermark = mark.flink_text
        key = key_text if in_key else None
        rows.append([column.name, type_text, nullable, key, extras, watermark, column.comment])
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


def kept_tables(
    spark: SparkSession, catalog: str, database: str, kinds: AbstractSet[TableKind]
) -> list[TableInfo]:
    """The connector tables and views a catalog's objects keep in ``database``
    (``generic_in_memory``), for the protocols' table listings."""
    kept = objects.CatalogObjects.of(spark, catalog)
    if kept is None:
        return []
    listed = []
    for found in kept.listed(database):
        kind = {"table": TableKind.TABLE, "view": TableKind.VIEW}.get(found.kind)
        if kind is not None and kind in kinds:
            listed.append(TableInfo(ObjectIdentifier(catalog, found.database, found.name), kind))
    return listed


def kept_table(session: Session, identifier: ObjectIdentifier) -> CatalogTable | None:
    """A connector table or view a catalog's objects keep, with its columns as the
    gateway reads it; None: not one of those."""
    name = tuple(p for p in (identifier.catalog, identifier.database, identifier.name) if p)
    located = objects.locate(session.spark, name)
    found = located[0].get(*located[1][1:]) if located is not None else None
    if located is None or found is None:
        return None
    struct = _frame_schema(session, located[1])
    view = found.kind == "view"
    comment = (
        objects.KeptView.from_json(found.body).comment
        if view
        else TableDefinition.from_json(located[1], found.body).comment
    )
    return CatalogTable(
        identifier=ObjectIdentifier(located[1][0], found.database, found.name),
        kind=TableKind.VIEW if view else TableKind.TABLE,
        columns=to_result_schema(struct).columns,
        table_type="VIEW" if view else "EXTERNAL",
        comment=comment,
    )
