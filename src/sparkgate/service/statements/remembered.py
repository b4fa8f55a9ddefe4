"""What a statement that ran leaves in its session's recipe (session/recipe.py).

Statements that make or drop session-local state in Spark are remembered,
so a new engine can be given the same state: USE and SET CATALOG, temporary
views and functions, session variables, SET TIME ZONE (all read from Spark's
parsed plan), and the gateway's own temporary connector tables and ADD JAR.
"""

from __future__ import annotations

from sparkgate.service.session.session import Session
from sparkgate.service.spark.plans import parse_statement
from sparkgate.service.statements.kinds import (
    AddJar,
    ConnectorTableCreate,
    DropTemporaryTable,
    RemoveJar,
    SparkCommand,
    Statement,
    Use,
)

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
    elif isinstance(statement, SparkCommand):
        plan = parse_statement(session.spark, statement.text)  # cached: parsed when it ran
        found = plan.session_object if plan is not None else None
        if found is None:
            return
        if found.created:
            recipe.record(found.key, statement.text)
        else:
            recipe.forget(found.key)
