"""USE CATALOG and USE [DATABASE]."""

from __future__ import annotations

from sparkgate.service.operation.operation import Execution
from sparkgate.service.spark.jobs import to_execution_error
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.frames import frame_execution
from sparkgate.service.statements.kinds import Use
from sparkgate.service.statements.results import ok_result
from sparkgate.service.streaming.strategy import spark_statement

__all__ = ["use"]


def use(context: StatementContext, statement: Use) -> Execution:
    if statement.catalog:
        try:
            context.session.spark.catalog.setCurrentCatalog(statement.names[0])
        except Exception as exc:
            raise to_execution_error(exc) from exc
        return ok_result()
    # Spark resolves the database (and a catalog prefix) itself.
    return frame_execution(context, spark_statement(context.session, statement.text), False)
