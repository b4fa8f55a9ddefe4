"""Spark SQL types -> Flink logical types, and the Arrow each one arrives as.

Mapping (``to_logical_type``), with the Arrow type that ``DataFrame.toArrow()``
and ``mapInArrow`` deliver for it (measured on pyspark 4.3 / pyarrow 26); the
row encoders in ``sparkgate.codec`` receive exactly these arrays:

=============================  ===================================  =============================
Spark                          logical type                         Arrow
=============================  ===================================  =============================
BooleanType                    BOOLEAN                              bool
ByteType / ShortType           TINYINT / SMALLINT                   int8 / int16
IntegerType / LongType         INTEGER / BIGINT                     int32 / int64
FloatType / DoubleType         FLOAT / DOUBLE                       float / double
DecimalType(p, s)              DECIMAL(p, s)                        decimal128(p, s)
StringType                     VARCHAR(2147483647) (STRING)         string
  table column char(n)         CHAR(n) (from field metadata)        string (padded by Spark)
  table column varchar(n)      VARCHAR(n) (from field metadata)     string
BinaryType                     VARBINARY(2147483647) (BYTES)        binary
DateType                       DATE                                 date32[day]
TimestampNTZType               TIMESTAMP(6), TIMESTAMP(p) of a      timestamp[us]
                               connector column declared so (p<6)
TimestampType                  TIMESTAMP_LTZ(6), or as declared     timestamp[us, tz=UTC] from
                                                                    toArrow(); tz=<session zone>
                                                                    from mapInArrow
TimeType(p)                    TIME(p)                              time64[ns]
DayTimeIntervalType(s, e)      INTERVAL_DAY_TIME (resolution s..e)  duration[us]
YearMonthIntervalType(s, e)    INTERVAL_YEAR_MONTH                  not convertible: Spark raises
                                                                    UNSUPPORTED_DATA_TYPE_FOR_
                                                                    ARROW_CONVERSION; see below
ArrayType(e, containsNull)     ARRAY<e> (element nullability)       list<element>
MapType(k, v, valueContNull)   MAP<k NOT NULL, v>                   map<k, v>
StructType                     ROW<...>                             struct<...>
NullType                       NULL                                 null
CalendarIntervalType           STRING (fallback)                    not convertible; see below
VariantType                    STRING (fallback)                    struct<value: binary,
                                                                    metadata: binary>
UserDefinedType                mapping of its sqlType               Arrow of its sqlType
=============================  ===================================  =============================

Fallbacks: Flink has no CALENDAR INTERVAL and the Flink 2.x REST serializer
cannot describe VARIANT (a RAW type would need a Java serializer snapshot the
Flink clients try to restore), so both are sent as their Spark string form
(``1 years 2 months``, JSON text for variants), which every client can show.
Spark refuses Arrow for year-month intervals, so ``arrow_compatible`` rewrites
such a top-level column to its number of months (Flink's own encoding of
INTERVAL_YEAR_MONTH). A column that holds any of these types *nested* inside
an array, map or struct is sent whole as Spark's string cast, and
``to_result_schema`` types it STRING to match.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pyspark.sql import functions as F
from pyspark.sql import types as T

from sparkgate.api.catalog import quote_identifier
from sparkgate.api.types import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    NULL,
    SMALLINT,
    STRING,
    TINYINT,
    ArrayType,
    CharType,
    Column,
    DayTimeIntervalType,
    DayTimeResolution,
    DecimalType,
    LocalZonedTimestampType,
    LogicalType,
    MapType,
    ResultSchema,
    RowField,
    RowType,
    TimestampType,
    TimeType,
    VarCharType,
    YearMonthIntervalType,
    YearMonthResolution,
)
from sparkgate.service.spark.lineage import Shape, declared_precisions
from sparkgate.service.spark.plans import select_list
from sparkgate.sql.flink_spellings import PRECISION_PREFIX
from sparkgate.sql.flink_types import nested_type, nullability, row_field

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "FLINK_PROCTIME_KEY",
    "FLINK_TYPE_KEY",
    "WATERMARK_DELAY_KEY",
    "arrow_compatible",
    "flink_columns",
    "flink_named",
    "to_logical_type",
    "to_result_schema",
]

log = logging.getLogger(__name__)

#: Flink allows at most DAY(6) and YEAR(4); Spark's intervals can be wider, so
#: claim the widest precision Flink clients accept rather than Flink's default 2.
_DAY_PRECISION = 6
_YEAR_PRECISION = 4
_FRACTIONAL_PRECISION = 6  # Spark intervals count microseconds

#: Field metadata of a connector table's column: its Flink type as declared, and
#: whether it is a processing time (Flink's TIMESTAMP_LTZ(3)).
FLINK_TYPE_KEY = "sparkgate.flink.type"
FLINK_PROCTIME_KEY = "sparkgate.flink.proctime"
#: Spark's mark of an event-time column (``EventTimeWatermark.delayKey``).
WATERMARK_DELAY_KEY = "spark.watermarkDelayMs"
_DECLARED_TIMESTAMP = re.compile(r"^TIMESTAMP(?:_LTZ)?\s*\(\s*(\d)\s*\)", re.IGNORECASE)
# Spark's types that carry a Flink precision in a column's metadata.
_TIME_TYPES = (T.TimestampType, T.TimestampNTZType, T.TimeType)
_DECLARED_TIME = re.compile(r"^TIME\s*\(\s*(\d)\s*\)", re.IGNORECASE)
_SPARK_TIMESTAMP_PRECISION = 6  # microseconds
_PROCTIME_PRECISION = 3

_CHAR_VARCHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"
_CHAR_VARCHAR_RE = re.compile(r"^(char|varchar)\((\d+)\)$", re.IGNORECASE)

_DAY_TIME: dict[tuple[int, int], DayTimeResolution] = {
    (0, 0): DayTimeResolution.DAY,
    (0, 1): DayTimeResolution.DAY_TO_HOUR,
    (0, 2): DayTimeResolution.DAY_TO_MINUTE,
    (0, 3): DayTimeResolution.DAY_TO_SECOND,
    (1, 1): DayTimeResolution.HOUR,
    (1, 2): DayTimeResolution.HOUR_TO_MINUTE,
    (1, 3): DayTimeResolution.HOUR_TO_SECOND,
    (2, 2): DayTimeResolution.MINUTE,
    (2, 3): DayTimeResolution.MINUTE_TO_SECOND,
    (3, 3): DayTimeResolution.SECOND,
}

_YEAR_MONTH: dict[tuple[int, int], YearMonthResolution] = {
    (0, 0): YearMonthResolution.YEAR,
    (0, 1): YearMonthResolution.YEAR_TO_MONTH,
    (1, 1): YearMonthResolution.MONTH,
}

_SIMPLE: tuple[tuple[type[T.DataType], LogicalType], ...] = (
    (T.BooleanType, BOOLEAN),
    (T.ByteType, TINYINT),
    (T.ShortType, SMALLINT),
    (T.IntegerType, INT),
    (T.LongType, BIGINT),
    (T.FloatType, FLOAT),
    (T.DoubleType, DOUBLE),
    (T.DateType, DATE),
    (T.BinaryType, BYTES),
    (T.NullType, NULL),
)


def _string_type(metadata: dict[str, object] | None) -> LogicalType:
    # Spark reads char/varchar table columns as StringType and keeps the
    # declared type in the field metadata; a nested part has its declaration's.
    meta = metadata or {}
    declared = meta.get(_CHAR_VARCHAR_KEY, meta.get(FLINK_TYPE_KEY))
    if isinstance(declared, str):
        match = _CHAR_VARCHAR_RE.match(declared.strip())
        if match:
            length = int(match.group(2))
            return CharType(length) if match.group(1).lower() == "char" else VarCharType(length)
    return STRING


def _timestamp_precision(metadata: dict[str, object] | None) -> int:
    """A column's declared timestamp precision (``TIMESTAMP(3)``), at most Spark's six."""
    meta = metadata or {}
    if meta.get(FLINK_PROCTIME_KEY) is True:
        return _PROCTIME_PRECISION
    declared = meta.get(FLINK_TYPE_KEY)
    match = _DECLARED_TIMESTAMP.match(declared.strip()) if isinstance(declared, str) else None
    if match is None:
        return _SPARK_TIMESTAMP_PRECISION
    return min(int(match.group(1)), _SPARK_TIMESTAMP_PRECISION)


def to_logical_type(
    dt: T.DataType, nullable: bool = True, metadata: dict[str, object] | None = None
) -> LogicalType:
    """The Flink logical type for Spark type ``dt``.

    ``metadata`` is the enclosing ``StructField``'s, which carries a table
    column's declared CHAR/VARCHAR length and a connector column's declared
    timestamp precision.
    """
    logical = _map(dt, metadata)
    return logical if logical is NULL else logical.with_nullable(nullable)


def _map(dt: T.DataType, metadata: dict[str, object] | None) -> LogicalType:
    for spark_type, logical in _SIMPLE:
        if isinstance(dt, spark_type):
            return logical
    # Spark keeps CharType/VarcharType only with preserveCharVarcharTypeInfo.
    if isinstance(dt, T.CharType):
        return CharType(dt.length)
    if isinstance(dt, T.VarcharType):
        return VarCharType(dt.length)
    if isinstance(dt, T.StringType):
        return _string_type(metadata)
    if isinstance(dt, T.DecimalType):
        return DecimalType(dt.precision, dt.scale)
    if isinstance(dt, T.TimestampNTZType):
        return TimestampType(_timestamp_precision(metadata))
    if isinstance(dt, T.TimestampType):
        return LocalZonedTimestampType(_timestamp_precision(metadata))
    if isinstance(dt, T.TimeType):
        declared = (metadata or {}).get(FLINK_TYPE_KEY)
        match = _DECLARED_TIME.match(declared.strip()) if isinstance(declared, str) else None
        return TimeType(min(int(match.group(1)), dt.precision) if match else dt.precision)
    if isinstance(dt, T.DayTimeIntervalType):
        return DayTimeIntervalType(
            _DAY_TIME[(dt.startField, dt.endField)], _DAY_PRECISION, _FRACTIONAL_PRECISION
        )
    if isinstance(dt, T.YearMonthIntervalType):
        return YearMonthIntervalType(_YEAR_MONTH[(dt.startField, dt.endField)], _YEAR_PRECISION)
    # A nested type's parts keep what its declaration says of them (a connector
    # column's ARRAY<TIMESTAMP(3)>, ROW<s VARCHAR(8)>), as a top-level column does.
    if isinstance(dt, T.ArrayType):
        [element] = _declared_parts(metadata, "ARRAY", 1)
        return ArrayType(to_logical_type(dt.elementType, dt.containsNull, element))
    if isinstance(dt, T.MapType):
        key, value = _declared_parts(metadata, "MAP", 2)
        return MapType(
            to_logical_type(dt.keyType, False, key),
            to_logical_type(dt.valueType, dt.valueContainsNull, value),
        )
    if isinstance(dt, T.StructType):
        parts = _declared_parts(metadata, "ROW", len(dt.fields), fields=True)
        return RowType(
            tuple(
                RowField(
                    f.name,
                    to_logical_type(f.dataType, f.nullable, {**(part or {}), **f.metadata}),
                    _comment(f.metadata),
                )
                for f, part in zip(dt.fields, parts, strict=True)
            )
        )
    if isinstance(dt, T.UserDefinedType):
        return _map(dt.sqlType(), metadata)
    # CalendarIntervalType, VariantType and anything newer: sent as strings.
    return STRING


def _declared_parts(
    metadata: dict[str, object] | None, kind: str, count: int, *, fields: bool = False
) -> list[dict[str, object] | None]:
    """The declared types of a nested type's ``count`` parts (element; key and
    value; ``fields``: each ROW field's) as each part's metadata, from the
    column's declaration (``FLINK_TYPE_KEY``); None for a part nothing declares."""
    declared = (metadata or {}).get(FLINK_TYPE_KEY)
    nested = nested_type(nullability(declared)[0]) if isinstance(declared, str) else None
    if nested is None or nested[0] != kind or len(nested[1]) != count:
        return [None] * count
    parts = [row_field(part)[1] for part in nested[1]] if fields else nested[1]
    return [{FLINK_TYPE_KEY: nullability(part)[0]} for part in parts]


