"""The FLIP-91 catalog API on a session's ``SparkSession``.

Every gateway session owns its own ``SparkSession.newSession()``, so current
catalog/database, temporary views and temporary functions are per session.

Listings use Spark's ``SHOW ...`` commands rather than ``spark.catalog.list*``:
the catalog API collects its answer through a Spark job (≈300 ms for one
``listTables``), the commands answer from the driver in 15-60 ms, and
statement completion calls these on every key press. User text reaches SQL
only as backtick-quoted identifiers (:func:`quote_name`).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pyspark.errors import PySparkException

from sparkgate.api.catalog import (
    CatalogTable,
    FunctionDefinition,
    FunctionInfo,
    FunctionKind,
    ObjectIdentifier,
    TableInfo,
    TableKind,
    quote_identifier,
)
from sparkgate.api.errors import CatalogError
from sparkgate.service.spark.plans import parse_identifier
from sparkgate.service.spark.types import to_result_schema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "CONNECTOR_PROPERTY",
    "SESSION_CATALOG",
    "current_catalog",
    "current_database",
    "get_function_definition",
    "get_table",
    "list_catalogs",
    "list_databases",
    "list_system_functions",
    "list_tables",
    "list_user_defined_functions",
    "quote_name",
    "split_name",
    "system_function_names",
    "table_column_names",
]

_log = logging.getLogger(__name__)

SESSION_CATALOG = "spark_catalog"
# The table property holding a connector table's definition (Flink's WITH clause).
CONNECTOR_PROPERTY = "sparkgate.connector.definition"
_CATALOG_CONF_PREFIX = "spark.sql.catalog."
_ALL_KINDS: frozenset[TableKind] = frozenset(TableKind)


# -- names ------------------------------------------------------------------


def split_name(name: str, spark: SparkSession) -> tuple[str, ...]:
    """Split a dotted, optionally backtick-quoted name into its parts, by Spark's parser.

    ``a.`b.c`.d`` is ``("a", "b.c", "d")``; a doubled backtick inside quotes is
    one backtick. An operator's name (``+``, ``||``: no dot, no backtick) is one
    part. Malformed names raise :class:`CatalogError`.
    """
    try:
        return parse_identifier(spark, name)
    except ValueError:
        text = name.strip()
        if text and "." not in text and "`" not in text:
            return (text,)
        raise CatalogError(f"Invalid name {name!r}") from None


def quote_name(parts: Sequence[str]) -> str:
    """Backtick-quote every part: the only form in which user text reaches SQL."""
    return ".".join(quote_identifier(p) for p in parts)


# -- errors -----------------------------------------------------------------


@contextmanager
def _catalog_errors(what: str) -> Iterator[None]:
    """Turn Spark's analysis errors into :class:`CatalogError`, keeping Spark's text."""
    try:
        yield
    except PySparkException as exc:
        raise CatalogError(f"{what}: {exc.getMessage().strip()}") from exc


def _rows(spark: SparkSession, sql: str) -> list[tuple[Any, ...]]:
    _log.debug("catalog query: %s", sql)
    return [tuple(row) for row in spark.sql(sql).collect()]


# -- current catalog and database -------------------------------------------


def current_catalog(spark: SparkSession) -> str:
    return spark.catalog.currentCatalog()


def current_database(spark: SparkSession) -> str:
    return spark.catalog.currentDatabase()


# -- catalogs and databases -------------------------------------------------


def list_catalogs(spark: SparkSession) -> list[str]:
    """The session catalog, every loaded catalog and every configured one.

    Spark loads a configured catalog only when first used, and ``SHOW
    CATALOGS`` lists loaded ones only, so the ``spark.sql.catalog.<name>``
    keys are read too.
    """
    names = {SESSION_CATALOG}
    names.update(str(row[0]) for row in _rows(spark, "SHOW CATALOGS"))
    for key in spark.conf.getAll:
        if key.startswith(_CATALOG_CONF_PREFIX):
            name = key[len(_CATALOG_CONF_PREFIX) :]
            # Longer keys are options of a catalog (spark.sql.catalog.x.uri).
            if name and "." not in name:
                names.add(name)
    return sorted(names, key=lambda n: (n != SESSION_CATALOG, n.lower(), n))


def _resolve_catalog(spark: SparkSession, catalog: str) -> str:
    """The catalog's canonical name, or :class:`CatalogError`.

    Checked up front because Spark reads an unknown catalog in ``IN x`` as a
    namespace of the current catalog and would answer about something else.
    """
    if catalog == current_catalog(spark):
        return catalog  # surely exists; skips a query on completion's hot path
    known = list_catalogs(spark)
    if catalog in known:
        return catalog
    folded = [n for n in known if n.lower() == catalog.lower()]
    if len(folded) == 1:
        return folded[0]
    raise CatalogError(f"Catalog {catalog!r} does not exist (known catalogs: {', '.join(known)})")


def list_databases(spark: SparkSession, catalog: str) -> list[str]:
    catalog = _resolve_catalog(spark, catalog)
    with _catalog_errors(f"Cannot list databases of catalog {catalog!r}"):
        rows = _rows(spark, f"SHOW NAMESPACES IN {quote_identifier(catalog)}")
    return [str(row[0]) for row in rows]


# -- tables -----------------------------------------------------------------


def list_tables(
    spark: SparkSession,
    catalog: str,
    database: str,
    kinds: AbstractSet[TableKind] = _ALL_KINDS,
) -> list[TableInfo]:
    """Tables and views of ``catalog.database``, as ``SHOW TABLES`` lists them.

    Like ``SHOW TABLES``, this includes the session's temporary views (and, in
    the global-temp database, the global ones), marked ``is_temporary``.
    """
    catalog = _resolve_catalog(spark, catalog)
    namespace = quote_name((catalog, database))
    with _catalog_errors(f"Cannot list tables of {catalog}.{database}"):
        rows = _rows(spark, f"SHOW TABLES IN {namespace}")
    if not kinds:
        return []
    views = _view_names(spark, namespace) if any(not row[2] for row in rows) else set()
    # Connector tables are stored as views, but they are tables to the user.
    views -= _connector_views(spark, catalog, database, views)
    result: list[TableInfo] = []
    for row_namespace, name, temporary in rows:
        name, temporary = str(name), bool(temporary)
        if temporary:
            # Only views can be temporary; '' is the session, else global temp.
            ident = ObjectIdentifier(None, str(row_namespace) or None, name)
            kind = TableKind.VIEW
        else:
            ident = ObjectIdentifier(catalog, str(row_namespace) or database, name)
            kind = TableKind.VIEW if name in views else TableKind.TABLE
        if kind in kinds:
            result.append(TableInfo(ident, kind, temporary))
    return result


def _connector_views(
    spark: SparkSession, catalog: str, database: str, views: AbstractSet[str]
) -> set[str]:
    """Those of ``views`` that hold a connector table's definition."""
    if catalog != SESSION_CATALOG or not views:
        return set()
    external = spark._jsparkSession.sharedState().externalCatalog()
    found: set[str] = set()
    for name in views:
        try:
            if external.getTable(database, name).properties().get(CONNECTOR_PROPERTY).isDefined():
                found.add(name)
        except Exception:
            _log.debug("no metastore entry for view %s.%s", database, name, exc_info=True)
    return found


