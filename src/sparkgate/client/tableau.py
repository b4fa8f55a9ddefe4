"""Flink's tableau look: a bordered table printed row by row as pages arrive.

A batch result's values are never cut: its columns are as wide as the values
of the first page, and as the type's widest value where the type bounds it
(BIGINT: 20) when the result is longer than that page; a later value wider
than its column widens it from that row on (a border line marks the change),
so memory holds one page whatever the result's size. A streaming result's
widths come from the columns' logical types, capped by ``max_width``, so rows
print as they arrive; a value wider than its column is cut and ends in ``...``.
Values are right-aligned and NULL prints as ``<NULL>``, as in Flink.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sparkgate.api.types import (
    DecimalType,
    LocalZonedTimestampType,
    LogicalType,
    TimestampType,
    TimeType,
    TypeRoot,
)
from sparkgate.client.executor import TextRow
from sparkgate.client.terminal import Terminal, display_width

__all__ = [
    "NULL_TEXT",
    "TRUNCATED",
    "TableauPrinter",
    "bounded_width",
    "column_widths",
    "row_count_text",
    "type_width",
]

NULL_TEXT = "<NULL>"
TRUNCATED = "..."

_FIXED_WIDTHS = {
    TypeRoot.BOOLEAN: 5,
    TypeRoot.TINYINT: 4,
    TypeRoot.SMALLINT: 6,
    TypeRoot.INTEGER: 11,
    TypeRoot.BIGINT: 20,
    TypeRoot.FLOAT: 14,
    TypeRoot.DOUBLE: 23,
    TypeRoot.DATE: 10,
}


def bounded_width(logical_type: LogicalType) -> int | None:
    """Cells any value of this type takes at most, or None when a value may be any width."""
    width = _FIXED_WIDTHS.get(logical_type.type_root)
    if width is None:
        if isinstance(logical_type, DecimalType):
            width = logical_type.precision + 2
        elif isinstance(logical_type, TimeType):
            width = 8 + (logical_type.precision + 1 if logical_type.precision else 0)
        elif isinstance(logical_type, (TimestampType, LocalZonedTimestampType)):
            width = 19 + (logical_type.precision + 1 if logical_type.precision else 0)
        else:
            return None
    if logical_type.nullable:
        width = max(width, len(NULL_TEXT))
    return width


def type_width(logical_type: LogicalType, max_width: int) -> int:
    """Cells a value of this type may need (Flink's width by type), capped at ``max_width``."""
    width = bounded_width(logical_type)
    return max_width if width is None else min(width, max_width)


def _cell(value: str | None) -> str:
    return NULL_TEXT if value is None else value


def column_widths(
    names: Sequence[str],
    rows: Iterable[Sequence[str | None]],
    max_width: int | None,
    types: Sequence[LogicalType] | None = None,
) -> list[int]:
    """Widths for ``names`` from the values in ``rows`` (and ``types``, when given),
    each at most ``max_width`` (None: as wide as the values)."""
    widths = [display_width(name) for name in names]
    for row in rows:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], display_width(_cell(value)))
    if max_width is None:
        return widths
    if types is not None:
        widths = [max(w, type_width(t, max_width)) for w, t in zip(widths, types, strict=True)]
    return [min(w, max(max_width, len(TRUNCATED) + 1)) for w in widths]


def _fit(text: str, width: int) -> str:
    """``text`` right-aligned in ``width`` cells, cut with ``...`` when too wide."""
    cells = display_width(text)
    if cells <= width:
        return " " * (width - cells) + text
    keep = width - len(TRUNCATED)
    out: list[str] = []
    used = 0
    for ch in text:
        w = display_width(ch)
        if used + w > keep:
            break
        out.append(ch)
        used += w
    return "".join(out) + TRUNCATED + " " * (keep - used)


def row_count_text(count: int, *, empty: str = "Empty set") -> str:
    if count == 0:
        return empty
    return "1 row in set" if count == 1 else f"{count} rows in set"


class TableauPrinter:
    """One bordered table: ``header()``, then ``rows(...)`` any number of times, ``end()``.

    With ``grow``, no value is ever cut: a value wider than its column widens
    the column from that row on, and a border line marks where widths change.
    Without it, wider values are cut and end in ``...``.
    """

    def __init__(
        self,
        terminal: Terminal,
        names: Sequence[str],
        widths: Sequence[int],
        *,
        grow: bool = False,
    ) -> None:
        if len(names) != len(widths):
            raise ValueError(f"{len(names)} column names but {len(widths)} widths")
        self._terminal = terminal
        self._names = list(names)
        self._widths = list(widths)
        self._grow = grow
        self._border = self._border_line()
        self.count = 0

    def _border_line(self) -> str:
        return "+" + "+".join("-" * (w + 2) for w in self._widths) + "+"

    @property
    def widths(self) -> list[int]:
        return list(self._widths)

    def _format(self, cells: Sequence[str]) -> str:
        fitted = (_fit(c, w) for c, w in zip(cells, self._widths, strict=True))
        return "| " + " | ".join(fitted) + " |"

    def header(self) -> None:
        self._terminal.write(f"{self._border}\n{self._format(self._names)}\n{self._border}\n")

    def rows(self, rows: Iterable[TextRow | Sequence[str | None]]) -> None:
        lines: list[str] = []
        count = 0
        widths = self._widths
        for row in rows:
            parts: list[str] = []
            grown = False
            for i, value in enumerate(row):
                text = NULL_TEXT if value is None else value
                cells = display_width(text)
                width = widths[i]
                if cells > width:
                    if not self._grow:
                        parts.append(_fit(text, width))
                        continue
                    widths[i] = width = cells  # this column is wider from here on
                    grown = True
                parts.append(" " * (width - cells) + text)
            if grown:
                self._border = self._border_line()
                lines.append(self._border)
            lines.append("| " + " | ".join(parts) + " |")
            count += 1
        if lines:
            self.count += count
            self._terminal.write("\n".join(lines) + "\n")

    def end(self) -> None:
        self._terminal.write(self._border + "\n")
