"""A streaming query's result as a changelog (FLIP-24's materialized result stream).

Spark's micro-batches say what the result *is* (complete mode) or which rows
are *new* (update and append modes); a client wants what *changed*. The
:class:`ChangelogDiffer` keeps the last emitted row per key and turns each
micro-batch into INSERT / UPDATE_BEFORE / UPDATE_AFTER / DELETE rows:

* append mode (no aggregation): every row is an INSERT, no state is kept;
* update mode (an aggregation whose grouping columns are in the output): a new
  key is an INSERT, a changed key an UPDATE_BEFORE (the previous row) plus an
  UPDATE_AFTER;
* complete mode (an aggregation whose key is not visible): each batch is the
  whole result, diffed as a multiset against the previous one: vanished rows
  are DELETEs, new ones INSERTs.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

from sparkgate.api.results import RowKind
from sparkgate.sql.quoting import quote_identifier

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "KIND_COLUMN",
    "ROW_KINDS",
    "ChangelogDiffer",
    "OutputMode",
    "by_name",
    "kind_of",
    "replay",
]

Row = tuple[Any, ...]

# A frame that is a changelog already (a compiled plan's operators) says each
# row's kind in this last column, as Flink's RowKind byte.
KIND_COLUMN = "__sparkgate_kind"
ROW_KINDS = (RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE)


def kind_of(frame: DataFrame) -> list[str]:
    """``[KIND_COLUMN]`` when ``frame`` is a changelog (its last column), else ``[]``."""
    return [KIND_COLUMN] if frame.columns[-1] == KIND_COLUMN else []


def by_name(frame: DataFrame, columns: Sequence[str]) -> DataFrame:
    """``frame``'s ``columns``, in that order; a changelog's kind column stays last."""
    return frame.select(*(quote_identifier(c) for c in [*columns, *kind_of(frame)]))


class OutputMode(enum.Enum):
    APPEND = "append"
    UPDATE = "update"
    COMPLETE = "complete"
    # Rows carry their kind (KIND_COLUMN, last); Spark runs the query in append mode.
    CHANGELOG = "changelog"

    @property
    def spark_mode(self) -> str:
        return "append" if self is OutputMode.CHANGELOG else self.value


def _frozen(value: Any) -> Hashable:
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    return value  # type: ignore[no-any-return]


def _key(row: Row) -> Hashable:
    return tuple(_frozen(v) for v in row)


class ChangelogDiffer:
    """Turns micro-batches into change rows; ``key`` indexes the grouping columns."""

    def __init__(self, mode: OutputMode, key: Sequence[int] | None = None) -> None:
        if mode is OutputMode.UPDATE and key is None:
            raise ValueError("update mode needs the key columns")
        self.mode = mode
        self.key = tuple(key) if key is not None else None
        self._last: dict[Hashable, Row] = {}
        self._snapshot: Counter[Hashable] = Counter()
        self._rows: dict[Hashable, Row] = {}

    @property
    def state_size(self) -> int:
        return len(self._last) + len(self._rows)

    def apply(self, rows: Sequence[Row]) -> list[tuple[RowKind, Row]]:
        if self.mode is OutputMode.APPEND:
            return [(RowKind.INSERT, row) for row in rows]
        if self.mode is OutputMode.CHANGELOG:
            return [(ROW_KINDS[row[-1]], row[:-1]) for row in rows]
        if self.mode is OutputMode.UPDATE:
            return self._update(rows)
        return self._complete(rows)

    def _update(self, rows: Sequence[Row]) -> list[tuple[RowKind, Row]]:
        assert self.key is not None
        out: list[tuple[RowKind, Row]] = []
        for row in rows:
            key = tuple(_frozen(row[i]) for i in self.key)
            old = self._last.get(key)
            if old is None:
                out.append((RowKind.INSERT, row))
            elif _key(old) != _key(row):
                out.append((RowKind.UPDATE_BEFORE, old))
                out.append((RowKind.UPDATE_AFTER, row))
            else:
                continue
            self._last[key] = row
        return out

    def _complete(self, rows: Sequence[Row]) -> list[tuple[RowKind, Row]]:
        snapshot: Counter[Hashable] = Counter()
        seen: dict[Hashable, Row] = {}
        for row in rows:
            key = _key(row)
            snapshot[key] += 1
            seen[key] = row
        out: list[tuple[RowKind, Row]] = []
        for key, count in (self._snapshot - snapshot).items():
            out.extend((RowKind.DELETE, self._rows[key]) for _ in range(count))
        for key, count in (snapshot - self._snapshot).items():
            out.extend((RowKind.INSERT, seen[key]) for _ in range(count))
        self._snapshot = snapshot
        self._rows = seen
        return out


def replay(changes: Sequence[tuple[RowKind, Row]]) -> Counter[Hashable]:
    """The final table (as a multiset of rows) a changelog describes."""
    table: Counter[Hashable] = Counter()
    for kind, row in changes:
        if kind in (RowKind.INSERT, RowKind.UPDATE_AFTER):
            table[_key(row)] += 1
        else:
            key = _key(row)
            if table[key] <= 0:
                raise ValueError(f"{kind.name} of a row that is not in the table: {row}")
            table[key] -= 1
    return +table
