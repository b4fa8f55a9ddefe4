"""The stateful operators of compiled plans, on Structured Streaming's ``transformWithState``.

Every operator reads and writes a changelog: each row carries its kind in
the last column (Flink's RowKind bytes: 0 ``+I``, 1 ``-U``, 2 ``+U``, 3
``-D``), so operators chain as Flink's do and the result reaches the
client as the same changelog as any streaming query.

State TTL (seed 001's design): each input's state is one value per key with
its own TTL and policy (:class:`TtlValue`). Processing-time ``OnWrite`` is
Spark's own TTL (set on every write, expired rows removed by Spark), the
semantics Flink's SQL operators have. Every other policy keeps a
last-modified timestamp beside the value and one timer per state and key:
the timer, when it fires, deletes the value if it was not touched since,
and otherwise moves to ``last modified + TTL``. A value past its TTL is
never returned, even before its timer fired. Expired state is deleted, not
hidden, so state stays bounded however the key space grows; an expiry emits
nothing (as in Flink: the operator forgets, it does not retract).

These classes run in Spark's Python workers; they are configured with plain
data (a node's JSON fields) and import nothing of the gateway's service.
"""

from __future__ import annotations

import operator
import pickle
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any

from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)
from pyspark.sql.types import BinaryType, LongType, StructField, StructType

__all__ = [
    "DELETE",
    "INSERT",
    "UPDATE_AFTER",
    "UPDATE_BEFORE",
    "AggregateOperator",
    "DeduplicateOperator",
    "JoinOperator",
    "Operator",
    "RankOperator",
    "TtlValue",
    "time_mode",
]

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
_ADDS = (INSERT, UPDATE_AFTER)
_VALUE = StructType([StructField("blob", BinaryType()), StructField("touched", LongType())])

Row = tuple[Any, ...]
Out = Iterator[Row]


def time_mode(states: Sequence[dict[str, Any]]) -> str:
    """``transformWithState``'s time mode for a node's states."""
    if any(s["ttlTime"] == "EVENT_TIME" and s["ttlMs"] > 0 for s in states):
        return "EventTime"
    return "ProcessingTime"  # Spark's own TTL, and timers, need it


def _native(spec: dict[str, Any]) -> bool:
    """Spark's own TTL has the policy's semantics: processing time, set on each write."""
    return bool(spec["ttlUpdate"] == "OnWrite" and spec["ttlTime"] == "PROCESSING_TIME")


def _hashable(value: Any) -> Hashable:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    if hasattr(value, "asDict"):
        return tuple(_hashable(v) for v in value)
    return value  # type: ignore[no-any-return]


class TtlValue:
    """One keyed state with a TTL policy (see the module's docstring)."""

    def __init__(self, handle: StatefulProcessorHandle, spec: dict[str, Any]) -> None:
        self.ttl = int(spec["ttlMs"])
        self.update_on = str(spec["ttlUpdate"])
        self.event_time = spec["ttlTime"] == "EVENT_TIME"
        self.native = self.ttl > 0 and _native(spec)
        self.timed = self.ttl > 0 and not self.native
        self._handle = handle
        self._state = handle.getValueState(
            str(spec["name"]), _VALUE, self.ttl if self.native else None
        )

    def _stored(self) -> tuple[bytes, int]:
        stored = self._state.get()
        assert stored is not None
        return stored[0], int(stored[1])

    def _expires(self, touched: int) -> int:
        return touched + self.ttl

    def get(self, now: int, *, read: bool = True) -> Any:
        """The value (None when absent or past its TTL); ``read`` counts as a read."""
        if not self._state.exists():
            return None
        blob, touched = self._stored()
        if self.timed and now >= self._expires(touched):
            self.clear(touched)
            return None
        value = pickle.loads(blob)
        if read and self.timed and self.update_on in ("OnRead", "OnReadWrite") and now > touched:
            self._move(blob, touched, now)
        return value

    def put(self, value: Any, now: int) -> None:
        blob = pickle.dumps(value)
        if not self._state.exists():
            self._state.update((blob, now))
            if self.timed:
                self._handle.registerTimer(self._expires(now))
            return
        _, touched = self._stored()
        if self.timed and self.update_on in ("OnWrite", "OnReadWrite") and now > touched:
            self._move(blob, touched, now)
        else:
            self._state.update((blob, touched))

    def _move(self, blob: bytes, touched: int, now: int) -> None:
        self._state.update((blob, now))
        self._handle.deleteTimer(self._expires(touched))
        self._handle.registerTimer(self._expires(now))

    def clear(self, touched: int | None = None) -> None:
        if touched is None and self._state.exists():
            touched = self._stored()[1]
        self._state.clear()
        if self.timed and touched is not None:
            self._handle.deleteTimer(self._expires(touched))

    def expire(self, now: int) -> None:
        """A timer fired at ``now``: delete the value if untouched for its TTL."""
        if not self.timed or not self._state.exists():
            return
        _, touched = self._stored()
        if now >= self._expires(touched):
            self._state.clear()
        else:  # touched since: the timer was moved then; keep exactly one
            self._handle.registerTimer(self._expires(touched))


