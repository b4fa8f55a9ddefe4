"""Catalog statements: USE CATALOG, USE [DATABASE], CREATE / ALTER / DROP /
DESCRIBE / SHOW CREATE CATALOG.

Catalogs made here belong to the gateway (as in Flink, FLIP-295): the
registry in the session's context stores them and puts them into every
session. Secret option values never leave it in a result.
"""

from __future__ import annotations

import logging

from sparkgate.api.errors import ExecutionError
from sparkgate.service.catalogs.definition import TYPE_KEY, CatalogDefinition
from sparkgate.service.catalogs.registry import CatalogRegistry, not_found
from sparkgate.service.operation.operation import Execution
from sparkgate.service.spark.jobs import to_execution_error
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.frames import frame_execution
from sparkgate.service.statements.kinds import (
    AlterCatalog,
    CreateCatalog,
    DescribeCatalog,
    DropCatalog,
    ShowCreateCatalog,
    Use,
)
from sparkgate.service.statements.results import ok_result, table_result
from sparkgate.service.streaming.strategy import spark_statement
from sparkgate.sql.quoting import quote_identifier as quote
from sparkgate.sql.quoting import quote_string
from sparkgate.sql.secrets import SHOWN_HIDDEN
from sparkgate.sql.secrets import masked_options as masked

__all__ = [
    "alter_catalog",
    "create_catalog",
    "describe_catalog",
    "drop_catalog",
    "show_create_catalog",
    "use",
]

log = logging.getLogger(__name__)

FLINK_DEFAULT_CATALOG = "default_catalog"
SESSION_CATALOG = "spark_catalog"


def _registry(context: StatementContext) -> CatalogRegistry:
    registry = context.state.catalogs
    if registry is None:
        raise ExecutionError("This session has no catalog registry.")
    return registry


def use(context: StatementContext, statement: Use) -> Execution:
    if statement.catalog:
        name = statement.names[0]
        spark = context.session.spark
        try:
            # SQL, not Catalog.setCurrentCatalog: that looks the plug-in up in
            # the conf of the thread's active session, which is not this one.
            spark.sql(f"SET CATALOG {quote_string(name)}").collect()
        except Exception as exc:
            error = to_execution_error(exc)
            if error.error_class == "CATALOG_NOT_FOUND" and name.lower() == FLINK_DEFAULT_CATALOG:
                # Flink's name of the first catalog, when no catalog has it: Spark's.
                return use(context, Use(statement.text, (SESSION_CATALOG,), catalog=True))
            if error.error_class == "CATALOG_NOT_FOUND":
                raise not_found(name) from None
            raise error from exc
        registry = context.state.catalogs
        namespace = registry.default_namespace(name) if registry is not None else None
        if namespace is not None:
            # Flink's USE CATALOG lands in the catalog's default database.
            try:
                spark.sql(f"USE {quote(name)}.{quote(namespace)}").collect()
            except Exception:
                log.warning("Catalog %s has no database %s to use", name, namespace, exc_info=True)
        return ok_result()
    # Spark resolves the database (and a catalog prefix) itself.
    return frame_execution(context, spark_statement(context.session, statement.text), False)


def create_catalog(context: StatementContext, statement: CreateCatalog) -> Execution:
    definition = CatalogDefinition(statement.name, statement.options, statement.comment)
    _registry(context).create(
        context.session.spark, definition, if_not_exists=statement.if_not_exists
    )
    return ok_result()


def alter_catalog(context: StatementContext, statement: AlterCatalog) -> Execution:
    _registry(context).alter(
        context.session.spark,
        statement.name,
        set_options=statement.set_options,
        reset_keys=statement.reset_keys,
        comment=statement.comment,
    )
    return ok_result()


def drop_catalog(context: StatementContext, statement: DropCatalog) -> Execution:
    _registry(context).drop(context.session.spark, statement.name, if_exists=statement.if_exists)
    return ok_result()


def describe_catalog(context: StatementContext, statement: DescribeCatalog) -> Execution:
    """Flink's columns and rows: name, type, comment; EXTENDED adds ``option:<key>``."""
    definition = _registry(context).get(statement.name)
    rows: list[list[str | None]] = [
        ["name", definition.name],
        ["type", definition.type],
        ["comment", definition.comment or ""],
    ]
    if statement.extended:
        options = masked(definition.options)
        rows += [[f"option:{key}", options[key]] for key in sorted(options) if key != TYPE_KEY]
    return table_result(["info name", "info value"], rows)


def show_create_catalog(context: StatementContext, statement: ShowCreateCatalog) -> Execution:
    return table_result(["result"], [[create_statement(_registry(context).get(statement.name))]])


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def create_statement(definition: CatalogDefinition) -> str:
    """The CREATE CATALOG statement of a catalog as Flink prints it, secrets masked."""
    options = masked(definition.options, SHOWN_HIDDEN)
    lines = [f"CREATE CATALOG {quote(definition.name)}"]
    if definition.comment:
        lines.append(f"COMMENT {_literal(definition.comment)}")
    body = ",\n".join(f"  {_literal(key)} = {_literal(options[key])}" for key in sorted(options))
    lines.append(f"WITH (\n{body}\n)\n")
    return "\n".join(lines)
