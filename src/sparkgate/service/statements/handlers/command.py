"""Spark SQL commands (DDL and the rest): Spark runs them as written."""

from __future__ import annotations

from sparkgate.service.catalogs import objects
from sparkgate.service.operation.operation import Execution
from sparkgate.service.spark.jobs import invalid
from sparkgate.service.spark.plans import parse_statement
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.frames import frame_execution
from sparkgate.service.statements.handlers.kept_views import alter_kept_view
from sparkgate.service.statements.kinds import SparkCommand, SparkSet
from sparkgate.service.statements.results import ok_result
from sparkgate.service.streaming.strategy import invalidate_tables, spark_statement

__all__ = ["run_command"]


def _refuse_materialized(context: StatementContext, statement: SparkCommand) -> None:
    """DROP TABLE of a materialized table would leave its job or workflow behind."""
    manager = context.state.materialized
    if manager is None or statement.keywords[:2] != ("DROP", "TABLE"):
        return
    spark = context.session.spark
    plan = parse_statement(spark, statement.text)
    if plan is None or plan.kind != "DropTable" or not plan.names:
        return
    try:
        table = manager.read(spark, manager.identifier(spark, plan.names[0]))
    except Exception:
        return  # Spark says what is wrong with the name when it runs the statement
    if table is not None:
        raise invalid(
            f"Table {table.name} is a materialized table: drop it with DROP MATERIALIZED TABLE "
            "(which also stops its refreshes)."
        )


def _drop_kept(context: StatementContext, statement: SparkCommand) -> bool:
    """DROP TABLE of a connector table the gateway keeps in a catalog
    (``generic_in_memory``): whether it was one (and is gone)."""
    if statement.keywords[:2] != ("DROP", "TABLE"):
        return False
    spark = context.session.spark
    plan = parse_statement(spark, statement.text)
    if plan is None or plan.kind != "DropTable" or not plan.names:
        return False
    located = objects.locate(spark, plan.names[0])
    if located is None:
        return False
    kept, (_, database, table) = located
    found = kept.get(database, table)
    if found is None or found.kind != "table":
        return False  # Spark drops the catalog's own table, or says it is not there
    kept.remove(database, table)
    invalidate_tables(context.session, statement.text)
    return True


def run_command(context: StatementContext, statement: SparkCommand) -> Execution:
    _refuse_materialized(context, statement)
    if _drop_kept(context, statement) or alter_kept_view(context, statement):
        return ok_result()
    try:
        df = spark_statement(context.session, statement.text)
    finally:
        if not isinstance(statement, SparkSet):  # after it ran: DDL may change what a name is
            invalidate_tables(context.session, statement.text)
    return frame_execution(context, df, relational=False)