class Operator(StatefulProcessor):
    """Common parts: the states of the node, and the current time of a call."""

    def __init__(self, states: Sequence[dict[str, Any]], rowtime: int | None) -> None:
        self.specs = list(states)
        self.rowtime = rowtime
        self.values: list[TtlValue] = []
        self.names: list[str] = []

    def init(self, handle: StatefulProcessorHandle) -> None:
        from pyspark.sql import Row as SparkRow

        self.values = [TtlValue(handle, spec) for spec in self.specs]
        self._make = SparkRow(*self.names)

    def handleInputRows(  # type: ignore[override]
        self,
        key: Any,
        rows: Iterator[Row],
        timerValues: TimerValues,
    ) -> Iterator[Any]:
        make = self._make
        for values in self.apply(key, rows, timerValues):
            yield make(*values)

    def apply(self, key: Any, rows: Iterator[Row], timers: TimerValues) -> Out:
        """The change rows (values, kind last) a key's new rows make."""
        raise NotImplementedError

    def _now(self, value: TtlValue, timers: TimerValues, rows: Sequence[Row] = ()) -> int:
        if value.event_time:
            times = [
                int(row[self.rowtime].timestamp() * 1000)
                for row in rows
                if self.rowtime is not None and row[self.rowtime] is not None
            ]
            watermark = int(timers.getCurrentWatermarkInMs())
            return max([watermark, *times])
        return int(timers.getCurrentProcessingTimeInMs())

    def handleExpiredTimer(
        self,
        key: Any,
        timerValues: TimerValues,
        expiredTimerInfo: ExpiredTimerInfo,
    ) -> Iterator[Any]:
        for value in self.values:
            value.expire(self._now(value, timerValues))
        return iter(())

    def close(self) -> None:
        pass


class DeduplicateOperator(Operator):
    """Flink's deduplication: keep the first row of a key (emitted once), or the
    last (each new row updates the kept one)."""

    def __init__(
        self, states: Sequence[dict[str, Any]], rowtime: int | None, keep_last: bool
    ) -> None:
        super().__init__(states, rowtime)
        self.keep_last = keep_last

    def apply(self, key: Any, rows: Iterator[Row], timerValues: TimerValues) -> Out:
        state = self.values[0]
        for row in rows:
            now = self._now(state, timerValues, [row])
            data = tuple(row[:-1])
            kept = state.get(now)
            if kept is None:
                state.put(data if self.keep_last else True, now)
                yield (*data, INSERT)
            elif self.keep_last:
                state.put(data, now)
                yield (*kept, UPDATE_BEFORE)
                yield (*data, UPDATE_AFTER)


def _fold(kind: str, acc: Any, value: Any, sign: int, distinct: bool) -> Any:
    """One value added (sign 1) to or retracted (-1) from an accumulator."""
    if distinct or kind in ("MIN", "MAX"):
        counts: Counter[Any] = acc if acc is not None else Counter()
        if value is not None:
            counts[value] += sign
            if counts[value] <= 0:
                del counts[value]
        return counts
    total, count = acc if acc is not None else (None, 0)
    if value is None and kind != "COUNT*":
        return (total, count)
    if kind in ("COUNT", "COUNT*"):
        return (None, count + sign)
    total = value * sign if total is None else total + value * sign
    return (total, count + sign)


