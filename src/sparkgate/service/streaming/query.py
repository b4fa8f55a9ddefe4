"""Run a streaming SELECT and stream its changelog into the operation's buffer.

The query writes through ``foreachBatch``: each micro-batch is handed to the
operation's producer thread through a one-slot queue. The callback blocks
while the slot is full, so Spark starts no new micro-batch until the client
has fetched enough to make room in the bounded result buffer: a slow client
slows the query, never the gateway's memory.

The producer (the generator returned by :func:`changelog_batches`) stops the
StreamingQuery when it ends for any reason: end of a bounded source, a query
failure, or the operation being cancelled, timed out or closed (the
generator polls the operation's status, and the operation closes it).

The callback never raises into Spark. A stop on request cancels the
micro-batch in flight, and an exception raised back through py4j would be
logged at ERROR by py4j and by Spark (whose stream thread can even overflow
its stack matching py4j's long message); the callback drops that batch
instead. A real failure is kept and raised by the producer, which stops the
query and logs one ERROR line, root cause first.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import shutil
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.errors import AnalysisException

from sparkgate.api.errors import ExecutionError
from sparkgate.api.results import RowKind
from sparkgate.api.status import OperationStatus
from sparkgate.service.job.job import query_caught_up, query_exhausted
from sparkgate.service.spark.arrow import arrow_schema
from sparkgate.service.spark.jobs import to_execution_error
from sparkgate.service.spark.plans import output_ids, plan_children
from sparkgate.service.spark.types import WATERMARK_DELAY_KEY
from sparkgate.service.streaming.changelog import KIND_COLUMN, ChangelogDiffer, OutputMode

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.query import StreamingQuery

    from sparkgate.service.operation.operation import Operation
    from sparkgate.service.streaming.resolve import Resolution

__all__ = ["changelog_batches", "output_mode", "sink_modes", "start_with_fallback"]

log = logging.getLogger(__name__)

_POLL_S = 0.1
_LIVE = frozenset({OperationStatus.RUNNING, OperationStatus.FINISHED})
Item = tuple[pa.RecordBatch, tuple[RowKind, ...] | None]


def output_mode(df: DataFrame, bounded: bool = False) -> tuple[OutputMode, tuple[int, ...] | None]:
    """How to run ``df`` and, for an aggregation (DISTINCT too), which output
    columns are its key.

    The key is the aggregation's non-aggregate outputs, when every one of them
    reaches the result; otherwise the result is diffed whole (complete mode).
    An aggregation by an event-time window of unbounded sources appends each
    window once the watermark passes it; over ``bounded`` sources it updates,
    since Spark's watermark stops short of the last windows when the input ends.
    """
    try:
        plan = df._jdf.queryExecution().analyzed()
        jvm = df.sparkSession.sparkContext._jvm
        assert jvm is not None
        aggregate_expr = jvm.org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
        pending = [plan]
        node = None
        while pending:
            current = pending.pop(0)
            if current.getClass().getSimpleName() in ("Aggregate", "Distinct"):
                node = current
                break
            pending.extend(plan_children(current))
        if node is None:
            return OutputMode.APPEND, None
        out_ids = output_ids(plan)
        if node.getClass().getSimpleName() == "Distinct":
            # SELECT DISTINCT groups by every column: each new row once, as Flink's.
            if _through_renames(plan, out_ids) == output_ids(node):
                return OutputMode.UPDATE, tuple(range(len(out_ids)))
            return OutputMode.COMPLETE, None
        if not bounded and _groups_by_event_time(node):
            # A window on event time: Spark emits each window once the watermark
            # passes it, insert-only as Flink's window aggregations are.
            return OutputMode.APPEND, None
        exprs = node.aggregateExpressions()
        key_ids = set()
        for i in range(exprs.size()):
            expr = exprs.apply(i)
            if not aggregate_expr.containsAggregate(expr):
                key_ids.add(expr.exprId().id())
        if node.groupingExpressions().size() > len(key_ids):
            return OutputMode.COMPLETE, None
        if not key_ids.issubset(out_ids):
            out_ids = _through_renames(plan, out_ids)
        if not key_ids.issubset(out_ids):
            return OutputMode.COMPLETE, None
        return OutputMode.UPDATE, tuple(i for i, x in enumerate(out_ids) if x in key_ids)
    except Exception:  # unusual plans: diff whole results, always correct
        log.debug("Could not find the aggregation key", exc_info=True)
        return OutputMode.COMPLETE, None


def _groups_by_event_time(aggregate: Any) -> bool:
    keys = aggregate.groupingExpressions()
    for i in range(keys.size()):
        key = keys.apply(i)
        if key.getClass().getSimpleName() == "AttributeReference" and key.metadata().contains(
            WATERMARK_DELAY_KEY
        ):
            return True
    return False


def _through_renames(plan: Any, out_ids: list[int]) -> list[int]:
    """Output ids seen through a top projection that only renames columns
    (``toDF``, Flink's ``EXPR$n`` names): a renamed key column is still the key."""
    if plan.getClass().getSimpleName() != "Project":
        return out_ids
    items = plan.projectList()
    seen = list(out_ids)
    for i in range(items.size()):
        item = items.apply(i)
        if item.getClass().getSimpleName() != "Alias":
            continue
        child = item.child()
        if child.getClass().getSimpleName() == "AttributeReference":
            seen[i] = child.exprId().id()
    return seen


# Spark's error conditions for an output mode a query cannot run in.
_OUTPUT_MODE_CONDITIONS = (
    "STREAMING_OUTPUT_MODE",
    "UNSUPPORTED_STREAMING_OPERATOR_WITHOUT_WATERMARK",
)


def _refuses_output_mode(exc: AnalysisException) -> bool:
    condition = exc.getCondition() or ""
    return condition.split(".")[0] in _OUTPUT_MODE_CONDITIONS or condition.endswith(
        ".OUTPUT_MODE_NOT_SUPPORTED"
    )


def sink_modes(frame: DataFrame, connector: str) -> list[str]:
    """The output modes to try, in order, for a streaming ``frame`` written into a
    ``connector`` sink: files and Kafka take appends only; the others take an
    aggregation's updates too (tried first for one, not after Spark refused append)."""
    if connector in ("filesystem", "kafka"):
        return ["append"]
    if output_mode(frame)[0] is not OutputMode.APPEND:
        return ["update", "append"]
    return ["append", "update"]


def start_with_fallback(make: Any, modes: list[str]) -> StreamingQuery:
    """Start with the first output mode Spark accepts for the query."""
    error: Exception | None = None
    for mode in modes:
        try:
            query: StreamingQuery = make(mode).start()
            return query
        except AnalysisException as exc:  # Spark refuses an output mode at start
            if not _refuses_output_mode(exc):
                raise
            error = exc
    assert error is not None
    raise error


def changelog_batches(
    df: DataFrame,
    operation: Operation,
    resolution: Resolution,
    *,
    trigger_s: float,
    checkpoint_root: Path,
) -> Iterator[Item]:
    """Start ``df`` as a streaming query and yield its changes as Arrow batches."""
    if df.columns[-1] == KIND_COLUMN:
        mode, key = OutputMode.CHANGELOG, None
        schema = arrow_schema(df.drop(KIND_COLUMN))
    else:
        mode, key = output_mode(df, resolution.bounded)
        schema = arrow_schema(df)
    differ = ChangelogDiffer(mode, key)
    handoff: queue.Queue[list[tuple[Any, ...]]] = queue.Queue(maxsize=1)
    stopping = threading.Event()
    failures: list[BaseException] = []

    def on_batch(batch: DataFrame, batch_id: int) -> None:
        if stopping.is_set() or failures:
            return
        try:
            table = batch.toArrow()
        except Exception as exc:
            # The operation's status moves before its Spark work is cancelled,
            # so a batch cancelled by a stop on request always sees it.
            if stopping.is_set() or operation.status not in _LIVE:
                log.debug("Micro-batch %d dropped: the query is stopping", batch_id)
            else:
                failures.append(exc)
            return
        rows = list(zip(*(column.to_pylist() for column in table.columns), strict=True))
        while not stopping.is_set():
            try:
                handoff.put(rows, timeout=_POLL_S)
                return
            except queue.Full:
                continue

    checkpoint = checkpoint_root / f"query-{uuid.uuid4().hex}"
    available_now = resolution.available_now

    def writer(out_mode: str) -> Any:
        w = (
            df.writeStream.foreachBatch(on_batch)
            .outputMode(out_mode)
            .option("checkpointLocation", str(checkpoint))
            .queryName(f"sparkgate-{operation.handle.identifier.hex[:12]}")
        )
        return (
            w.trigger(availableNow=True)
            if available_now
            else w.trigger(processingTime=f"{int(trigger_s * 1000)} milliseconds")
        )

    try:
        query = start_with_fallback(writer, [mode.spark_mode])
    except Exception as exc:
        shutil.rmtree(checkpoint, ignore_errors=True)
        raise to_execution_error(exc) from exc
    log.info("Streaming query %s started in %s mode", query.id, mode.value)
    return _drain(
        query, operation, handoff, stopping, failures, differ, schema, resolution, checkpoint
    )


def _drain(
    query: StreamingQuery,
    operation: Operation,
    handoff: queue.Queue[list[tuple[Any, ...]]],
    stopping: threading.Event,
    failures: list[BaseException],
    differ: ChangelogDiffer,
    schema: pa.Schema,
    resolution: Resolution,
    checkpoint: Path,
) -> Iterator[Item]:
    rows_bound = resolution.bounded_rows
    outcome: str | None = None
    try:
        while operation.status in _LIVE:
            try:
                rows = handoff.get(timeout=_POLL_S)
            except queue.Empty:
                error: Any = failures[0] if failures else query.exception()
                if error is not None:
                    outcome = "failed"
                    raise _failure(query, error) from None
                ended = (
                    not query.isActive
                    or (rows_bound is not None and query_exhausted(query, rows_bound))
                    or (resolution.available_now and query_caught_up(query))
                )
                if ended and handoff.empty():
                    outcome = "ended"
                    return
                continue
            changes = differ.apply(rows)
            if changes:
                kinds = tuple(kind for kind, _ in changes)
                columns = [
                    pa.array([row[i] for _, row in changes], type=schema.field(i).type)
                    for i in range(len(schema))
                ]
                batch = pa.RecordBatch.from_arrays(columns, schema=schema)
                yield batch, (None if differ.mode is OutputMode.APPEND else kinds)
    finally:
        stopping.set()
        with contextlib.suppress(Exception):
            query.stop()
        shutil.rmtree(checkpoint, ignore_errors=True)
        if outcome is None:
            status = operation.status
            outcome = "stopped" if status in _LIVE else f"stopped on request ({status.name})"
        if outcome != "failed":
            log.info("Streaming query %s %s", query.id, outcome)


def _failure(query: StreamingQuery, error: Any) -> ExecutionError:
    """The query's error for the client, logged once at ERROR with its root cause first."""
    failure = to_execution_error(error)
    wrappers = "".join(f"\n  wrapped in {cause}" for cause in failure.causes[-2::-1])
    log.error("Streaming query %s failed: %s%s", query.id, failure.root_cause, wrappers)
    return failure
