"""Queries: batch on Spark, or over connector tables (batch or streaming)."""

from __future__ import annotations

from sparkgate.service.operation.operation import Execution
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.frames import frame_execution
from sparkgate.service.statements.kinds import MetadataQuery, SparkQuery
from sparkgate.service.statements.metadata import metadata_statement
from sparkgate.service.streaming.strategy import query_execution, spark_statement

__all__ = ["run_metadata", "run_query"]


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


def run_metadata(context: StatementContext, statement: MetadataQuery) -> Execution:
    """SHOW / DESCRIBE in the session protocol's shape, else as Spark answers."""
    shaped = metadata_statement(context.session, statement)
    if shaped is not None:
        return shaped
    return run_query(context, statement)