def _result(kind: str, acc: Any, distinct: bool, scale: int | None) -> Any:
    if distinct or kind in ("MIN", "MAX"):
        values = list(acc.elements()) if acc else []
        distinct_values = list(acc) if acc else []
        if kind.startswith("COUNT"):
            return len(distinct_values)
        if not distinct_values:
            return None
        if kind == "MIN":
            return min(distinct_values)
        if kind == "MAX":
            return max(distinct_values)
        pool = distinct_values if distinct else values
        total = sum(pool)
        return _average(total, len(pool), scale) if kind == "AVG" else total
    total, count = acc if acc is not None else (None, 0)
    if kind.startswith("COUNT"):
        return count
    if count <= 0 or total is None:
        return None
    return _average(total, count, scale) if kind == "AVG" else total


def _average(total: Any, count: int, scale: int | None) -> Any:
    if isinstance(total, Decimal):
        quantum = Decimal(1).scaleb(-(scale or 0))
        return (total / count).quantize(quantum)
    return total / count


class AggregateOperator(Operator):
    """Flink's group aggregate with retraction: COUNT, SUM, MIN, MAX, AVG, each
    optionally DISTINCT; one update pair per key and micro-batch."""

    def __init__(
        self,
        states: Sequence[dict[str, Any]],
        rowtime: int | None,
        keys: Sequence[int],
        calls: Sequence[dict[str, Any]],
    ) -> None:
        super().__init__(states, rowtime)
        self.keys = list(keys)
        self.calls = [
            (
                "COUNT*" if c["kind"] == "COUNT" and not c["argList"] else c["kind"],
                c["argList"][0] if c["argList"] else None,
                bool(c["distinct"]),
                c.get("scale"),
            )
            for c in calls
        ]

    def _output(self, key_values: Row, accs: Any) -> Row | None:
        if accs is None or accs[0] <= 0:
            return None
        results = tuple(
            _result(kind, acc, distinct, scale)
            for (kind, _, distinct, scale), acc in zip(self.calls, accs[1], strict=True)
        )
        return (*key_values, *results)

    def apply(self, key: Any, rows: Iterator[Row], timerValues: TimerValues) -> Out:
        state = self.values[0]
        batch = list(rows)
        now = self._now(state, timerValues, batch)
        accs = state.get(now)
        key_values = tuple(batch[0][i] for i in self.keys)
        before = self._output(key_values, accs)
        count, calls = (
            (accs[0], list(accs[1])) if accs is not None else (0, [None] * len(self.calls))
        )
        for row in batch:
            sign = 1 if row[-1] in _ADDS else -1
            count += sign
            for i, (kind, arg, distinct, _) in enumerate(self.calls):
                value = row[arg] if arg is not None else None
                calls[i] = _fold(kind, calls[i], value, sign, distinct)
        if count <= 0:
            state.clear()
            if before is not None:
                yield (*before, DELETE)
            return
        accs = (count, calls)
        state.put(accs, now)
        after = self._output(key_values, accs)
        if before is None:
            yield (*after, INSERT)  # type: ignore[misc]
        elif _hashable(before) != _hashable(after):
            yield (*before, UPDATE_BEFORE)
            yield (*after, UPDATE_AFTER)  # type: ignore[misc]


