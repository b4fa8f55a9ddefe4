"""HiveServer2's metadata calls as gateway operations over the catalog API.

Each ``Get*`` call becomes an operation (``submit_operation``) whose result
has exactly the columns HiveServer2 returns for it, so JDBC/ODBC metadata
code reads them by name. Name arguments are JDBC patterns (``%`` any run,
``_`` one character, ``\\`` escapes), matched case-insensitively as Hive
does; an empty or absent pattern matches everything.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from sparkgate.api.catalog import FunctionInfo, ObjectIdentifier, TableInfo, TableKind
from sparkgate.api.errors import CatalogError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.service import GatewayService, StaticResult
from sparkgate.api.types import (
    BOOLEAN,
    INT,
    SMALLINT,
    STRING,
    TINYINT,
    LogicalType,
    ResultSchema,
    TypeRoot,
)
from sparkgate.endpoints.hiveserver2.hive_types import hive_type

__all__ = [
    "CATALOGS_SCHEMA",
    "COLUMNS_SCHEMA",
    "CROSS_REFERENCE_SCHEMA",
    "FUNCTIONS_SCHEMA",
    "PRIMARY_KEYS_SCHEMA",
    "SCHEMAS_SCHEMA",
    "TABLES_SCHEMA",
    "TABLE_TYPES",
    "TABLE_TYPES_SCHEMA",
    "TYPE_INFO_SCHEMA",
    "MetadataCalls",
    "pattern_matcher",
]

log = logging.getLogger(__name__)

Row = tuple[Any, ...]


def _schema(*columns: tuple[str, LogicalType]) -> ResultSchema:
    return ResultSchema.of(*columns)


CATALOGS_SCHEMA = _schema(("TABLE_CAT", STRING))
SCHEMAS_SCHEMA = _schema(("TABLE_SCHEM", STRING), ("TABLE_CATALOG", STRING))
TABLE_TYPES_SCHEMA = _schema(("TABLE_TYPE", STRING))
TABLES_SCHEMA = _schema(
    ("TABLE_CAT", STRING),
    ("TABLE_SCHEM", STRING),
    ("TABLE_NAME", STRING),
    ("TABLE_TYPE", STRING),
    ("REMARKS", STRING),
    ("TYPE_CAT", STRING),
    ("TYPE_SCHEM", STRING),
    ("TYPE_NAME", STRING),
    ("SELF_REFERENCING_COL_NAME", STRING),
    ("REF_GENERATION", STRING),
)
COLUMNS_SCHEMA = _schema(
    ("TABLE_CAT", STRING),
    ("TABLE_SCHEM", STRING),
    ("TABLE_NAME", STRING),
    ("COLUMN_NAME", STRING),
    ("DATA_TYPE", INT),
    ("TYPE_NAME", STRING),
    ("COLUMN_SIZE", INT),
    ("BUFFER_LENGTH", TINYINT),
    ("DECIMAL_DIGITS", INT),
    ("NUM_PREC_RADIX", INT),
    ("NULLABLE", INT),
    ("REMARKS", STRING),
    ("COLUMN_DEF", STRING),
    ("SQL_DATA_TYPE", INT),
    ("SQL_DATETIME_SUB", INT),
    ("CHAR_OCTET_LENGTH", INT),
    ("ORDINAL_POSITION", INT),
    ("IS_NULLABLE", STRING),
    ("SCOPE_CATALOG", STRING),
    ("SCOPE_SCHEMA", STRING),
    ("SCOPE_TABLE", STRING),
    ("SOURCE_DATA_TYPE", SMALLINT),
    ("IS_AUTO_INCREMENT", STRING),
)
FUNCTIONS_SCHEMA = _schema(
    ("FUNCTION_CAT", STRING),
    ("FUNCTION_SCHEM", STRING),
    ("FUNCTION_NAME", STRING),
    ("REMARKS", STRING),
    ("FUNCTION_TYPE", INT),
    ("SPECIFIC_NAME", STRING),
)
PRIMARY_KEYS_SCHEMA = _schema(
    ("TABLE_CAT", STRING),
    ("TABLE_SCHEM", STRING),
    ("TABLE_NAME", STRING),
    ("COLUMN_NAME", STRING),
    ("KEQ_SEQ", INT),  # sic: HiveServer2's column name
    ("PK_NAME", STRING),
)
CROSS_REFERENCE_SCHEMA = _schema(
    ("PKTABLE_CAT", STRING),
    ("PKTABLE_SCHEM", STRING),
    ("PKTABLE_NAME", STRING),
    ("PKCOLUMN_NAME", STRING),
    ("FKTABLE_CAT", STRING),
    ("FKTABLE_SCHEM", STRING),
    ("FKTABLE_NAME", STRING),
    ("FKCOLUMN_NAME", STRING),
    ("KEQ_SEQ", INT),
    ("UPDATE_RULE", INT),
    ("DELETE_RULE", INT),
    ("FK_NAME", STRING),
    ("PK_NAME", STRING),
    ("DEFERRABILITY", INT),
)
TYPE_INFO_SCHEMA = _schema(
    ("TYPE_NAME", STRING),
    ("DATA_TYPE", INT),
    ("PRECISION", INT),
    ("LITERAL_PREFIX", STRING),
    ("LITERAL_SUFFIX", STRING),
    ("CREATE_PARAMS", STRING),
    ("NULLABLE", SMALLINT),
    ("CASE_SENSITIVE", BOOLEAN),
    ("SEARCHABLE", SMALLINT),
    ("UNSIGNED_ATTRIBUTE", BOOLEAN),
    ("FIXED_PREC_SCALE", BOOLEAN),
    ("AUTO_INCREMENT", BOOLEAN),
    ("LOCAL_TYPE_NAME", STRING),
    ("MINIMUM_SCALE", SMALLINT),
    ("MAXIMUM_SCALE", SMALLINT),
    ("SQL_DATA_TYPE", INT),
    ("SQL_DATETIME_SUB", INT),
    ("NUM_PREC_RADIX", INT),
)

TABLE_TYPES = ("TABLE", "VIEW")

_ARROW: dict[TypeRoot, pa.DataType] = {
    TypeRoot.VARCHAR: pa.string(),
    TypeRoot.INTEGER: pa.int32(),
    TypeRoot.SMALLINT: pa.int16(),
    TypeRoot.TINYINT: pa.int8(),
    TypeRoot.BOOLEAN: pa.bool_(),
}

# java.sql.DatabaseMetaData constants
_TYPE_NULLABLE = 1
_TYPE_SEARCHABLE = 3
_TYPE_PRED_BASIC = 2
_COLUMN_NULLABLE = 1
_COLUMN_NO_NULLS = 0
_FUNCTION_NO_TABLE = 1

# (name, java type, precision, searchable, case sensitive, unsigned, radix, literal prefix)
_TYPE_INFO: tuple[tuple[str, int, int | None, int, bool, bool, int | None], ...] = (
    ("VOID", 0, None, _TYPE_SEARCHABLE, False, True, None),
    ("BOOLEAN", 16, None, _TYPE_PRED_BASIC, False, True, None),
    ("TINYINT", -6, 3, _TYPE_PRED_BASIC, False, False, 10),
    ("SMALLINT", 5, 5, _TYPE_PRED_BASIC, False, False, 10),
    ("INT", 4, 10, _TYPE_PRED_BASIC, False, False, 10),
    ("BIGINT", -5, 19, _TYPE_PRED_BASIC, False, False, 10),
    ("FLOAT", 6, 7, _TYPE_PRED_BASIC, False, False, 10),
    ("DOUBLE", 8, 15, _TYPE_PRED_BASIC, False, False, 10),
    ("STRING", 12, None, _TYPE_SEARCHABLE, True, True, None),
    ("CHAR", 1, None, _TYPE_SEARCHABLE, True, True, None),
    ("VARCHAR", 12, None, _TYPE_SEARCHABLE, True, True, None),
    ("DATE", 91, None, _TYPE_PRED_BASIC, False, True, None),
    ("TIMESTAMP", 93, None, _TYPE_PRED_BASIC, False, True, None),
    ("BINARY", -2, None, _TYPE_PRED_BASIC, False, True, None),
    ("DECIMAL", 3, 38, _TYPE_PRED_BASIC, False, False, 10),
    ("ARRAY", 2003, None, 0, False, True, None),
    ("MAP", 2000, None, 0, False, True, None),
    ("STRUCT", 2002, None, 0, False, True, None),
    ("INTERVAL_YEAR_MONTH", 1111, None, 0, False, True, None),
    ("INTERVAL_DAY_TIME", 1111, None, 0, False, True, None),
)


def static_result(schema: ResultSchema, rows: Sequence[Row]) -> StaticResult:
    """A result of ``schema`` holding ``rows`` (Python values) as one Arrow batch."""
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in schema.columns]
    arrays = [
        pa.array(list(values), type=_ARROW[column.logical_type.type_root])
        for values, column in zip(columns, schema.columns, strict=True)
    ]
    batch = pa.RecordBatch.from_arrays(arrays, names=list(schema.names))
    return StaticResult(schema, (batch,))


def pattern_matcher(pattern: str | None) -> Callable[[str], bool]:
    """A JDBC ``LIKE`` pattern (``%``, ``_``, ``\\`` escape) as a case-insensitive test."""
    if pattern is None or pattern in ("", "%", "*"):
        return lambda _name: True
    out: list[str] = []
    escaped = False
    for char in pattern:
        if escaped:
            out.append(re.escape(char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "%":
            out.append(".*")
        elif char == "_":
            out.append(".")
        else:
            out.append(re.escape(char))
    regex = re.compile("".join(out), re.IGNORECASE | re.DOTALL)
    return lambda name: regex.fullmatch(name) is not None


class MetadataCalls:
    """Builds the executors of the metadata operations of one session."""

    def __init__(self, service: GatewayService, session: SessionHandle) -> None:
        self.service = service
        self.session = session

    # -- helpers ---------------------------------------------------------------
    def _catalogs(self, catalog: str | None) -> list[str]:
        if catalog:
            return [catalog]
        return self.service.list_catalogs(self.session)

    def _databases(self, catalog: str, pattern: str | None) -> list[str]:
        matches = pattern_matcher(pattern)
        try:
            names = self.service.list_databases(self.session, catalog)
        except CatalogError:
            log.debug("Catalog %s cannot list databases", catalog, exc_info=True)
            return []
        return sorted(name for name in names if matches(name))

    def _tables(
        self,
        catalog: str | None,
        schema: str | None,
        table: str | None,
        kinds: frozenset[TableKind],
    ) -> list[tuple[str, str, TableInfo]]:
        matches = pattern_matcher(table)
        found: list[tuple[str, str, TableInfo]] = []
        seen: set[tuple[str | None, str | None, str]] = set()
        for catalog_name in self._catalogs(catalog):
            for database in self._databases(catalog_name, schema):
                try:
                    infos = self.service.list_tables(self.session, catalog_name, database, kinds)
                except CatalogError:
                    log.debug("Cannot list tables of %s.%s", catalog_name, database, exc_info=True)
                    continue
                for info in infos:
                    ident = info.identifier
                    key = (ident.catalog, ident.database, ident.name)
                    if key in seen or not matches(ident.name):
                        continue
                    seen.add(key)
                    found.append((catalog_name, ident.database or database, info))
        found.sort(key=lambda item: (item[2].kind.value, item[0], item[1], item[2].identifier.name))
        return found

    # -- calls -----------------------------------------------------------------
    def catalogs(self) -> StaticResult:
        rows = [(name,) for name in sorted(self.service.list_catalogs(self.session))]
        return static_result(CATALOGS_SCHEMA, rows)

    def schemas(self, catalog: str | None, schema: str | None) -> StaticResult:
        rows = [
            (database, catalog_name)
            for catalog_name in self._catalogs(catalog)
            for database in self._databases(catalog_name, schema)
        ]
        return static_result(SCHEMAS_SCHEMA, rows)

    def table_types(self) -> StaticResult:
        return static_result(TABLE_TYPES_SCHEMA, [(name,) for name in TABLE_TYPES])

    def tables(
        self,
        catalog: str | None,
        schema: str | None,
        table: str | None,
        table_types: Sequence[str] | None,
    ) -> StaticResult:
        wanted = {t.upper() for t in table_types or ()}
        kinds = frozenset(k for k in TableKind if not wanted or k.value in wanted)
        rows = [
            (catalog_name, database, info.identifier.name, info.kind.value, "") + (None,) * 5
            for catalog_name, database, info in self._tables(catalog, schema, table, kinds)
        ]
        return static_result(TABLES_SCHEMA, rows)

    def columns(
        self, catalog: str | None, schema: str | None, table: str | None, column: str | None
    ) -> StaticResult:
        matches = pattern_matcher(column)
        rows: list[Row] = []
        for catalog_name, database, info in self._tables(
            catalog, schema, table, frozenset(TableKind)
        ):
            ident = info.identifier
            lookup = (
                ObjectIdentifier(catalog_name, database, ident.name)
                if not info.is_temporary
                else ident
            )
            try:
                resolved = self.service.get_table(self.session, lookup)
            except CatalogError:
                log.debug("Cannot resolve %s", lookup, exc_info=True)
                continue
            for position, col in enumerate(resolved.columns, start=1):
                if not matches(col.name):
                    continue
                described = hive_type(col.logical_type)
                nullable = col.logical_type.nullable
                rows.append(
                    (
                        catalog_name,
                        database,
                        ident.name,
                        col.name,
                        described.java_type,
                        described.name,
                        described.column_size,
                        None,
                        described.decimal_digits,
                        described.num_prec_radix,
                        _COLUMN_NULLABLE if nullable else _COLUMN_NO_NULLS,
                        col.comment or "",
                        None,
                        None,
                        None,
                        None,
                        position,
                        "YES" if nullable else "NO",
                        None,
                        None,
                        None,
                        None,
                        "NO",
                    )
                )
        return static_result(COLUMNS_SCHEMA, rows)

    def functions(
        self, catalog: str | None, schema: str | None, function: str | None
    ) -> StaticResult:
        matches = pattern_matcher(function)
        rows: list[Row] = []

        def add(info: FunctionInfo, catalog_name: str | None, database: str | None) -> None:
            name = info.identifier.name
            if matches(name):
                rows.append((catalog_name, database, name, "", _FUNCTION_NO_TABLE, name))

        for info in self.service.list_system_functions(self.session):
            add(info, None, None)
        for catalog_name in self._catalogs(catalog):
            for database in self._databases(catalog_name, schema):
                try:
                    udfs = self.service.list_user_defined_functions(
                        self.session, catalog_name, database
                    )
                except CatalogError:
                    continue
                for info in udfs:
                    add(info, catalog_name, database)
        return static_result(FUNCTIONS_SCHEMA, rows)

    def type_info(self) -> StaticResult:
        rows = [
            (
                name,
                java_type,
                precision,
                None,
                None,
                None,
                _TYPE_NULLABLE,
                case_sensitive,
                searchable,
                unsigned,
                False,
                False,
                None,
                0,
                0,
                None,
                None,
                radix,
            )
            for name, java_type, precision, searchable, case_sensitive, unsigned, radix in (
                _TYPE_INFO
            )
        ]
        return static_result(TYPE_INFO_SCHEMA, rows)

    def primary_keys(self) -> StaticResult:
        """Spark tables declare no primary keys the catalog API exposes: always empty."""
        return static_result(PRIMARY_KEYS_SCHEMA, [])

    def cross_reference(self) -> StaticResult:
        """No foreign keys either: always empty."""
        return static_result(CROSS_REFERENCE_SCHEMA, [])