def _comment(metadata: dict[str, object] | None) -> str | None:
    comment = (metadata or {}).get("comment")
    return comment if isinstance(comment, str) else None


_KNOWN: tuple[type[T.DataType], ...] = (
    *(spark_type for spark_type, _ in _SIMPLE),
    T.StringType,
    T.CharType,
    T.VarcharType,
    T.DecimalType,
    T.TimestampNTZType,
    T.TimestampType,
    T.TimeType,
    T.DayTimeIntervalType,
    T.YearMonthIntervalType,
)


def _needs_string(dt: T.DataType, top_level: bool = True) -> bool:
    """Whether a column of ``dt`` must travel as Spark's string cast."""
    if isinstance(dt, T.UserDefinedType):
        return _needs_string(dt.sqlType(), top_level)
    if isinstance(dt, T.ArrayType):
        return _needs_string(dt.elementType, False)
    if isinstance(dt, T.MapType):
        return _needs_string(dt.keyType, False) or _needs_string(dt.valueType, False)
    if isinstance(dt, T.StructType):
        return any(_needs_string(f.dataType, False) for f in dt.fields)
    if isinstance(dt, T.YearMonthIntervalType):
        return not top_level  # top level: rewritten to months instead
    return not isinstance(dt, _KNOWN)


# Spark marks the name it gave an expression without an alias (``(a + 1)``,
# ``count(1)``); the mark stays on a column renamed later, whose name is then plain.
_AUTO_ALIAS = "__autoGeneratedAlias"
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
# A literal's own text, which Spark uses as its name without the mark.
_LITERAL_NAME = re.compile(
    r"-?(\d+\.?\d*|\.\d+)(E[-+]?\d+)?[LSYBD]?|-?\d+BD|TRUE|FALSE|NULL", re.IGNORECASE
)


