"""Flink-style logical types, result columns and result schemas.

Results travel with a schema of Flink logical types because the REST protocol
(and every Flink client) describes columns that way. ``to_json`` produces
exactly what Flink's ``LogicalTypeJsonSerializer`` writes (``type``,
``nullable``, then the type's own keys, in that order) and ``from_json`` reads
it back, so REST clients can rebuild a schema. ``summary`` is Flink's
``asSummaryString`` (``VARCHAR(5) NOT NULL``, ``STRING``, ``DECIMAL(9, 6)``),
used for DESCRIBE-style output.

Standard library only: endpoints and clients import this module.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

__all__ = [
    "BIGINT",
    "BOOLEAN",
    "BYTES",
    "DATE",
    "DOUBLE",
    "FLOAT",
    "INT",
    "MAX_LENGTH",
    "NULL",
    "SMALLINT",
    "STRING",
    "TINYINT",
    "ArrayType",
    "BinaryType",
    "CharType",
    "Column",
    "DayTimeIntervalType",
    "DayTimeResolution",
    "DecimalType",
    "LocalZonedTimestampType",
    "LogicalType",
    "MapType",
    "MultisetType",
    "RawType",
    "ResultSchema",
    "RowField",
    "RowType",
    "SimpleType",
    "TimeType",
    "TimestampType",
    "TypeRoot",
    "VarBinaryType",
    "VarCharType",
    "YearMonthIntervalType",
    "YearMonthResolution",
    "from_json",
]

#: Flink's length of STRING / BYTES (``Integer.MAX_VALUE``).
MAX_LENGTH = 2147483647


class TypeRoot(enum.Enum):
    """Flink's ``LogicalTypeRoot`` names (the JSON ``type`` value)."""

    BOOLEAN = "BOOLEAN"
    TINYINT = "TINYINT"
    SMALLINT = "SMALLINT"
    INTEGER = "INTEGER"
    BIGINT = "BIGINT"
    FLOAT = "FLOAT"
    DOUBLE = "DOUBLE"
    DECIMAL = "DECIMAL"
    CHAR = "CHAR"
    VARCHAR = "VARCHAR"
    BINARY = "BINARY"
    VARBINARY = "VARBINARY"
    DATE = "DATE"
    TIME_WITHOUT_TIME_ZONE = "TIME_WITHOUT_TIME_ZONE"
    TIMESTAMP_WITHOUT_TIME_ZONE = "TIMESTAMP_WITHOUT_TIME_ZONE"
    TIMESTAMP_WITH_LOCAL_TIME_ZONE = "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
    INTERVAL_YEAR_MONTH = "INTERVAL_YEAR_MONTH"
    INTERVAL_DAY_TIME = "INTERVAL_DAY_TIME"
    ARRAY = "ARRAY"
    MULTISET = "MULTISET"
    MAP = "MAP"
    ROW = "ROW"
    NULL = "NULL"
    RAW = "RAW"


class YearMonthResolution(enum.Enum):
    YEAR = "YEAR"
    YEAR_TO_MONTH = "YEAR_TO_MONTH"
    MONTH = "MONTH"


class DayTimeResolution(enum.Enum):
    DAY = "DAY"
    DAY_TO_HOUR = "DAY_TO_HOUR"
    DAY_TO_MINUTE = "DAY_TO_MINUTE"
    DAY_TO_SECOND = "DAY_TO_SECOND"
    HOUR = "HOUR"
    HOUR_TO_MINUTE = "HOUR_TO_MINUTE"
    HOUR_TO_SECOND = "HOUR_TO_SECOND"
    MINUTE = "MINUTE"
    MINUTE_TO_SECOND = "MINUTE_TO_SECOND"
    SECOND = "SECOND"


