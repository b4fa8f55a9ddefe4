"""Queries: batch on Spark, or over connector tables (batch or streaming)."""

from __future__ import annotations

from sparkgate.service.operation.operation import Execution
from sparkgate.service.plan import planner
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.frames import frame_execution
from sparkgate.service.statements.kinds import SparkQuery
from sparkgate.service.streaming.strategy import (
    query_execution,
    spark_statement,
    streaming_execution,
)

__all__ = ["run_query"]


def run_query(context: StatementContext, statement: SparkQuery) -> Execution:
    runtime = context.runtime
    if statement.relational and planner.uses_state_ttl(statement.text, runtime):
        # State TTL (table.exec.state.ttl, STATE_TTL hints): the gateway's operators.
        compiled = planner.compile_select(context.session, statement.text, runtime)
        if compiled is not None:
            frame, resolution = compiled
            return streaming_execution(
                context.session, frame, runtime, context.operation, resolution
            )
    prepared = (
        query_execution(context.session, statement.text, context.runtime, context.operation)
        if statement.relational
        else None
    )
    if isinstance(prepared, Execution):
        return prepared
    if prepared is not None:  # the gateway's frame over connector tables
        return frame_execution(context, prepared, statement.relational)
    df = spark_statement(context.session, statement.text)
    return frame_execution(context, df, statement.relational, statement.text)