def flink_columns(df: DataFrame, query: str | None = None) -> tuple[T.StructType, list[str] | None]:
    """``df``'s schema as Flink sees it, and Flink's names of its columns.

    The names are ``EXPR$<position>`` for each column Spark named after its
    expression (``SELECT 1 + 1``, ``count(*)``, a literal, a call); None when
    every name stays. They are told from the schema where it can be: Spark's
    mark of a generated name where the name is not a plain identifier, a
    literal's text, or a call's ``f(...)``. A cast and a string literal look
    like a column in the schema (Spark names them ``x`` and ``a``); when
    ``query`` (the Spark SQL text of ``df``) has one, its parsed select list
    tells.

    The schema is ``df.schema`` with a cast column's declared timestamp
    precision (``CAST(x AS TIMESTAMP(3))``) in its field metadata, which
    :func:`to_logical_type` reads.
    """
    struct = df.schema
    fields = struct.fields
    names = [
        f"EXPR${i}" if _expression_name(f.name, f.metadata) else f.name
        for i, f in enumerate(fields)
    ]
    if query is not None and _HIDDEN_NAMES.search(query):
        try:
            found = select_list(df.sparkSession, query)
        except Exception:  # not Spark's text alone (a statement the gateway rewrote)
            log.debug("no select list to name columns by", exc_info=True)
        else:
            for position, name in found.unnamed.items():
                if position < len(names):
                    names[position] = name
            if found.precisions:
                struct = _with_precisions(struct, found.precisions)
    undeclared = [
        i
        for i, f in enumerate(struct.fields)
        if _holds_time(f.dataType)
        and FLINK_TYPE_KEY not in f.metadata
        and FLINK_PROCTIME_KEY not in f.metadata
    ]
    if undeclared:
        # Literals, VALUES lists and TO_TIMESTAMP_LTZ: Flink's precision of what makes them.
        try:
            traced = declared_precisions(df._jdf.queryExecution().analyzed(), undeclared)
        except Exception:  # an unusual plan: Spark's precision
            log.debug("no lineage to read precisions from", exc_info=True)
        else:
            struct = _with_precisions(struct, traced)
    return struct, None if names == [f.name for f in fields] else names