@dataclass(frozen=True)
class LogicalType(ABC):
    """Base of every logical type; immutable and hashable."""

    # kw_only so subclasses can declare required positional fields.
    nullable: bool = field(default=True, kw_only=True)

    @property
    @abstractmethod
    def type_root(self) -> TypeRoot: ...

    def _params_json(self) -> dict[str, Any]:
        return {}

    @abstractmethod
    def _summary(self) -> str: ...

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type_root.value, "nullable": self.nullable}
        out.update(self._params_json())
        return out

    def summary(self) -> str:
        return self._summary() if self.nullable else f"{self._summary()} NOT NULL"

    def with_nullable(self, nullable: bool) -> LogicalType:
        return self if self.nullable == nullable else replace(self, nullable=nullable)

    def not_null(self) -> LogicalType:
        return self.with_nullable(False)

    def __str__(self) -> str:
        return self.summary()


_SIMPLE_SUMMARY: Mapping[TypeRoot, str] = {
    TypeRoot.BOOLEAN: "BOOLEAN",
    TypeRoot.TINYINT: "TINYINT",
    TypeRoot.SMALLINT: "SMALLINT",
    TypeRoot.INTEGER: "INT",
    TypeRoot.BIGINT: "BIGINT",
    TypeRoot.FLOAT: "FLOAT",
    TypeRoot.DOUBLE: "DOUBLE",
    TypeRoot.DATE: "DATE",
    TypeRoot.NULL: "NULL",
}


@dataclass(frozen=True)
class SimpleType(LogicalType):
    """A type without parameters: BOOLEAN, the integers, FLOAT, DOUBLE, DATE, NULL."""

    root: TypeRoot

    def __post_init__(self) -> None:
        if self.root not in _SIMPLE_SUMMARY:
            raise ValueError(f"{self.root.value} is not a parameterless type")
        if self.root is TypeRoot.NULL and not self.nullable:
            raise ValueError("NULL type is always nullable")

    @property
    def type_root(self) -> TypeRoot:
        return self.root

    def to_json(self) -> dict[str, Any]:
        # Flink writes NULL without a "nullable" key.
        if self.root is TypeRoot.NULL:
            return {"type": "NULL"}
        return super().to_json()

    def _summary(self) -> str:
        return _SIMPLE_SUMMARY[self.root]


@dataclass(frozen=True)
class DecimalType(LogicalType):
    precision: int = 10
    scale: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.precision <= 38 or not 0 <= self.scale <= self.precision:
            raise ValueError(f"invalid DECIMAL({self.precision}, {self.scale})")

    @property
    def type_root(self) -> TypeRoot:
        return TypeRoot.DECIMAL

    def _params_json(self) -> dict[str, Any]:
        return {"precision": self.precision, "scale": self.scale}

    def _summary(self) -> str:
        return f"DECIMAL({self.precision}, {self.scale})"


@dataclass(frozen=True)
class _LengthType(LogicalType):
    length: int = 1
    _ROOT: ClassVar[TypeRoot]
    _NAME: ClassVar[str]
    _MAX_ALIAS: ClassVar[str | None] = None

    def __post_init__(self) -> None:
        if not 0 <= self.length <= MAX_LENGTH:
            raise ValueError(f"invalid length {self.length}")

    @property
    def type_root(self) -> TypeRoot:
        return self._ROOT

    def _params_json(self) -> dict[str, Any]:
        return {"length": self.length}

    def _summary(self) -> str:
        if self._MAX_ALIAS is not None and self.length == MAX_LENGTH:
            return self._MAX_ALIAS
        return f"{self._NAME}({self.length})"


@dataclass(frozen=True)
class CharType(_LengthType):
    _ROOT: ClassVar[TypeRoot] = TypeRoot.CHAR
    _NAME: ClassVar[str] = "CHAR"


@dataclass(frozen=True)
class VarCharType(_LengthType):
    _ROOT: ClassVar[TypeRoot] = TypeRoot.VARCHAR
    _NAME: ClassVar[str] = "VARCHAR"
    _MAX_ALIAS: ClassVar[str | None] = "STRING"


@dataclass(frozen=True)
class BinaryType(_LengthType):
    _ROOT: ClassVar[TypeRoot] = TypeRoot.BINARY
    _NAME: ClassVar[str] = "BINARY"


