"""Logical types as HiveServer2 describes them: TTypeId, Hive type name, JDBC type.

The mapping follows Spark's own Thrift server: primitive types keep their
Hive type (DECIMAL with precision/scale qualifiers, CHAR/VARCHAR with their
length), TIMESTAMP and TIMESTAMP_LTZ are both TIMESTAMP (values sent as
strings in Hive's format), ARRAY/MAP/ROW are ARRAY/MAP/STRUCT whose values
travel as JSON-like strings, and everything Hive lacks (TIME, RAW) is STRING.
"""

from __future__ import annotations

from dataclasses import dataclass

from TCLIService import ttypes

from sparkgate.api.types import (
    MAX_LENGTH,
    ArrayType,
    CharType,
    DecimalType,
    LogicalType,
    MapType,
    MultisetType,
    RowType,
    TypeRoot,
    VarCharType,
)

__all__ = [
    "HiveType",
    "column_desc",
    "hive_type",
    "table_schema",
]

_T = ttypes.TTypeId


@dataclass(frozen=True)
class HiveType:
    """How one logical type appears on the HiveServer2 wire and in JDBC metadata."""

    type_id: int
    name: str
    java_type: int
    column_size: int | None = None
    decimal_digits: int | None = None
    num_prec_radix: int | None = None
    precision: int | None = None
    scale: int | None = None
    max_length: int | None = None

    def type_desc(self) -> ttypes.TTypeDesc:
        qualifiers: dict[str, ttypes.TTypeQualifierValue] = {}
        if self.precision is not None:
            qualifiers["precision"] = ttypes.TTypeQualifierValue(i32Value=self.precision)
        if self.scale is not None:
            qualifiers["scale"] = ttypes.TTypeQualifierValue(i32Value=self.scale)
        if self.max_length is not None:
            qualifiers["characterMaximumLength"] = ttypes.TTypeQualifierValue(
                i32Value=self.max_length
            )
        entry = ttypes.TPrimitiveTypeEntry(
            type=self.type_id,
            typeQualifiers=ttypes.TTypeQualifiers(qualifiers=qualifiers) if qualifiers else None,
        )
        return ttypes.TTypeDesc(types=[ttypes.TTypeEntry(primitiveEntry=entry)])


# java.sql.Types constants
_BOOLEAN, _TINYINT, _SMALLINT, _INTEGER, _BIGINT = 16, -6, 5, 4, -5
_FLOAT, _DOUBLE, _DECIMAL, _CHAR, _VARCHAR = 6, 8, 3, 1, 12
_BINARY, _DATE, _TIMESTAMP, _OTHER, _NULL = -2, 91, 93, 1111, 0
_ARRAY, _STRUCT, _JAVA_OBJECT = 2003, 2002, 2000

_SIMPLE: dict[TypeRoot, HiveType] = {
    TypeRoot.BOOLEAN: HiveType(_T.BOOLEAN_TYPE, "BOOLEAN", _BOOLEAN),
    TypeRoot.TINYINT: HiveType(_T.TINYINT_TYPE, "TINYINT", _TINYINT, 3, 0, 10),
    TypeRoot.SMALLINT: HiveType(_T.SMALLINT_TYPE, "SMALLINT", _SMALLINT, 5, 0, 10),
    TypeRoot.INTEGER: HiveType(_T.INT_TYPE, "INT", _INTEGER, 10, 0, 10),
    TypeRoot.BIGINT: HiveType(_T.BIGINT_TYPE, "BIGINT", _BIGINT, 19, 0, 10),
    TypeRoot.FLOAT: HiveType(_T.FLOAT_TYPE, "FLOAT", _FLOAT, 7, 7, 10),
    TypeRoot.DOUBLE: HiveType(_T.DOUBLE_TYPE, "DOUBLE", _DOUBLE, 15, 15, 10),
    TypeRoot.DATE: HiveType(_T.DATE_TYPE, "DATE", _DATE, 10),
    TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE: HiveType(
        _T.TIMESTAMP_TYPE, "TIMESTAMP", _TIMESTAMP, 29, 9
    ),
    TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE: HiveType(
        _T.TIMESTAMP_TYPE, "TIMESTAMP", _TIMESTAMP, 29, 9
    ),
    TypeRoot.BINARY: HiveType(_T.BINARY_TYPE, "BINARY", _BINARY),
    TypeRoot.VARBINARY: HiveType(_T.BINARY_TYPE, "BINARY", _BINARY),
    TypeRoot.NULL: HiveType(_T.NULL_TYPE, "VOID", _NULL),
    TypeRoot.INTERVAL_YEAR_MONTH: HiveType(
        _T.INTERVAL_YEAR_MONTH_TYPE, "INTERVAL_YEAR_MONTH", _OTHER
    ),
    TypeRoot.INTERVAL_DAY_TIME: HiveType(_T.INTERVAL_DAY_TIME_TYPE, "INTERVAL_DAY_TIME", _OTHER),
}
_STRING = HiveType(_T.STRING_TYPE, "STRING", _VARCHAR, MAX_LENGTH)