def _holds_time(dt: T.DataType) -> bool:
    if isinstance(dt, _TIME_TYPES):
        return True
    if isinstance(dt, T.ArrayType):
        return _holds_time(dt.elementType)
    if isinstance(dt, T.MapType):
        return _holds_time(dt.keyType) or _holds_time(dt.valueType)
    if isinstance(dt, T.StructType):
        return any(_holds_time(f.dataType) for f in dt.fields)
    return False


def _with_precisions(struct: T.StructType, precisions: Mapping[int, Shape]) -> T.StructType:
    fields = list(struct.fields)
    for position, shape in precisions.items():
        field = fields[position] if position < len(fields) else None
        declared = _declared_text(field.dataType, shape) if field is not None else None
        if field is None or declared is None:
            continue
        metadata = {**field.metadata, FLINK_TYPE_KEY: declared}
        fields[position] = T.StructField(field.name, field.dataType, field.nullable, metadata)
    return T.StructType(fields)


def _declared_text(dt: T.DataType, shape: Shape) -> str | None:
    """Flink's declaration of a value of type ``dt`` whose parts have the precisions
    of ``shape`` (:mod:`.lineage`), read back by :func:`to_logical_type`; None when
    the shape does not fit the type."""
    if isinstance(shape, int):
        if isinstance(dt, T.TimeType):
            return f"TIME({shape})"
        if isinstance(dt, (T.TimestampType, T.TimestampNTZType)):
            zone = "_LTZ" if isinstance(dt, T.TimestampType) else ""
            return f"TIMESTAMP{zone}({shape})"
        return None
    if shape is None:
        return str(to_logical_type(dt))  # Spark's own: six digits
    if shape[0] == "ARRAY" and isinstance(dt, T.ArrayType):
        element = _declared_text(dt.elementType, shape[1])
        return f"ARRAY<{element}>" if element is not None else None
    if shape[0] == "MAP" and isinstance(dt, T.MapType):
        key, value = _declared_text(dt.keyType, shape[1]), _declared_text(dt.valueType, shape[2])
        return f"MAP<{key}, {value}>" if key is not None and value is not None else None
    if shape[0] == "ROW" and isinstance(dt, T.StructType) and len(shape[1]) == len(dt.fields):
        parts = [_declared_text(f.dataType, s) for f, s in zip(dt.fields, shape[1], strict=True)]
        if any(part is None for part in parts):
            return None
        fields = (f"{quote_identifier(f.name)} {p}" for f, p in zip(dt.fields, parts, strict=True))
        return f"ROW<{', '.join(fields)}>"
    return None


