from __future__ import annotations

import threading
import time

import pyarrow as pa
import pytest

from sparkgate.api.results import RowKind
from sparkgate.service.result.buffer import BufferClosedError, ResultBuffer


def batch(start: int, n: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(range(start, start + n), pa.int64())], ["x"])


def values(take_batches: tuple[pa.RecordBatch, ...]) -> list[int]:
    return [v for b in take_batches for v in b.column(0).to_pylist()]


def test_take_returns_rows_in_order_across_batches() -> None:
    buf = ResultBuffer(100)
    buf.put(batch(0, 3))
    buf.put(batch(3, 4))
    buf.finish()
    first = buf.take(5)
    assert values(first.batches) == [0, 1, 2, 3, 4]
    assert not first.end_of_stream
    second = buf.take(5)
    assert values(second.batches) == [5, 6]
    assert second.end_of_stream


def test_batch_larger_than_bound_is_sliced_and_bound_holds() -> None:
    buf = ResultBuffer(10)
    produced = threading.Event()

    def produce() -> None:
        buf.put(batch(0, 35))
        buf.finish()
        produced.set()

    threading.Thread(target=produce, daemon=True).start()
    seen: list[int] = []
    while True:
        assert buf.buffered_rows <= 10
        take = buf.take(4, wait=1)
        seen.extend(values(take.batches))
        if take.end_of_stream:
            break
    assert seen == list(range(35))
    assert buf.peak_rows <= 10
    assert produced.wait(1)


def test_producer_blocks_while_full() -> None:
    buf = ResultBuffer(5)
    buf.put(batch(0, 5))
    done = threading.Event()
    threading.Thread(target=lambda: (buf.put(batch(5, 1)), done.set()), daemon=True).start()
    assert not done.wait(0.2)
    buf.take(1)
    assert done.wait(2)


def test_close_unblocks_producer_with_error() -> None:
    buf = ResultBuffer(1)
    buf.put(batch(0, 1))
    errors: list[BaseException] = []

    def produce() -> None:
        try:
            buf.put(batch(1, 1))
        except BufferClosedError as exc:
            errors.append(exc)

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    time.sleep(0.1)
    buf.close()
    t.join(2)
    assert len(errors) == 1
    with pytest.raises(BufferClosedError):
        buf.put(batch(2, 1))


def test_take_waits_then_returns_empty_when_nothing_arrives() -> None:
    buf = ResultBuffer(10)
    start = time.monotonic()
    take = buf.take(10, wait=0.2)
    assert take.num_rows == 0 and not take.end_of_stream
    assert time.monotonic() - start >= 0.18


def test_take_wakes_as_soon_as_rows_arrive() -> None:
    buf = ResultBuffer(10)
    threading.Timer(0.1, lambda: buf.put(batch(0, 2))).start()
    take = buf.take(10, wait=5)
    assert values(take.batches) == [0, 1]


def test_error_is_raised_after_rows_before_it() -> None:
    buf = ResultBuffer(10)
    buf.put(batch(0, 2))
    buf.fail(RuntimeError("boom"))
    assert values(buf.take(10).batches) == [0, 1]
    with pytest.raises(RuntimeError, match="boom"):
        buf.take(10)


def test_row_kinds_follow_their_rows_through_slicing() -> None:
    buf = ResultBuffer(3)
    kinds = (RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE)
    t = threading.Thread(target=lambda: (buf.put(batch(0, 4), kinds), buf.finish()))
    t.start()
    got: list[RowKind] = []
    while True:
        take = buf.take(2, wait=1)
        got.extend(take.kinds or ())
        if take.end_of_stream:
            break
    t.join()
    assert tuple(got) == kinds


def test_mismatched_kinds_rejected() -> None:
    with pytest.raises(ValueError):
        ResultBuffer(3).put(batch(0, 2), (RowKind.INSERT,))
