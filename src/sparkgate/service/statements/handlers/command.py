"""Spark SQL commands (DDL and the rest): Spark runs them as written."""

from __future__ import annotations

from sparkgate.service.operation.operation import Execution
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.frames import frame_execution
from sparkgate.service.statements.kinds import SparkCommand, SparkSet
from sparkgate.service.streaming.strategy import invalidate_tables, spark_statement

__all__ = ["run_command"]


def run_command(context: StatementContext, statement: SparkCommand) -> Execution:
    try:
        df = spark_statement(context.session, statement.text)
    finally:
        if not isinstance(statement, SparkSet):  # after it ran: DDL may change what a name is
            invalidate_tables(context.session, statement.text)
    return frame_execution(context, df, relational=False)