class JoinOperator(Operator):
    """Flink's regular join: each side's rows kept per key in the side's state,
    with its own TTL; outer sides padded with nulls. Its input is both sides in
    one stream: ``side`` (0 left, 1 right) and each side's columns."""

    def __init__(
        self,
        states: Sequence[dict[str, Any]],
        rowtime: int | None,
        join_type: str,
        side: int,
        left: Sequence[int],
        right: Sequence[int],
    ) -> None:
        super().__init__(states, rowtime)
        self.join_type = join_type
        self.side = side
        self.columns = (list(left), list(right))

    def _joined(self, left: Counter[Any], right: Counter[Any]) -> Counter[Any]:
        out: Counter[Any] = Counter()
        nulls = (tuple([None] * len(self.columns[0])), tuple([None] * len(self.columns[1])))
        for lrow, ln in left.items():
            for rrow, rn in right.items():
                out[lrow + rrow] += ln * rn
        if self.join_type in ("LEFT", "FULL") and not right:
            for lrow, ln in left.items():
                out[lrow + nulls[1]] += ln
        if self.join_type in ("RIGHT", "FULL") and not left:
            for rrow, rn in right.items():
                out[nulls[0] + rrow] += rn
        return out

    def apply(self, key: Any, rows: Iterator[Row], timerValues: TimerValues) -> Out:
        batch = list(rows)
        arrived = [[r for r in batch if r[self.side] == s] for s in (0, 1)]
        sides: list[Counter[Any]] = []
        nows = []
        for s, value in enumerate(self.values):
            now = self._now(value, timerValues, arrived[s] or arrived[1 - s])
            nows.append(now)
            # A side is read when the other side's rows probe it.
            kept = value.get(now, read=bool(arrived[1 - s]))
            sides.append(Counter(kept) if kept else Counter())
        before = self._joined(sides[0], sides[1])
        for s in (0, 1):
            for row in arrived[s]:
                data = tuple(row[i] for i in self.columns[s])
                sides[s][data] += 1 if row[-1] in _ADDS else -1
                if sides[s][data] <= 0:
                    del sides[s][data]
            if arrived[s]:
                if sides[s]:
                    self.values[s].put(dict(sides[s]), nows[s])
                else:
                    self.values[s].clear()
        after = self._joined(sides[0], sides[1])
        for row, n in (before - after).items():
            for _ in range(n):
                yield (*row, DELETE)
        for row, n in (after - before).items():
            for _ in range(n):
                yield (*row, INSERT)


class RankOperator(Operator):
    """Flink's top-N (ROW_NUMBER ... <= N): the kept rows of a key sorted, and
    the changes of the first N positions, with their row numbers."""

    def __init__(
        self,
        states: Sequence[dict[str, Any]],
        rowtime: int | None,
        order: Sequence[dict[str, Any]],
        limit: int,
        append_only: bool,
    ) -> None:
        super().__init__(states, rowtime)
        self.order = list(order)
        self.limit = limit
        self.append_only = append_only

    def _sorted(self, rows: Iterable[Row]) -> list[Row]:
        ordered = list(rows)
        for spec in reversed(self.order):
            index, ascending, nulls_first = spec["index"], spec["ascending"], spec["nullsFirst"]
            present = [r for r in ordered if r[index] is not None]
            missing = [r for r in ordered if r[index] is None]
            present.sort(key=operator.itemgetter(index), reverse=not ascending)
            ordered = missing + present if nulls_first else present + missing
        return ordered

    def apply(self, key: Any, rows: Iterator[Row], timerValues: TimerValues) -> Out:
        state = self.values[0]
        batch = list(rows)
        now = self._now(state, timerValues, batch)
        kept: list[Row] = state.get(now) or []
        before = kept[: self.limit]
        current = Counter(kept)
        for row in batch:
            data = tuple(row[:-1])
            current[data] += 1 if row[-1] in _ADDS else -1
            if current[data] <= 0:
                del current[data]
        ordered = self._sorted(current.elements())
        if self.append_only:
            ordered = ordered[: self.limit]  # rows past N can never come back
        if ordered:
            state.put(ordered, now)
        else:
            state.clear()
        after = ordered[: self.limit]
        for position in range(max(len(before), len(after))):
            old = before[position] if position < len(before) else None
            new = after[position] if position < len(after) else None
            if old is not None and new is not None and _hashable(old) == _hashable(new):
                continue
            number = position + 1
            if old is not None and new is not None:
                yield (*old, number, UPDATE_BEFORE)
                yield (*new, number, UPDATE_AFTER)
            elif old is not None:
                yield (*old, number, DELETE)
            elif new is not None:
                yield (*new, number, INSERT)