@dataclass(frozen=True)
class VarBinaryType(_LengthType):
    _ROOT: ClassVar[TypeRoot] = TypeRoot.VARBINARY
    _NAME: ClassVar[str] = "VARBINARY"
    _MAX_ALIAS: ClassVar[str | None] = "BYTES"


@dataclass(frozen=True)
class _PrecisionType(LogicalType):
    precision: int = 6
    _ROOT: ClassVar[TypeRoot]
    _NAME: ClassVar[str]

    def __post_init__(self) -> None:
        if not 0 <= self.precision <= 9:
            raise ValueError(f"invalid {self._NAME} precision {self.precision}")

    @property
    def type_root(self) -> TypeRoot:
        return self._ROOT

    def _params_json(self) -> dict[str, Any]:
        return {"precision": self.precision}

    def _summary(self) -> str:
        return f"{self._NAME}({self.precision})"


@dataclass(frozen=True)
class TimeType(_PrecisionType):
    precision: int = 0
    _ROOT: ClassVar[TypeRoot] = TypeRoot.TIME_WITHOUT_TIME_ZONE
    _NAME: ClassVar[str] = "TIME"


@dataclass(frozen=True)
class TimestampType(_PrecisionType):
    _ROOT: ClassVar[TypeRoot] = TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE
    _NAME: ClassVar[str] = "TIMESTAMP"


@dataclass(frozen=True)
class LocalZonedTimestampType(_PrecisionType):
    _ROOT: ClassVar[TypeRoot] = TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE
    _NAME: ClassVar[str] = "TIMESTAMP_LTZ"


_YEAR_MONTH_FORMAT: Mapping[YearMonthResolution, str] = {
    YearMonthResolution.YEAR: "INTERVAL YEAR({p})",
    YearMonthResolution.YEAR_TO_MONTH: "INTERVAL YEAR({p}) TO MONTH",
    YearMonthResolution.MONTH: "INTERVAL MONTH",
}


@dataclass(frozen=True)
class YearMonthIntervalType(LogicalType):
    """Values travel as a number of months (Flink's internal ``int``)."""

    resolution: YearMonthResolution = YearMonthResolution.YEAR_TO_MONTH
    year_precision: int = 2

    def __post_init__(self) -> None:
        if not 1 <= self.year_precision <= 4:
            raise ValueError(f"invalid year precision {self.year_precision}")

    @property
    def type_root(self) -> TypeRoot:
        return TypeRoot.INTERVAL_YEAR_MONTH

    def _params_json(self) -> dict[str, Any]:
        return {"precision": self.year_precision, "resolution": self.resolution.value}

    def _summary(self) -> str:
        return _YEAR_MONTH_FORMAT[self.resolution].format(p=self.year_precision)


_DAY_TIME_FORMAT: Mapping[DayTimeResolution, str] = {
    DayTimeResolution.DAY: "INTERVAL DAY({d})",
    DayTimeResolution.DAY_TO_HOUR: "INTERVAL DAY({d}) TO HOUR",
    DayTimeResolution.DAY_TO_MINUTE: "INTERVAL DAY({d}) TO MINUTE",
    DayTimeResolution.DAY_TO_SECOND: "INTERVAL DAY({d}) TO SECOND({f})",
    DayTimeResolution.HOUR: "INTERVAL HOUR",
    DayTimeResolution.HOUR_TO_MINUTE: "INTERVAL HOUR TO MINUTE",
    DayTimeResolution.HOUR_TO_SECOND: "INTERVAL HOUR TO SECOND({f})",
    DayTimeResolution.MINUTE: "INTERVAL MINUTE",
    DayTimeResolution.MINUTE_TO_SECOND: "INTERVAL MINUTE TO SECOND({f})",
    DayTimeResolution.SECOND: "INTERVAL SECOND({f})",
}


