"""The queries the readers run and what their results must be, row for row.

A verified query covers ``range(offset, offset + n)`` with a BIGINT, a
DECIMAL(12, 2), a non-ASCII string, a TIMESTAMP (without time zone, so the
expected value does not depend on the gateway's zone) and a nullable INT. Each
format's rows are brought to one canonical tuple per row; the result is right
when the count and the checksum (order-independent) both match.
"""

from __future__ import annotations

import datetime as dt
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "BIG_SELECT",
    "BigCheck",
    "Canonical",
    "Verified",
    "arrow_rows",
    "canonical",
    "canonical_rows",
]

Canonical = tuple[int, str, str, str, int | None]

_EPOCH = dt.datetime(2024, 1, 1)
_CENT = Decimal("0.01")
BIG_SELECT = "SELECT id, id * 2 AS d FROM range({rows})"


def canonical(values: Sequence[Any]) -> Canonical:
    """One row from any client (JSON fields, an Arrow row, a DB-API tuple) in one form."""
    ident, amount, name, ts, maybe = values
    if isinstance(ts, str):
        # Flink's JSON writes TIMESTAMP as ISO text; Python 3.10 wants no trailing Z.
        ts = dt.datetime.fromisoformat(ts.removesuffix("Z").replace(" ", "T"))
    stamp = ts.replace(tzinfo=None).isoformat(sep=" ")
    return (
        int(ident),
        str(Decimal(str(amount)).quantize(_CENT)),
        str(name),
        stamp,
        None if maybe is None else int(maybe),
    )


def canonical_rows(rows: Iterable[Sequence[Any]]) -> list[Canonical]:
    return [canonical(row) for row in rows]


def arrow_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return list(zip(*columns, strict=True))


def _checksum(rows: Iterable[Canonical]) -> int:
    """Sum of per-row CRCs: independent of the order the rows came in."""
    return sum(zlib.crc32(repr(row).encode("utf-8")) for row in rows) & 0xFFFFFFFFFFFF


@dataclass(frozen=True)
class Verified:
    """One verified query and its expected rows."""

    offset: int
    n: int

    @property
    def sql(self) -> str:
        return (
            "SELECT id, CAST(id * 1.25 AS DECIMAL(12, 2)) AS amount, "
            "concat('row-', id, '-\u00fc') AS name, "
            "TIMESTAMP_NTZ '2024-01-01 00:00:00' + make_dt_interval(0, 0, 0, id) AS ts, "
            "IF(id % 7 = 0, NULL, CAST(id % 100 AS INT)) AS maybe "
            f"FROM range({self.offset}, {self.offset + self.n})"
        )

    def expected(self) -> list[Canonical]:
        return [
            (
                i,
                str((Decimal(i) * Decimal("1.25")).quantize(_CENT)),
                f"row-{i}-\u00fc",
                (_EPOCH + dt.timedelta(seconds=i)).isoformat(sep=" "),
                None if i % 7 == 0 else i % 100,
            )
            for i in range(self.offset, self.offset + self.n)
        ]

    def mismatch(self, rows: Sequence[Canonical]) -> str | None:
        """None when ``rows`` are exactly the expected ones; else what differs."""
        expected = self.expected()
        got_sum, want_sum = _checksum(rows), _checksum(expected)
        if len(rows) == len(expected) and got_sum == want_sum:
            return None
        missing = set(expected) - set(rows)
        extra = set(rows) - set(expected)
        sample = sorted(extra, key=repr)[:2] or sorted(missing, key=repr)[:2]
        return (
            f"range({self.offset}, +{self.n}): {len(rows)} rows (want {len(expected)}), "
            f"checksum {got_sum:x} (want {want_sum:x}), {len(missing)} missing, "
            f"{len(extra)} unexpected, e.g. {sample}"
        )


class BigCheck:
    """Running totals of ``SELECT id, id * 2 AS d FROM range(N)`` read in Arrow pages."""

    def __init__(self, rows: int) -> None:
        self.want = rows
        self.rows = 0
        self.id_sum = 0
        self.bad_pages = 0

    def add(self, table: pa.Table) -> None:
        ids, doubled = table.column("id"), table.column("d")
        self.rows += table.num_rows
        self.id_sum += int(pc.sum(ids).as_py())
        if not pc.all(pc.equal(pc.multiply(ids, 2), doubled)).as_py():
            self.bad_pages += 1

    def mismatch(self) -> str | None:
        want_sum = self.want * (self.want - 1) // 2
        if self.rows == self.want and self.id_sum == want_sum and not self.bad_pages:
            return None
        return (
            f"{self.rows} rows (want {self.want}), sum(id) {self.id_sum} (want {want_sum}), "
            f"{self.bad_pages} pages with d != 2 * id"
        )
