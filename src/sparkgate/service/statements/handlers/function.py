"""Flink's function statements on Spark's functions.

A ``TEMPORARY`` function, and Flink's ``TEMPORARY SYSTEM`` one, is a Spark
temporary function of the session; a ``TEMPORARY`` one (Flink's temporary
catalog function, ``[c.db.]f``) is listed in its catalog and database only. Any
other is a catalog function (of a ``generic_in_memory`` catalog: kept with it,
see :mod:`sparkgate.service.catalogs.objects`). ``LANGUAGE
JAVA`` and ``SCALA`` name a JVM class, as Spark's ``CREATE FUNCTION`` does;
``LANGUAGE PYTHON`` (a Python module's function) is refused: Spark SQL calls a
function by class name. ``ALTER FUNCTION`` replaces the function's class.
"""

from __future__ import annotations

from sparkgate.service.catalog import quote_name
from sparkgate.service.catalogs import objects
from sparkgate.service.operation.operation import Execution
from sparkgate.service.spark.jobs import invalid
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.command import run_command
from sparkgate.service.statements.kinds import DropFunction, FunctionDefinition, SparkCommand
from sparkgate.service.statements.metadata import full_name
from sparkgate.service.statements.results import ok_result
from sparkgate.sql.quoting import quote_identifier as quote
from sparkgate.sql.quoting import quote_string

__all__ = ["define_function", "drop_function"]


def _name(name: tuple[str, ...], temporary: bool, system: bool) -> str:
    """Spark's name of the function: a temporary one (a Spark temporary function
    of the session) by its last part."""
    if temporary and system and len(name) != 1:
        raise invalid(
            f"A temporary system function lives in the session: its name has one part, not "
            f"{'.'.join(name)}"
        )
    if temporary and len(name) > 3:
        raise invalid(f"A function's name has at most three parts, not {'.'.join(name)}")
    return quote(name[-1]) if temporary else ".".join(quote(part) for part in name)


def _scoped(context: StatementContext, statement: FunctionDefinition | DropFunction) -> None:
    """Note where a temporary catalog function lives (dropped: forget it)."""
    scopes = context.session.context.temporary_functions
    key = statement.name[-1].lower()
    if isinstance(statement, DropFunction) or statement.system:
        scopes.pop(key, None)
        return
    catalog, database = full_name(context.session, statement.name)[:2]
    scopes[key] = (catalog, database)


def _exists(context: StatementContext, name: str) -> bool:
    return bool(context.session.spark.catalog.functionExists(name))


def define_function(context: StatementContext, statement: FunctionDefinition) -> Execution:
    if statement.language == "PYTHON":
        raise invalid(
            "CREATE FUNCTION ... LANGUAGE PYTHON is not supported: Spark SQL calls a function "
            "by its JVM class name (LANGUAGE JAVA or SCALA)"
        )
    temporary = statement.temporary
    if not temporary:
        located = objects.locate(context.session.spark, statement.name)
        if located is not None:
            return _keep_function(context, statement, *located)
    name = _name(statement.name, temporary, statement.system)
    kind = "TEMPORARY FUNCTION" if temporary else "FUNCTION"
    if statement.alter:
        if not _exists(context, name):
            if statement.guarded:
                return ok_result()
            raise invalid(f"Function {'.'.join(statement.name)} does not exist")
        head = f"CREATE OR REPLACE {kind} {name}"
    elif statement.guarded and _exists(context, name):
        return ok_result()  # checked here: Spark takes no IF NOT EXISTS for temporary ones
    else:
        head = f"CREATE {kind} {name}"
    sql = f"{head} AS {quote_string(statement.class_name)}"
    if statement.jars:
        sql += " USING " + ", ".join(f"JAR {quote_string(jar)}" for jar in statement.jars)
    done = run_command(context, SparkCommand(sql, ("CREATE", "FUNCTION"), ddl=True))
    if temporary:
        _scoped(context, statement)
    return done


def _keep_function(
    context: StatementContext,
    statement: FunctionDefinition,
    kept: objects.CatalogObjects,
    name: tuple[str, str, str],
) -> Execution:
    """A catalog function of a catalog whose objects the gateway keeps
    (``generic_in_memory``): its class and jars kept, called as Spark calls a
    temporary function of that class (see :mod:`sparkgate.service.streaming.resolve`)."""
    spark = context.session.spark
    catalog, database, function = name
    if not spark.catalog.databaseExists(quote_name((catalog, database))):
        raise invalid(
            f"Database {database} does not exist in Catalog {catalog}.",
            kind="DatabaseNotExistException",
        )
    exists = kept.get(database, function, function=True) is not None
    if statement.alter and not exists:
        if statement.guarded:
            return ok_result()
        raise invalid(f"Function {catalog}.{database}.{function} does not exist")
    if not statement.alter and exists:
        if statement.guarded:
            return ok_result()
        raise invalid(
            f"Function {database}.{function} already exists in Catalog {catalog}.",
            kind="FunctionAlreadyExistException",
        )
    body = objects.KeptFunction(statement.class_name, statement.language, statement.jars)
    kept.put(objects.CatalogObject(database, function, "function", body.to_json()))
    return ok_result()


def drop_function(context: StatementContext, statement: DropFunction) -> Execution:
    if not statement.temporary:
        located = objects.locate(context.session.spark, statement.name)
        if located is not None:
            kept, (catalog, database, function) = located
            if kept.remove(database, function, function=True) or statement.if_exists:
                return ok_result()
            raise invalid(f"Function {catalog}.{database}.{function} does not exist")
    kind = "TEMPORARY FUNCTION" if statement.temporary else "FUNCTION"
    guard = "IF EXISTS " if statement.if_exists else ""
    sql = f"DROP {kind} {guard}{_name(statement.name, statement.temporary, statement.system)}"
    done = run_command(context, SparkCommand(sql, ("DROP", "FUNCTION"), ddl=True))
    if statement.temporary:
        _scoped(context, statement)
    return done