@dataclass(frozen=True)
class DayTimeIntervalType(LogicalType):
    """Values travel as milliseconds on the Flink wire (Flink's internal ``long``)."""

    resolution: DayTimeResolution = DayTimeResolution.DAY_TO_SECOND
    day_precision: int = 2
    fractional_precision: int = 6

    def __post_init__(self) -> None:
        if not 1 <= self.day_precision <= 6 or not 0 <= self.fractional_precision <= 9:
            raise ValueError(
                f"invalid interval precision ({self.day_precision}, {self.fractional_precision})"
            )

    @property
    def type_root(self) -> TypeRoot:
        return TypeRoot.INTERVAL_DAY_TIME

    def _params_json(self) -> dict[str, Any]:
        return {
            "precision": self.day_precision,
            "fractionalPrecision": self.fractional_precision,
            "resolution": self.resolution.value,
        }

    def _summary(self) -> str:
        return _DAY_TIME_FORMAT[self.resolution].format(
            d=self.day_precision, f=self.fractional_precision
        )


@dataclass(frozen=True)
class ArrayType(LogicalType):
    element_type: LogicalType

    @property
    def type_root(self) -> TypeRoot:
        return TypeRoot.ARRAY

    def _params_json(self) -> dict[str, Any]:
        return {"elementType": self.element_type.to_json()}

    def _summary(self) -> str:
        return f"ARRAY<{self.element_type.summary()}>"


@dataclass(frozen=True)
class MultisetType(LogicalType):
    """Values travel as a map of element to its count."""

    element_type: LogicalType

    @property
    def type_root(self) -> TypeRoot:
        return TypeRoot.MULTISET

    def _params_json(self) -> dict[str, Any]:
        return {"elementType": self.element_type.to_json()}

    def _summary(self) -> str:
        return f"MULTISET<{self.element_type.summary()}>"


@dataclass(frozen=True)
class MapType(LogicalType):
    key_type: LogicalType
    value_type: LogicalType

    @property
    def type_root(self) -> TypeRoot:
        return TypeRoot.MAP

    def _params_json(self) -> dict[str, Any]:
        return {"keyType": self.key_type.to_json(), "valueType": self.value_type.to_json()}

    def _summary(self) -> str:
        return f"MAP<{self.key_type.summary()}, {self.value_type.summary()}>"


def _escape_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class RowField:
    name: str
    type: LogicalType
    description: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "fieldType": self.type.to_json()}
        if self.description is not None:
            out["description"] = self.description
        return out

    def summary(self) -> str:
        text = f"{_escape_identifier(self.name)} {self.type.summary()}"
        if self.description is not None:
            text += " '" + self.description.replace("'", "''") + "'"
        return text


@dataclass(frozen=True)
class RowType(LogicalType):
    fields: tuple[RowField, ...]

    @property
    def type_root(self) -> TypeRoot:
        return TypeRoot.ROW

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def _params_json(self) -> dict[str, Any]:
        return {"fields": [f.to_json() for f in self.fields]}

    def _summary(self) -> str:
        return "ROW<" + ", ".join(f.summary() for f in self.fields) + ">"


@dataclass(frozen=True)
class RawType(LogicalType):
    """An opaque Flink type; only parsed from Flink JSON, never produced by the mapping."""

    class_name: str
    serializer: str = ""

    @property
    def type_root(self) -> TypeRoot:
        return TypeRoot.RAW

    def _params_json(self) -> dict[str, Any]:
        return {"class": self.class_name, "serializer": self.serializer}

    def _summary(self) -> str:
        return f"RAW('{self.class_name}', ?)"


BOOLEAN = SimpleType(TypeRoot.BOOLEAN)
TINYINT = SimpleType(TypeRoot.TINYINT)
SMALLINT = SimpleType(TypeRoot.SMALLINT)
INT = SimpleType(TypeRoot.INTEGER)
BIGINT = SimpleType(TypeRoot.BIGINT)
FLOAT = SimpleType(TypeRoot.FLOAT)
DOUBLE = SimpleType(TypeRoot.DOUBLE)
DATE = SimpleType(TypeRoot.DATE)
NULL = SimpleType(TypeRoot.NULL)
#: ``VARCHAR(2147483647)``: Flink's STRING, the type of the gateway's ``result`` column.
STRING = VarCharType(MAX_LENGTH)
BYTES = VarBinaryType(MAX_LENGTH)


