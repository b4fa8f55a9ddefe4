"""Catalog statements: USE CATALOG, USE [DATABASE], CREATE / ALTER / DROP /
DESCRIBE / SHOW CREATE CATALOG."""

from __future__ import annotations

from sparkgate.service.operation.operation import Execution
from sparkgate.service.spark.jobs import to_execution_error
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.frames import frame_execution
from sparkgate.service.statements.handlers.refused import not_yet
from sparkgate.service.statements.kinds import (
    AlterCatalog,
    CreateCatalog,
    DescribeCatalog,
    DropCatalog,
    ShowCreateCatalog,
    Use,
)
from sparkgate.service.statements.results import ok_result
from sparkgate.service.streaming.strategy import spark_statement

__all__ = [
    "alter_catalog",
    "create_catalog",
    "describe_catalog",
    "drop_catalog",
    "show_create_catalog",
    "use",
]


def use(context: StatementContext, statement: Use) -> Execution:
    if statement.catalog:
        try:
            context.session.spark.catalog.setCurrentCatalog(statement.names[0])
        except Exception as exc:
            raise to_execution_error(exc) from exc
        return ok_result()
    # Spark resolves the database (and a catalog prefix) itself.
    return frame_execution(context, spark_statement(context.session, statement.text), False)


def create_catalog(context: StatementContext, statement: CreateCatalog) -> Execution:
    not_yet(context, statement)


def alter_catalog(context: StatementContext, statement: AlterCatalog) -> Execution:
    not_yet(context, statement)


def drop_catalog(context: StatementContext, statement: DropCatalog) -> Execution:
    not_yet(context, statement)


def describe_catalog(context: StatementContext, statement: DescribeCatalog) -> Execution:
    not_yet(context, statement)


def show_create_catalog(context: StatementContext, statement: ShowCreateCatalog) -> Execution:
    not_yet(context, statement)
