"""ADD JAR, REMOVE JAR, SHOW JARS: the session's jars."""

from __future__ import annotations

import logging

from sparkgate.api.errors import ExecutionError
from sparkgate.service.operation.operation import Execution
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import AddJar, RemoveJar, ShowJars
from sparkgate.service.statements.results import ok_result, table_result
from sparkgate.service.streaming.strategy import spark_statement
from sparkgate.sql.quoting import quote_string

__all__ = ["add_jar", "remove_jar", "show_jars"]

log = logging.getLogger(__name__)


def add_jar(context: StatementContext, statement: AddJar) -> Execution:
    spark_statement(context.session, f"ADD JAR {quote_string(statement.path)}")
    jars = context.state.jars
    if statement.path not in jars:
        jars.append(statement.path)
    return ok_result()


def remove_jar(context: StatementContext, statement: RemoveJar) -> Execution:
    jars = context.state.jars
    if statement.path not in jars:
        raise ExecutionError(
            f"Jar {statement.path} was not added to this session.",
            causes=(f"JarNotFound: Jar {statement.path} was not added to this session.",),
        )
    jars.remove(statement.path)
    # Spark cannot unload classes: the jar leaves the session's list only.
    log.warning("Removed %s from the session; classes already loaded stay loaded", statement.path)
    return ok_result()


def show_jars(context: StatementContext, statement: ShowJars) -> Execution:
    return table_result(["jars"], [[jar] for jar in context.state.jars])
