"""The operation state machine with fake executors: no Spark involved."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import pyarrow as pa
import pytest

from sparkgate.api.errors import (
    ExecutionError,
    IllegalStateError,
    InvalidTokenError,
    OperationNotFoundError,
)
from sparkgate.api.results import FetchOrientation, ResultType, RowKind
from sparkgate.api.status import OperationStatus as S
from sparkgate.api.types import BIGINT, ResultSchema
from sparkgate.service.operation.operation import Execution, Operation
from sparkgate.service.operation.pool import WorkerPool
from sparkgate.service.result.fetcher import ResultTraits

SCHEMA = ResultSchema.of(("x", BIGINT))
Rows = Iterator[tuple[pa.RecordBatch, tuple[RowKind, ...] | None]]


def rows(n: int, start: int = 0) -> tuple[pa.RecordBatch, None]:
    return pa.RecordBatch.from_arrays([pa.array(range(start, start + n), pa.int64())], ["x"]), None


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    p = WorkerPool(1, 4, 1.0)
    p.start()
    yield p
    p.stop()


def wait_status(op: Operation, *wanted: S, timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while op.status not in wanted:
        assert time.monotonic() < deadline, f"status stayed {op.status}"
        time.sleep(0.01)


def test_finishes_and_streams_all_rows(pool: WorkerPool) -> None:
    op = Operation(lambda _op: Execution(SCHEMA, ResultTraits(True), [rows(3), rows(2, 3)]))
    seen: list[S] = []
    op.submit(pool.submit)
    wait_status(op, S.FINISHED)
    assert op.wait_done(5)
    page = op.fetch(0, 10, wait=1)
    assert page.rows() == [(0,), (1,), (2,), (3,), (4,)]
    assert op.fetch(1, 10).result_type is ResultType.EOS
    seen.append(op.status)
    op.close()
    assert op.status is S.CLOSED


def test_not_ready_until_schema_is_known(pool: WorkerPool) -> None:
    release = threading.Event()

    def slow(_op: Operation) -> Execution:
        release.wait(5)
        return Execution(SCHEMA, ResultTraits(), [rows(1)])

    op = Operation(slow)
    op.submit(pool.submit)
    page = op.fetch(0, 10)
    assert page.result_type is ResultType.NOT_READY and page.next_token == 0
    with pytest.raises(InvalidTokenError):
        op.fetch(1, 10)
    release.set()
    page = op.fetch(0, 10, wait=5)
    assert page.result_type is ResultType.PAYLOAD


def test_error_surfaces_on_fetch_and_info(pool: WorkerPool) -> None:
    def failing(_op: Operation) -> Execution:
        raise ExecutionError("bad", causes=("X: outer", "Y: root"))

    op = Operation(failing)
    op.submit(pool.submit)
    wait_status(op, S.ERROR)
    assert isinstance(op.info().error, ExecutionError)
    with pytest.raises(ExecutionError) as info:
        op.fetch(0, 10)
    assert info.value.root_cause == "Y: root"


def test_error_while_streaming_moves_finished_to_error(pool: WorkerPool) -> None:
    def produce() -> Rows:
        yield rows(2)
        raise ExecutionError("mid-stream")

    op = Operation(lambda _op: Execution(SCHEMA, ResultTraits(), produce()))
    op.submit(pool.submit)
    wait_status(op, S.ERROR)
    with pytest.raises(ExecutionError, match="mid-stream"):
        op.fetch(0, 10)


def test_cancel_stops_a_blocked_producer_and_calls_interrupt(pool: WorkerPool) -> None:
    interrupted = threading.Event()
    closed = threading.Event()

    def endless() -> Rows:
        try:
            i = 0
            while True:
                yield rows(10, i)
                i += 10
        finally:
            closed.set()

    op = Operation(
        lambda _op: Execution(SCHEMA, ResultTraits(), endless()),
        buffer_rows=20,
        interrupt=lambda _op: interrupted.set(),
    )
    op.submit(pool.submit)
    wait_status(op, S.FINISHED)
    op.cancel()
    assert op.status is S.CANCELED
    assert interrupted.wait(2)
    assert closed.wait(2), "the producer's generator must be closed"
    assert op.wait_done(2)
    with pytest.raises(IllegalStateError, match="cancelled"):
        op.fetch(0, 10)


def test_cancel_while_executor_runs_wins_over_late_finish(pool: WorkerPool) -> None:
    started, release = threading.Event(), threading.Event()

    def slow(_op: Operation) -> Execution:
        started.set()
        release.wait(5)
        return Execution(SCHEMA, ResultTraits(), [rows(1)])

    op = Operation(slow)
    op.submit(pool.submit)
    assert started.wait(5)
    op.cancel()
    release.set()
    assert op.wait_done(5)
    assert op.status is S.CANCELED


def test_timeout_moves_to_timeout_and_interrupts(pool: WorkerPool) -> None:
    interrupted = threading.Event()
    release = threading.Event()

    def slow(_op: Operation) -> Execution:
        release.wait(5)
        raise RuntimeError("interrupted by cancel")

    op = Operation(slow, timeout=0.2, interrupt=lambda _op: (interrupted.set(), release.set()))
    op.submit(pool.submit)
    wait_status(op, S.TIMEOUT)
    assert interrupted.wait(2)
    assert op.wait_done(5)
    assert op.status is S.TIMEOUT, "the executor's failure must not overwrite TIMEOUT"
    with pytest.raises(IllegalStateError, match="timed out"):
        op.fetch(0, 1)


def test_close_is_idempotent_and_forbids_cancel(pool: WorkerPool) -> None:
    op = Operation(lambda _op: Execution(SCHEMA, ResultTraits(), [rows(1)]))
    op.submit(pool.submit)
    op.wait_done(5)
    op.close()
    op.close()
    with pytest.raises(OperationNotFoundError):
        op.cancel()
    with pytest.raises(OperationNotFoundError):
        op.fetch(0, 1)


def test_orientation_fetch_and_log() -> None:
    op = Operation(
        lambda o: (o.append_log("line 1"), Execution(SCHEMA, ResultTraits(), [rows(3)]))[1]
    )
    op.run_inline()
    assert op.fetch_orientation(FetchOrientation.FORWARD, 2).rows() == [(0,), (1,)]
    assert op.fetch_orientation(FetchOrientation.BACKWARD, 2).rows() == [(0,), (1,)]
    assert op.read_log(FetchOrientation.FORWARD, 10) == ["line 1"]
    assert op.read_log(FetchOrientation.FORWARD, 10) == []
    assert op.read_log(FetchOrientation.BACKWARD, 10) == ["line 1"]


def test_end_of_stream_does_not_wait_for_the_scope_teardown(pool: WorkerPool) -> None:
    """The fetch that answers EOS is not held by the scope's teardown (Spark's job
    lines, JVM settings reset); the log read after it still has the teardown's lines,
    and closing meanwhile is no cancel."""
    teardown = threading.Event()
    interrupted: list[Operation] = []

    @contextlib.contextmanager
    def scope(op: Operation) -> Iterator[None]:
        yield
        teardown.wait(5)
        op.append_log("Spark job 1 SUCCEEDED")

    op = Operation(
        lambda _op: Execution(SCHEMA, ResultTraits(True), [rows(2)]),
        scope=scope,
        interrupt=interrupted.append,
    )
    op.submit(pool.submit)
    assert op.fetch(0, 10, wait=5).rows() == [(0,), (1,)]
    assert op.fetch(1, 10, wait=1).result_type is ResultType.EOS  # teardown still waiting
    threading.Timer(0.2, teardown.set).start()
    assert "Spark job 1 SUCCEEDED" in op.read_log(FetchOrientation.FORWARD, 10)
    second = Operation(
        lambda _op: Execution(SCHEMA, ResultTraits(True), [rows(1)]),
        scope=scope,
        interrupt=interrupted.append,
    )
    teardown.clear()
    second.submit(pool.submit)
    assert second.fetch(0, 10, wait=5).num_rows == 1
    assert second.fetch(1, 10, wait=1).result_type is ResultType.EOS
    second.close()
    teardown.set()
    assert second.wait_done(5)
    assert interrupted == []
