"""Flink's database statements on Spark's namespaces: ``WITH (...)`` options
are the database's properties (Spark's ``DBPROPERTIES``), and on Flink-protocol
sessions the database in use cannot be dropped, as in Flink."""

from __future__ import annotations

from collections.abc import Mapping

from sparkgate.service.operation.operation import Execution
from sparkgate.service.spark.jobs import invalid
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.command import run_command
from sparkgate.service.statements.kinds import (
    AlterDatabase,
    CreateDatabase,
    DropDatabase,
    SparkCommand,
)
from sparkgate.service.statements.metadata import flink_shapes, registry_database
from sparkgate.service.statements.results import ok_result
from sparkgate.service.streaming.strategy import invalidate_tables
from sparkgate.sql.quoting import quote_identifier as quote
from sparkgate.sql.quoting import quote_properties, quote_string

__all__ = ["alter_database", "create_database", "drop_database"]


def _name(parts: tuple[str, ...]) -> str:
    return ".".join(quote(part) for part in parts)


def _properties(options: Mapping[str, str]) -> str:
    return f"DBPROPERTIES ({quote_properties(options)})"


def create_database(context: StatementContext, statement: CreateDatabase) -> Execution:
    registry = context.session.context.catalogs
    named = registry_database(context.session, statement.name)
    if named is not None and registry is not None:
        catalog, namespace = named
        if registry.create_namespace(
            context.session.spark,
            catalog,
            namespace,
            statement.comment,
            statement.options,
            if_not_exists=statement.if_not_exists,
        ):
            return ok_result()
    exists = "IF NOT EXISTS " if statement.if_not_exists else ""
    sql = f"CREATE DATABASE {exists}{_name(statement.name)}"
    if statement.comment is not None:
        sql += f" COMMENT {quote_string(statement.comment)}"
    if statement.options:
        sql += f" WITH {_properties(statement.options)}"
    return run_command(context, SparkCommand(sql, ("CREATE", "DATABASE"), ddl=True))


def alter_database(context: StatementContext, statement: AlterDatabase) -> Execution:
    registry = context.session.context.catalogs
    named = registry_database(context.session, statement.name)
    if named is not None and registry is not None:
        catalog, namespace = named
        spark = context.session.spark
        if registry.alter_namespace(spark, catalog, namespace, statement.options):
            return ok_result()
    sql = f"ALTER DATABASE {_name(statement.name)} SET {_properties(statement.options)}"
    return run_command(context, SparkCommand(sql, ("ALTER", "DATABASE"), ddl=True))


def drop_database(context: StatementContext, statement: DropDatabase) -> Execution:
    if flink_shapes(context.session):
        spark = context.session.spark
        current = (spark.catalog.currentCatalog().lower(), spark.catalog.currentDatabase().lower())
        named = tuple(part.lower() for part in statement.name)
        if named in (current, current[1:]):
            raise invalid("Cannot drop a database which is currently in use.")
    if _dropped_by_catalog(context, statement):
        return ok_result()
    return run_command(context, SparkCommand(statement.text, ("DROP", "DATABASE"), ddl=True))


def _dropped_by_catalog(context: StatementContext, statement: DropDatabase) -> bool:
    """Whether the database's catalog type dropped it (one whose Spark catalog
    cannot: ``generic_in_memory``'s)."""
    registry = context.session.context.catalogs
    named = registry_database(context.session, statement.name)
    if named is None or registry is None:
        return False
    spark = context.session.spark
    if not spark.catalog.databaseExists(_name(named)):
        return False  # Spark's command says it is not there (or nothing, IF EXISTS)
    catalog, namespace = named
    dropped = registry.drop_namespace(spark, catalog, namespace, cascade=statement.cascade)
    if dropped:
        invalidate_tables(context.session, statement.text)
    return dropped
