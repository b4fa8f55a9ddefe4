"""A Spark DataFrame as a result: streamed Arrow batches, ``OK``, or a changelog."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from sparkgate.api.results import ResultKind, RowKind
from sparkgate.service.operation.operation import Execution
from sparkgate.service.result.fetcher import ResultTraits
from sparkgate.service.spark.arrow import ArrowSettings, arrow_schema, stream_batches
from sparkgate.service.spark.host_access import check_analyzed
from sparkgate.service.spark.jobs import invalid, to_execution_error
from sparkgate.service.spark.limits import ResultLimits
from sparkgate.service.spark.types import arrow_compatible, flink_columns, to_result_schema
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.results import ok_result
from sparkgate.service.streaming.strategy import streaming_execution

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["frame_execution"]


def frame_execution(
    context: StatementContext, df: DataFrame, relational: bool, query: str | None = None
) -> Execution:
    """What Spark returned decides the result: rows, ``OK`` without columns, or a
    changelog for a streaming frame (Spark's ``STREAM(t)``). A ``relational``
    query's result is a query result carrying the operation's id as job id;
    ``query`` is its Spark SQL text, which names its columns (Flink's ``EXPR$n``)."""
    operation = context.operation
    if df.isStreaming:
        return streaming_execution(context.session, df, context.runtime, operation)
    if not df.schema.fields:
        return ok_result()
    if relational:
        # A view's body is in the analyzed plan only.
        session = context.session
        message = check_analyzed(df, session.host_statements, session.path_roots)
        if message is not None:
            raise invalid(message)
    try:
        # Flink's names, in the schema and the batches only: renaming the frame
        # itself would cost Spark another analysis of every short query.
        struct, names = df.schema, None
        if relational and context.session.flink_shapes:
            struct, names = flink_columns(df, query)
        schema = to_result_schema(struct, names)
        # Arrow cannot carry every Spark type as is.
        batches = _streamed(arrow_compatible(df), context.session.result_limits, names)
    except Exception as exc:
        raise to_execution_error(exc) from exc
    traits = ResultTraits(
        is_query_result=relational,
        result_kind=ResultKind.SUCCESS_WITH_CONTENT,
        job_id=operation.handle.identifier.hex if relational else None,
    )
    return Execution(schema, traits, batches)


def _streamed(
    df: DataFrame, limits: ResultLimits, names: list[str] | None = None
) -> Iterator[tuple[pa.RecordBatch, tuple[RowKind, ...] | None]]:
    settings = ArrowSettings.of(df.sparkSession)
    schema = arrow_schema(df, settings)
    stream = stream_batches(df, schema, limits, settings)
    try:
        for batch in stream:
            yield (batch if names is None else batch.rename_columns(names)), None
    except Exception as exc:
        raise to_execution_error(exc) from exc
    finally:
        stream.close()
