"""What a statement that ran leaves in its session's recipe (session/recipe.py).

Statements that make or drop session-local state in Spark are remembered,
so a new engine can be given the same state: USE and SET CATALOG, temporary
views and functions, session variables, SET TIME ZONE (read from Spark's
parsed plan, or from the gateway's own forms of views and functions), the
gateway's own temporary connector tables and ADD JAR, and the modules loaded
and in use (their functions are temporary functions of the Spark session).
"""

from __future__ import annotations

from sparkgate.service.modules import SessionModules
from sparkgate.service.session.recipe import SessionRecipe
from sparkgate.service.session.session import Session
from sparkgate.service.spark.plans import parse_statement
from sparkgate.service.statements.kinds import (
    AddJar,
    ConnectorTableCreate,
    CreateView,
    DropFunction,
    DropTemporaryTable,
    DropView,
    FunctionDefinition,
    LoadModule,
    RemoveJar,
    SparkCommand,
    Statement,
    UnloadModule,
    Use,
    UseModules,
)
from sparkgate.sql.quoting import quote_identifier, quote_string

__all__ = ["remember"]


def remember(session: Session, statement: Statement) -> None:
    """Record in ``session``'s recipe what ``statement`` (which ran) made or dropped."""
    recipe = session.context.recipe
    if isinstance(statement, Use):
        recipe.record("catalog" if statement.catalog else "namespace", statement.text)
    elif isinstance(statement, ConnectorTableCreate):
        if statement.definition.temporary:
            recipe.record(f"view:{statement.definition.name[-1].lower()}", statement.text)
    elif isinstance(statement, DropTemporaryTable):
        recipe.forget(f"view:{statement.name.lower()}")
    elif isinstance(statement, AddJar):
        recipe.record(f"jar:{statement.path}", statement.text)
    elif isinstance(statement, RemoveJar):
        recipe.forget(f"jar:{statement.path}")
    elif isinstance(statement, CreateView):
        key = f"view:{statement.name[-1].lower()}"
        # A permanent view is the catalog's; IF NOT EXISTS of one kept changed nothing.
        if statement.temporary and not (statement.if_not_exists and key in recipe):
            recipe.record(key, statement.text)
    elif isinstance(statement, DropView) and statement.temporary:
        recipe.forget(f"view:{statement.name[-1].lower()}")
    elif isinstance(statement, FunctionDefinition):
        key = f"function:{statement.name[-1].lower()}"
        unchanged = statement.guarded and not statement.alter and key in recipe
        if statement.temporary and not unchanged:
            text = statement.text
            if statement.alter:  # made again as it now is, by a CREATE
                name = quote_identifier(statement.name[-1])
                text = f"CREATE TEMPORARY FUNCTION {name} AS {quote_string(statement.class_name)}"
            recipe.record(key, text)
    elif isinstance(statement, DropFunction):
        if statement.temporary:
            recipe.forget(f"function:{statement.name[-1].lower()}")
    elif isinstance(statement, LoadModule | UnloadModule | UseModules):
        _remember_modules(recipe, statement, session.context.modules)
    elif isinstance(statement, SparkCommand | DropView):  # Spark's DROP VIEW: a temporary one too
        plan = parse_statement(session.spark, statement.text)  # cached: parsed when it ran
        found = plan.session_object if plan is not None else None
        if found is None:
            return
        if found.created:
            recipe.record(found.key, statement.text)
        else:
            recipe.forget(found.key)


def _remember_modules(
    recipe: SessionRecipe, statement: LoadModule | UnloadModule | UseModules, now: SessionModules
) -> None:
    """A session starts with ``core``: a LOAD is kept until its module is unloaded,
    an UNLOAD of a module the session started with until it is loaded again; then
    the use order as it now is, last."""
    if isinstance(statement, LoadModule | UnloadModule):
        key = f"module:{statement.name}"
        if key in recipe:
            recipe.forget(key)
        else:
            recipe.record(key, statement.text)
    recipe.forget("modules:used")
    if now.used:
        names = ", ".join(quote_identifier(name) for name in now.used)
        recipe.record("modules:used", f"USE MODULES {names}")
