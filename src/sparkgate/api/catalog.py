"""Catalog objects the gateway reports: identifiers, tables and functions (FLIP-91).

These are plain values built by the service from Spark's catalog and turned
into wire formats by the endpoints, so they hold names and strings only.

Spark, unlike Flink, has objects without a catalog or database: temporary
views and functions, and built-in functions. Their identifiers leave
``catalog`` and ``database`` as ``None`` (a global temporary view has the
global-temp database and no catalog), which is how Spark itself reports them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sparkgate.api.types import Column

__all__ = [
    "CatalogTable",
    "FunctionDefinition",
    "FunctionInfo",
    "FunctionKind",
    "ObjectIdentifier",
    "TableInfo",
    "TableKind",
    "quote_identifier",
]


def quote_identifier(name: str) -> str:
    """Backtick-quote one name part, doubling backticks, as Spark and Flink read it."""
    return "`" + name.replace("`", "``") + "`"


class TableKind(enum.Enum):
    """Flink's two kinds; Spark's MANAGED/EXTERNAL are TABLE, every view is VIEW."""

    TABLE = "TABLE"
    VIEW = "VIEW"


class FunctionKind(enum.Enum):
    SYSTEM = "SYSTEM"
    """Built into Spark."""
    USER_DEFINED = "USER_DEFINED"
    """Created by a user, temporary or persistent."""


@dataclass(frozen=True)
class ObjectIdentifier:
    """A possibly partial name of a catalog object.

    A catalog without a database is not a name Spark can resolve, so it is
    rejected here rather than failing later inside Spark.
    """

    catalog: str | None
    database: str | None
    name: str

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("an object name must not be empty")
        if self.catalog is not None and self.database is None:
            raise ValueError(f"object {self.name!r} has a catalog but no database")

    @classmethod
    def of(cls, *parts: str) -> ObjectIdentifier:
        """Build from one (name), two (database, name) or three name parts."""
        if len(parts) == 1:
            return cls(None, None, parts[0])
        if len(parts) == 2:
            return cls(None, parts[0], parts[1])
        if len(parts) == 3:
            return cls(parts[0], parts[1], parts[2])
        raise ValueError(f"an identifier has 1 to 3 parts, not {len(parts)}: {parts!r}")

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(p for p in (self.catalog, self.database, self.name) if p is not None)

    @property
    def is_qualified(self) -> bool:
        return self.catalog is not None

    def as_summary_string(self) -> str:
        """Unquoted ``catalog.db.name``, for people (Flink's asSummaryString)."""
        return ".".join(self.parts)

    def as_serializable_string(self) -> str:
        """Every part backtick-quoted, so Spark or Flink parses it back exactly."""
        return ".".join(quote_identifier(p) for p in self.parts)

    def __str__(self) -> str:
        return self.as_summary_string()


@dataclass(frozen=True)
class TableInfo:
    """One entry of a table listing (FLIP-91 TableInfo)."""

    identifier: ObjectIdentifier
    kind: TableKind
    is_temporary: bool = False


def _frozen_mapping(value: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True)
class CatalogTable:
    """A resolved table or view with its schema and metadata.

    ``table_type`` keeps Spark's own word (MANAGED, EXTERNAL, VIEW, TEMPORARY)
    for clients that show it; ``kind`` is the Flink-level classification.
    """

    identifier: ObjectIdentifier
    kind: TableKind
    columns: tuple[Column, ...]
    is_temporary: bool = False
    table_type: str | None = None
    comment: str | None = None
    partition_keys: tuple[str, ...] = ()
    properties: Mapping[str, str] = field(default_factory=_frozen_mapping, hash=False)
    provider: str | None = None
    location: str | None = None
    view_text: str | None = None

    def __post_init__(self) -> None:
        # Freeze a caller's dict so the dataclass really is immutable.
        if not isinstance(self.properties, MappingProxyType):
            object.__setattr__(self, "properties", _frozen_mapping(self.properties))


@dataclass(frozen=True)
class FunctionInfo:
    """One entry of a function listing (FLIP-91 FunctionInfo).

    Persistent functions have a three-part identifier; built-in and temporary
    ones a bare name, since Spark resolves them from any database.
    """

    identifier: ObjectIdentifier
    kind: FunctionKind
    is_temporary: bool = False


@dataclass(frozen=True)
class FunctionDefinition:
    """What ``DESCRIBE FUNCTION EXTENDED`` says about one function.

    ``class_name`` is Spark's implementing class (a placeholder for SQL
    functions); ``usage`` is the one-line usage of built-in functions;
    ``description`` is Spark's full description text.
    """

    identifier: ObjectIdentifier
    kind: FunctionKind
    is_temporary: bool
    class_name: str | None
    usage: str | None
    description: str

    @property
    def name(self) -> str:
        return self.identifier.name
