"""Queries: batch on Spark, or over connector tables (batch or streaming)."""

from __future__ import annotations

from sparkgate.service.operation.operation import Execution
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.frames import frame_execution
from sparkgate.service.statements.kinds import SparkQuery
from sparkgate.service.streaming.strategy import query_execution, spark_statement

__all__ = ["run_query"]


def run_query(context: StatementContext, statement: SparkQuery) -> Execution:
    prepared = (
        query_execution(context.session, statement.text, context.runtime, context.operation)
        if statement.relational
        else None
    )
    if isinstance(prepared, Execution):
        return prepared
    df = prepared if prepared is not None else spark_statement(context.session, statement.text)
    return frame_execution(context, df, statement.relational)
