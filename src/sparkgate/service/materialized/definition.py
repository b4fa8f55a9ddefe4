"""A materialized table's definition, as kept in the catalog's table properties.

A materialized table is a table of the catalog (Spark's ``USING <format>``,
Parquet unless ``'format'`` says otherwise) whose properties hold what
Flink's ``CatalogMaterializedTable`` holds: the defining query, the
freshness, the logical and actual refresh modes, the refresh status and the
refresh handler (its summary for DESCRIBE, its bytes for the scheduler or
the continuous job). The catalog is the one truth: everything here
survives a restart with the table and is dropped with it.
"""

from __future__ import annotations

import base64
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from types import MappingProxyType

from sparkgate.api.errors import ExecutionError

__all__ = [
    "PREFIX",
    "Freshness",
    "MaterializedTable",
    "RefreshMode",
    "RefreshStatus",
    "cron_of",
    "derive_mode",
    "freshness_of",
]

PREFIX = "materialized-table."
_QUERY = PREFIX + "definition-query"
_FRESHNESS = PREFIX + "freshness"
_LOGICAL_MODE = PREFIX + "logical-refresh-mode"
_MODE = PREFIX + "refresh-mode"
_STATUS = PREFIX + "refresh-status"
_HANDLER_DESCRIPTION = PREFIX + "refresh-handler-description"
_HANDLER_BYTES = PREFIX + "refresh-handler-bytes"
_PRIMARY_KEY = PREFIX + "primary-key"
_OPTION = PREFIX + "option."
_OWNER = PREFIX + "owner"

# Quartz cron expressions of Flink's MaterializedTableUtils, by freshness unit.
_CRON = {
    "SECOND": "0/{} * * * * ? *",
    "MINUTE": "0 0/{} * * * ? *",
    "HOUR": "0 0 0/{} * * ? *",
    "DAY": "0 0 0 * * ? *",
}


@dataclass(frozen=True)
class Freshness:
    """``FRESHNESS = INTERVAL '<value>' <unit>``; ``unit`` is SECOND, MINUTE, HOUR or DAY."""

    value: int
    unit: str

    @property
    def seconds(self) -> int:
        return self.value * {"SECOND": 1, "MINUTE": 60, "HOUR": 3600, "DAY": 86400}[self.unit]

    def __str__(self) -> str:
        return f"INTERVAL '{self.value}' {self.unit}"


class RefreshMode(enum.Enum):
    CONTINUOUS = "CONTINUOUS"
    FULL = "FULL"


class RefreshStatus(enum.Enum):
    INITIALIZING = "INITIALIZING"
    ACTIVATED = "ACTIVATED"
    SUSPENDED = "SUSPENDED"


