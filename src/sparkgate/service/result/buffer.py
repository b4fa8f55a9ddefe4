"""A bounded buffer of Arrow batches between one producer and its fetchers.

The producer (a statement streaming its result from Spark) blocks while the
buffer holds ``max_rows`` rows or ``max_bytes`` bytes, so a slow client slows
the query, never the gateway's memory. Batches with more rows than the bound
are cut into slices first, so the row bound is a hard invariant; the byte
bound admits one slice into an empty buffer, so a single wide batch passes.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sparkgate.api.results import RowKind

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["BufferClosedError", "ResultBuffer", "Take"]


class BufferClosedError(Exception):
    """The consumer side is gone; the producer should stop."""


@dataclass(frozen=True)
class Take:
    batches: tuple[pa.RecordBatch, ...]
    kinds: tuple[RowKind, ...] | None
    end_of_stream: bool

    @property
    def num_rows(self) -> int:
        return sum(batch.num_rows for batch in self.batches)


class ResultBuffer:
    def __init__(self, max_rows: int, max_bytes: int | None = None) -> None:
        if max_rows < 1:
            raise ValueError("max_rows must be at least 1")
        self.max_rows = max_rows
        self.max_bytes = max_bytes
        self._items: deque[tuple[pa.RecordBatch, tuple[RowKind, ...] | None, int]] = deque()
        self._rows = 0
        self._bytes = 0
        self._finished = False
        self._closed = False
        self._error: BaseException | None = None
        self._cond = threading.Condition()
        self.peak_rows = 0
        self.total_rows = 0

    # -- producer side -------------------------------------------------------
    def put(self, batch: pa.RecordBatch, kinds: Sequence[RowKind] | None = None) -> None:
        """Append a batch, blocking while the buffer is full.

        Raises :class:`BufferClosedError` when the consumer closed the buffer.
        """
        if kinds is not None and len(kinds) != batch.num_rows:
            raise ValueError("one row kind per row is required")
        offset = 0
        row_bytes = batch.nbytes / batch.num_rows if batch.num_rows else 0.0
        while offset < batch.num_rows or (offset == 0 and batch.num_rows == 0):
            with self._cond:
                while not self._closed and self._full():
                    self._cond.wait()
                if self._closed:
                    raise BufferClosedError("result buffer closed")
                if batch.num_rows == 0:
                    return
                length = min(self.max_rows - self._rows, batch.num_rows - offset)
                piece = batch.slice(offset, length)
                piece_kinds = None if kinds is None else tuple(kinds[offset : offset + length])
                size = int(row_bytes * length)
                self._items.append((piece, piece_kinds, size))
                self._rows += length
                self._bytes += size
                self.total_rows += length
                self.peak_rows = max(self.peak_rows, self._rows)
                offset += length
                self._cond.notify_all()

    def _full(self) -> bool:
        if self._rows >= self.max_rows:
            return True
        return self.max_bytes is not None and self._rows > 0 and self._bytes >= self.max_bytes

    def finish(self) -> None:
        """Mark the end of the stream."""
        with self._cond:
            self._finished = True
            self._cond.notify_all()

    def fail(self, error: BaseException) -> None:
        with self._cond:
            self._error = error
            self._finished = True
            self._cond.notify_all()

    # -- consumer side -------------------------------------------------------
    def take(self, max_rows: int, wait: float = 0.0) -> Take:
        """Remove up to ``max_rows`` rows, waiting up to ``wait`` seconds for any.

        A producer error is raised here once the rows before it are taken.
        """
        deadline = time.monotonic() + max(wait, 0.0)
        with self._cond:
            while not self._items and not self._finished and not self._closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            batches: list[pa.RecordBatch] = []
            kinds: list[RowKind] = []
            has_kinds = False
            taken = 0
            freed = 0
            while self._items and taken < max_rows:
                batch, batch_kinds, size = self._items.popleft()
                if batch.num_rows > max_rows - taken:
                    keep = max_rows - taken
                    rest = batch.slice(keep)
                    rest_kinds = None if batch_kinds is None else batch_kinds[keep:]
                    kept = size * keep // batch.num_rows
                    self._items.appendleft((rest, rest_kinds, size - kept))
                    size = kept
                    batch = batch.slice(0, keep)
                    batch_kinds = None if batch_kinds is None else batch_kinds[:keep]
                freed += size
                if batch_kinds is not None and not has_kinds:
                    kinds = [RowKind.INSERT] * taken
                    has_kinds = True
                if has_kinds:
                    kinds.extend(batch_kinds or (RowKind.INSERT,) * batch.num_rows)
                batches.append(batch)
                taken += batch.num_rows
            self._rows -= taken
            self._bytes -= freed
            if taken:
                self._cond.notify_all()
            if not self._items and self._error is not None:
                if taken:
                    return Take(tuple(batches), tuple(kinds) if has_kinds else None, False)
                raise self._error
            eos = self._finished and not self._items
            return Take(tuple(batches), tuple(kinds) if has_kinds else None, eos)

    def close(self) -> None:
        """Drop buffered rows and make the producer stop at its next put."""
        with self._cond:
            self._closed = True
            self._items.clear()
            self._rows = 0
            self._bytes = 0
            self._cond.notify_all()

    @property
    def buffered_rows(self) -> int:
        with self._cond:
            return self._rows