def _view_names(spark: SparkSession, namespace: str) -> set[str]:
    try:
        rows = _rows(spark, f"SHOW VIEWS IN {namespace}")
    except PySparkException:
        # A catalog without view support has no views: every entry is a table.
        _log.debug("SHOW VIEWS failed in %s", namespace, exc_info=True)
        return set()
    return {str(row[1]) for row in rows if not row[2]}


def get_table(spark: SparkSession, identifier: ObjectIdentifier) -> CatalogTable:
    """Schema and metadata of one table or view (temporary ones included)."""
    name = identifier.as_serializable_string()
    with _catalog_errors(f"Cannot resolve table or view {identifier}"):
        info = spark.catalog.getTable(name)
        struct = spark.table(name).schema
    details = _describe_json(spark, name)
    kind = (
        TableKind.VIEW
        if info.isTemporary or info.tableType in ("VIEW", "TEMPORARY")
        else TableKind.TABLE
    )
    properties = details.get("table_properties") or details.get("view_properties") or {}
    return CatalogTable(
        identifier=_table_identifier(info.catalog, info.namespace, info.name),
        kind=kind,
        columns=to_result_schema(struct).columns,
        is_temporary=info.isTemporary,
        table_type=info.tableType,
        comment=info.description or _opt_str(details.get("comment")),
        partition_keys=tuple(str(c) for c in details.get("partition_columns") or ()),
        properties={str(k): str(v) for k, v in dict(properties).items()},
        provider=_opt_str(details.get("provider")),
        location=_opt_str(details.get("location")),
        view_text=_opt_str(details.get("view_text")),
    )