def from_json(data: Mapping[str, Any]) -> LogicalType:
    """Parse Flink's logical-type JSON (the inverse of ``LogicalType.to_json``)."""
    try:
        root = TypeRoot(data["type"])
    except (KeyError, ValueError) as exc:
        raise ValueError(f"not a logical type: {data!r}") from exc
    nullable = bool(data.get("nullable", True))
    if root in _SIMPLE_SUMMARY:
        return SimpleType(root, nullable=nullable)
    if root is TypeRoot.DECIMAL:
        return DecimalType(int(data["precision"]), int(data["scale"]), nullable=nullable)
    length_types: dict[TypeRoot, type[_LengthType]] = {
        TypeRoot.CHAR: CharType,
        TypeRoot.VARCHAR: VarCharType,
        TypeRoot.BINARY: BinaryType,
        TypeRoot.VARBINARY: VarBinaryType,
    }
    if root in length_types:
        return length_types[root](int(data["length"]), nullable=nullable)
    precision_types: dict[TypeRoot, type[_PrecisionType]] = {
        TypeRoot.TIME_WITHOUT_TIME_ZONE: TimeType,
        TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE: TimestampType,
        TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE: LocalZonedTimestampType,
    }
    if root in precision_types:
        return precision_types[root](int(data["precision"]), nullable=nullable)
    if root is TypeRoot.INTERVAL_YEAR_MONTH:
        return YearMonthIntervalType(
            YearMonthResolution(data["resolution"]), int(data["precision"]), nullable=nullable
        )
    if root is TypeRoot.INTERVAL_DAY_TIME:
        return DayTimeIntervalType(
            DayTimeResolution(data["resolution"]),
            int(data["precision"]),
            int(data["fractionalPrecision"]),
            nullable=nullable,
        )
    if root is TypeRoot.ARRAY:
        return ArrayType(from_json(data["elementType"]), nullable=nullable)
    if root is TypeRoot.MULTISET:
        return MultisetType(from_json(data["elementType"]), nullable=nullable)
    if root is TypeRoot.MAP:
        return MapType(from_json(data["keyType"]), from_json(data["valueType"]), nullable=nullable)
    if root is TypeRoot.ROW:
        fields = tuple(
            RowField(f["name"], from_json(f["fieldType"]), f.get("description"))
            for f in data["fields"]
        )
        return RowType(fields, nullable=nullable)
    return RawType(str(data["class"]), str(data.get("serializer", "")), nullable=nullable)


@dataclass(frozen=True)
class Column:
    """One result column, as Flink's ``ColumnInfo``."""

    name: str
    logical_type: LogicalType
    comment: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "logicalType": self.logical_type.to_json(),
            "comment": self.comment,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Column:
        return cls(data["name"], from_json(data["logicalType"]), data.get("comment"))


@dataclass(frozen=True)
class ResultSchema:
    columns: tuple[Column, ...] = ()

    @classmethod
    def of(cls, *columns: tuple[str, LogicalType] | Column) -> ResultSchema:
        """``ResultSchema.of(("result", STRING))``: pairs or ready columns."""
        return cls(tuple(c if isinstance(c, Column) else Column(c[0], c[1]) for c in columns))

    @classmethod
    def from_json(cls, data: Sequence[Mapping[str, Any]]) -> ResultSchema:
        return cls(tuple(Column.from_json(c) for c in data))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def types(self) -> tuple[LogicalType, ...]:
        return tuple(c.logical_type for c in self.columns)

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.columns]

    def __len__(self) -> int:
        return len(self.columns)

    def __iter__(self) -> Iterator[Column]:
        return iter(self.columns)

    def __getitem__(self, index: int) -> Column:
        return self.columns[index]