def _nested_name(logical: LogicalType) -> str:
    """Hive's lower-case catalog string of a nested type (``array<int>``)."""
    if isinstance(logical, ArrayType):
        return f"array<{_nested_name(logical.element_type)}>"
    if isinstance(logical, MultisetType):
        return f"map<{_nested_name(logical.element_type)},int>"
    if isinstance(logical, MapType):
        return f"map<{_nested_name(logical.key_type)},{_nested_name(logical.value_type)}>"
    if isinstance(logical, RowType):
        fields = ",".join(f"{f.name}:{_nested_name(f.type)}" for f in logical.fields)
        return f"struct<{fields}>"
    return hive_type(logical).name.lower()


def hive_type(logical: LogicalType) -> HiveType:
    """The Hive description of a logical type."""
    root = logical.type_root
    simple = _SIMPLE.get(root)
    if simple is not None:
        return simple
    if isinstance(logical, DecimalType):
        return HiveType(
            _T.DECIMAL_TYPE,
            f"DECIMAL({logical.precision},{logical.scale})",
            _DECIMAL,
            column_size=logical.precision,
            decimal_digits=logical.scale,
            num_prec_radix=10,
            precision=logical.precision,
            scale=logical.scale,
        )
    if isinstance(logical, CharType):
        return HiveType(
            _T.CHAR_TYPE,
            f"CHAR({logical.length})",
            _CHAR,
            column_size=logical.length,
            max_length=logical.length,
        )
    if isinstance(logical, VarCharType):
        if logical.length >= MAX_LENGTH:
            return _STRING
        return HiveType(
            _T.VARCHAR_TYPE,
            f"VARCHAR({logical.length})",
            _VARCHAR,
            column_size=logical.length,
            max_length=logical.length,
        )
    if isinstance(logical, ArrayType):
        return HiveType(_T.ARRAY_TYPE, _nested_name(logical), _ARRAY)
    if isinstance(logical, (MapType, MultisetType)):
        return HiveType(_T.MAP_TYPE, _nested_name(logical), _JAVA_OBJECT)
    if isinstance(logical, RowType):
        return HiveType(_T.STRUCT_TYPE, _nested_name(logical), _STRUCT)
    return _STRING  # TIME, RAW: Hive has no such type; values travel as strings


def column_desc(
    name: str, logical: LogicalType, position: int, comment: str | None = None
) -> ttypes.TColumnDesc:
    """One column of a result schema; ``position`` counts from 1, as in Hive."""
    return ttypes.TColumnDesc(
        columnName=name,
        typeDesc=hive_type(logical).type_desc(),
        position=position,
        comment=comment or "",
    )


def table_schema(columns: list[tuple[str, LogicalType, str | None]]) -> ttypes.TTableSchema:
    return ttypes.TTableSchema(
        columns=[
            column_desc(name, logical, i, comment)
            for i, (name, logical, comment) in enumerate(columns, start=1)
        ]
    )