def _describe_json(spark: SparkSession, name: str) -> dict[str, Any]:
    """``DESCRIBE TABLE EXTENDED ... AS JSON`` (Spark 4): provider, location and
    the rest in one driver-side call; optional, since some catalogs refuse it."""
    try:
        rows = _rows(spark, f"DESCRIBE TABLE EXTENDED {name} AS JSON")
        parsed = json.loads(str(rows[0][0])) if rows else {}
    except (PySparkException, ValueError):
        _log.debug("DESCRIBE ... AS JSON failed for %s", name, exc_info=True)
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _opt_str(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def _table_identifier(
    catalog: str | None, namespace: Sequence[str] | None, name: str
) -> ObjectIdentifier:
    database = ".".join(namespace) if namespace else None
    if catalog is None or database is None:
        # Temporary views: Spark gives no catalog (and global_temp at most).
        return ObjectIdentifier(None, database, name)
    return ObjectIdentifier(catalog, database, name)


def table_column_names(spark: SparkSession, parts: Sequence[str]) -> list[str]:
    """Column names of a table or view; analysis only, no Spark job."""
    with _catalog_errors(f"Cannot resolve table or view {'.'.join(parts)}"):
        return list(spark.table(quote_name(parts)).columns)


# -- functions --------------------------------------------------------------

# Process-wide on purpose: Spark's built-ins are the same for every session.
_system_functions: tuple[str, ...] | None = None
_system_functions_lock = threading.Lock()


def system_function_names(spark: SparkSession) -> tuple[str, ...]:
    """Spark's built-in function names, loaded once per process.

    Built-ins are the same for every session, and completion needs them on
    every key press.
    """
    global _system_functions
    with _system_functions_lock:
        if _system_functions is None:
            rows = _rows(spark, "SHOW SYSTEM FUNCTIONS")
            _system_functions = tuple(str(row[0]) for row in rows)
        return _system_functions


def list_system_functions(spark: SparkSession) -> list[FunctionInfo]:
    return [
        FunctionInfo(ObjectIdentifier(None, None, name), FunctionKind.SYSTEM, False)
        for name in system_function_names(spark)
    ]


def list_user_defined_functions(
    spark: SparkSession, catalog: str, database: str
) -> list[FunctionInfo]:
    """The session's temporary functions and the persistent ones of ``catalog.database``."""
    catalog = _resolve_catalog(spark, catalog)
    with _catalog_errors(f"Cannot list functions of {catalog}.{database}"):
        rows = _rows(spark, f"SHOW USER FUNCTIONS IN {quote_name((catalog, database))}")
    result: list[FunctionInfo] = []
    for (shown,) in rows:
        # Spark prints persistent functions qualified and temporary ones bare.
        parts = str(shown).rsplit(".", 2)
        if len(parts) == 1:
            ident, temporary = ObjectIdentifier(None, None, parts[0]), True
        elif len(parts) == 2:
            ident, temporary = ObjectIdentifier(catalog, parts[0], parts[1]), False
        else:
            ident, temporary = ObjectIdentifier(parts[0], parts[1], parts[2]), False
        result.append(FunctionInfo(ident, FunctionKind.USER_DEFINED, temporary))
    return result


def get_function_definition(spark: SparkSession, name: str) -> FunctionDefinition:
    """Describe a built-in, temporary or persistent function by bare or qualified name."""
    parts = split_name(name, spark)
    quoted = quote_name(parts)
    with _catalog_errors(f"Cannot resolve function {name}"):
        function = spark.catalog.getFunction(quoted)
        lines = [str(row[0]) for row in _rows(spark, f"DESCRIBE FUNCTION EXTENDED {quoted}")]
    persistent = function.catalog is not None
    builtin = not persistent and parts[-1].lower() in {
        n.lower() for n in system_function_names(spark)
    }
    if persistent:
        ident = _table_identifier(function.catalog, function.namespace, function.name)
    else:
        # Spark misnames qualified built-ins (system.builtin.abs is "system").
        ident = ObjectIdentifier(None, None, function.name if len(parts) == 1 else parts[-1])
    usage = next((ln[len("Usage:") :].strip() for ln in lines if ln.startswith("Usage:")), None)
    return FunctionDefinition(
        identifier=ident,
        kind=FunctionKind.SYSTEM if builtin else FunctionKind.USER_DEFINED,
        is_temporary=function.isTemporary and not builtin,
        class_name=function.className or None,
        usage=usage,
        description="\n".join(lines),
    )
