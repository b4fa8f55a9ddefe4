"""Flink's connector DDL: CREATE [TEMPORARY] TABLE ... WITH ('connector' = ...)
[LIKE source (...)], ALTER TABLE and DROP TEMPORARY TABLE.

Flink's ALTER TABLE forms change a connector table's stored definition; on any
other table they become Spark's equivalents (``SET TBLPROPERTIES``, ``ADD
COLUMNS``, ``RENAME COLUMN``, ...), and a form Spark has no equivalent for
(a watermark) is refused naming why."""

from __future__ import annotations

from sparkgate.api.errors import SqlParseError
from sparkgate.service.catalog import SESSION_CATALOG
from sparkgate.service.catalogs import objects
from sparkgate.service.operation.operation import Execution
from sparkgate.service.spark.jobs import invalid
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.command import run_command
from sparkgate.service.statements.kinds import (
    AlterTable,
    ConnectorTableCreate,
    DropTemporaryTable,
    SparkCommand,
)
from sparkgate.service.statements.metadata import full_name
from sparkgate.service.statements.results import ok_result
from sparkgate.service.streaming import resolve, strategy
from sparkgate.service.streaming.ddl import TableDefinition, TableLike
from sparkgate.sql.quoting import quote_identifier as quote
from sparkgate.sql.quoting import quote_properties, quote_string

__all__ = ["alter", "create", "drop_temporary"]


def create(context: StatementContext, statement: ConnectorTableCreate) -> Execution:
    definition = statement.definition
    like = statement.like
    if like is not None:
        session = context.session
        base = resolve.lookup(session.spark, like.source, session.context.temporary_tables)
        if base is None and like.alone:  # Spark's CREATE TABLE t LIKE s of a Spark table
            return run_command(context, SparkCommand(statement.text, ("CREATE", "TABLE"), ddl=True))
        definition = _liked(context, definition, like, base)
    if not definition.temporary:
        name = definition.name
        catalog = full_name(context.session, name)[0]
        kept = objects.locate(context.session.spark, name)
        if catalog.lower() != SESSION_CATALOG and kept is None:
            # Kept as properties of the session catalog's tables, or beside a
            # generic_in_memory catalog's (catalogs.objects).
            raise invalid(
                f"Could not create connector table {'.'.join(name)}: catalog '{catalog}' "
                f"cannot keep connector tables; the gateway keeps them in '{SESSION_CATALOG}'. "
                f"Create it there ({SESSION_CATALOG}.<database>.<table>) or as a TEMPORARY TABLE."
            )
    strategy.create_connector_table(context.session, definition)
    return ok_result()


def _liked(
    context: StatementContext,
    definition: TableDefinition,
    like: TableLike,
    base: TableDefinition | None,
) -> TableDefinition:
    """The statement's definition merged over its LIKE source's (``base``)."""
    if base is None:
        shown = ".".join(like.source)
        if _exists(context, like.source):
            raise invalid(
                f"Source table {shown} of the LIKE clause is a Spark table: a LIKE with "
                "columns, WITH options or like options takes a connector table (CREATE "
                f"TABLE ... WITH ('connector' = ...)); CREATE TABLE t LIKE {shown} alone "
                "copies a Spark table"
            )
        raise invalid(f"Source table {shown} of the LIKE clause not found.")
    try:
        return like.merged(base, definition)
    except SqlParseError as exc:
        raise invalid(str(exc)) from None


def drop_temporary(context: StatementContext, statement: DropTemporaryTable) -> Execution:
    strategy.drop_temporary_table(context.session, statement.name, statement.if_exists)
    return ok_result()


def alter(context: StatementContext, statement: AlterTable) -> Execution:
    change = statement.alteration
    session = context.session
    definition = resolve.lookup(session.spark, change.name, session.context.temporary_tables)
    if definition is not None:
        if definition.temporary:
            raise invalid(
                f"Temporary table {'.'.join(change.name)} cannot be altered: drop it and create "
                "it again"
            )
        strategy.alter_connector_table(session, definition, change)
        return ok_result()
    if change.if_exists and not _exists(context, change.name):
        return ok_result()
    return run_command(context, SparkCommand(_spark_form(statement), ("ALTER", "TABLE"), ddl=True))


def _exists(context: StatementContext, name: tuple[str, ...]) -> bool:
    return bool(context.session.spark.catalog.tableExists(".".join(quote(p) for p in name)))


def _spark_form(statement: AlterTable) -> str:
    """Spark's statement for a Flink ALTER TABLE of a table that is not a connector's."""
    change = statement.alteration
    table = "ALTER TABLE " + ".".join(quote(p) for p in change.name)
    if change.set_options is not None:
        return f"{table} SET TBLPROPERTIES ({quote_properties(change.set_options)})"
    if change.reset_options is not None:
        keys = ", ".join(quote_string(k) for k in change.reset_options)
        return f"{table} UNSET TBLPROPERTIES ({keys})"
    if change.rename_column is not None:
        old, new = change.rename_column
        return f"{table} RENAME COLUMN {quote(old)} TO {quote(new)}"
    if change.drop_columns:
        return f"{table} DROP COLUMNS ({', '.join(quote(c) for c in change.drop_columns)})"
    if change.watermark is not None or change.drop_watermark:
        raise invalid(
            f"Only connector tables have a watermark; {'.'.join(change.name)} is a Spark table"
        )
    if change.columns and not change.modify and change.primary_key is None:
        if any(not placed.column.is_physical for placed in change.columns):
            raise invalid("A computed or metadata column needs a connector table")
        listed = ", ".join(
            f"{quote(p.column.name)} {p.column.type}"
            + (" FIRST" if p.first else f" AFTER {quote(p.after)}" if p.after else "")
            for p in change.columns
        )
        return f"{table} ADD COLUMNS ({listed})"
    return statement.text  # RENAME TO, MODIFY, keys: Spark's reading of the text