def flink_named(df: DataFrame, query: str | None = None) -> DataFrame:
    """``df`` as :func:`flink_columns` describes it (a projection, for a frame
    Spark runs on)."""
    struct, names = flink_columns(df, query)
    if struct != df.schema:
        df = df.select(
            *(F.col(quote_identifier(f.name)).alias(f.name, metadata=f.metadata) for f in struct)
        )
    return df if names is None else df.toDF(*names)


# What hides an expression behind a column-like name: a cast, a string literal.
_HIDDEN_NAMES = re.compile(r"\bCAST\b|::|'|" + re.escape(PRECISION_PREFIX), re.IGNORECASE)


def _expression_name(name: str, metadata: dict[str, object]) -> bool:
    if metadata.get(_AUTO_ALIAS) == "true":
        return _PLAIN_NAME.fullmatch(name) is None
    if metadata:
        return False
    return _LITERAL_NAME.fullmatch(name) is not None or (name.endswith(")") and "(" in name)


def to_result_schema(struct: T.StructType, names: list[str] | None = None) -> ResultSchema:
    """The result schema for a Spark schema; comments from ``metadata['comment']``,
    the columns named ``names`` if given.

    Consistent with ``arrow_compatible``: a column it sends as a string is
    typed STRING here.
    """
    columns = []
    for i, f in enumerate(struct.fields):
        if _needs_string(f.dataType):
            logical = STRING.with_nullable(f.nullable)
        else:
            logical = to_logical_type(f.dataType, f.nullable, f.metadata)
        name = f.name if names is None else names[i]
        columns.append(Column(name, logical, _comment(f.metadata)))
    return ResultSchema(tuple(columns))


def arrow_compatible(df: DataFrame) -> DataFrame:
    """``df`` with the columns Spark cannot send as Arrow rewritten (see module doc).

    Returns ``df`` itself when nothing needs rewriting, so the common case
    adds no projection to the plan.
    """
    fields = df.schema.fields
    if not any(
        isinstance(f.dataType, T.YearMonthIntervalType) or _needs_string(f.dataType) for f in fields
    ):
        return df
    projected = []
    for f in fields:
        column = F.col(quote_identifier(f.name))
        if isinstance(f.dataType, T.YearMonthIntervalType):
            quoted = quote_identifier(f.name)
            # Through INTERVAL MONTH: EXTRACT(MONTH ...) refuses an INTERVAL YEAR.
            months = F.expr(f"CAST(CAST({quoted} AS INTERVAL MONTH) AS INT)")
            projected.append(months.alias(f.name, metadata=f.metadata))
        elif _needs_string(f.dataType):
            projected.append(column.cast("string").alias(f.name, metadata=f.metadata))
        else:
            projected.append(column)
    log.debug("rewrote columns for Arrow: %s", df.columns)
    return df.select(*projected)