def _no_options() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True)
class MaterializedTable:
    """What the catalog keeps of one materialized table besides its columns."""

    identifier: tuple[str, str, str]
    query: str
    freshness: Freshness
    logical_mode: str  # AUTOMATIC, CONTINUOUS or FULL: what the statement said
    mode: RefreshMode
    status: RefreshStatus = RefreshStatus.INITIALIZING
    handler_description: str | None = None
    handler_bytes: bytes | None = None
    primary_key: tuple[str, ...] = ()
    partition_keys: tuple[str, ...] = ()
    comment: str | None = None
    options: Mapping[str, str] = field(default_factory=_no_options)
    #: The authenticated user who created it; None when made without authentication.
    owner: str | None = None

    @property
    def name(self) -> str:
        """``catalog.database.table``, each part quoted with backticks where needed."""
        from sparkgate.sql.quoting import quote_identifier

        return ".".join(quote_identifier(part) for part in self.identifier)

    def with_status(self, status: RefreshStatus) -> MaterializedTable:
        return replace(self, status=status)

    def with_handler(self, description: str | None, data: bytes | None) -> MaterializedTable:
        return replace(self, handler_description=description, handler_bytes=data)

    def properties(self) -> dict[str, str]:
        """The table properties that hold this definition."""
        props = {
            _QUERY: self.query,
            _FRESHNESS: f"{self.freshness.value} {self.freshness.unit}",
            _LOGICAL_MODE: self.logical_mode,
            _MODE: self.mode.value,
            _STATUS: self.status.value,
        }
        if self.handler_description is not None:
            props[_HANDLER_DESCRIPTION] = self.handler_description
        if self.handler_bytes is not None:
            props[_HANDLER_BYTES] = base64.b64encode(self.handler_bytes).decode()
        if self.primary_key:
            props[_PRIMARY_KEY] = ",".join(self.primary_key)
        for key, value in self.options.items():
            props[_OPTION + key] = value
        if self.owner is not None:
            props[_OWNER] = self.owner
        return props

    @classmethod
    def from_properties(
        cls,
        identifier: tuple[str, str, str],
        props: Mapping[str, str],
        partition_keys: tuple[str, ...] = (),
        comment: str | None = None,
    ) -> MaterializedTable | None:
        """The definition in a table's properties, or None for a plain table."""
        if _QUERY not in props:
            return None
        value, _, unit = props.get(_FRESHNESS, "").partition(" ")
        handler = props.get(_HANDLER_BYTES)
        return cls(
            identifier,
            props[_QUERY],
            Freshness(int(value), unit),
            props.get(_LOGICAL_MODE, props.get(_MODE, "FULL")),
            RefreshMode(props.get(_MODE, "FULL")),
            RefreshStatus(props.get(_STATUS, "INITIALIZING")),
            props.get(_HANDLER_DESCRIPTION),
            base64.b64decode(handler) if handler else None,
            tuple(k for k in props.get(_PRIMARY_KEY, "").split(",") if k),
            partition_keys,
            comment,
            MappingProxyType(
                {k[len(_OPTION) :]: v for k, v in props.items() if k.startswith(_OPTION)}
            ),
            props.get(_OWNER),
        )


def freshness_of(duration: timedelta) -> Freshness:
    """A configured default freshness in the largest unit that is exact."""
    seconds = int(duration.total_seconds())
    for unit, size in (("DAY", 86400), ("HOUR", 3600), ("MINUTE", 60)):
        if seconds % size == 0:
            return Freshness(seconds // size, unit)
    return Freshness(max(seconds, 1), "SECOND")


def derive_mode(
    freshness: Freshness | None,
    mode: str | None,
    *,
    threshold: timedelta,
    default_continuous: timedelta,
    default_full: timedelta,
) -> tuple[Freshness, RefreshMode]:
    """Flink 2.2's rule: the mode a statement gives, else CONTINUOUS below the
    threshold and FULL from it; without FRESHNESS the mode's default one
    (CONTINUOUS's when neither is given)."""
    if freshness is None:
        chosen = RefreshMode(mode) if mode else RefreshMode.CONTINUOUS
        default = default_continuous if chosen is RefreshMode.CONTINUOUS else default_full
        return freshness_of(default), chosen
    if mode:
        return freshness, RefreshMode(mode)
    below = freshness.seconds < threshold.total_seconds()
    return freshness, RefreshMode.CONTINUOUS if below else RefreshMode.FULL


def cron_of(freshness: Freshness) -> str:
    """The refresh workflow's cron expression (Flink's rules): seconds and minutes
    must divide 60, hours 24, and days can only be 1."""
    value, unit = freshness.value, freshness.unit
    ok = {
        "SECOND": 60 % value == 0,
        "MINUTE": 60 % value == 0,
        "HOUR": 24 % value == 0,
        "DAY": value == 1,
    }[unit]
    if not ok:
        rule = {
            "SECOND": "a number of seconds that divides 60",
            "MINUTE": "a number of minutes that divides 60",
            "HOUR": "a number of hours that divides 24",
            "DAY": "one day",
        }[unit]
        raise ExecutionError(
            f"In FULL refresh mode the freshness {freshness} cannot be a cron expression: "
            f"it must be {rule} (or use REFRESH_MODE = CONTINUOUS)."
        )
    return _CRON[unit].format(value)
