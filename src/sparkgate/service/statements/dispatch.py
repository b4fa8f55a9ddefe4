"""Running one statement in a session: parse it once, then its handler.

The registry (:data:`~.handlers.REGISTRY`) picks the handler by the
statement's type. One rule comes first: inside ``BEGIN STATEMENT SET`` every
statement but ``END`` is buffered in the session's statement set.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

from sparkgate.service.operation.operation import Execution, Executor, Operation
from sparkgate.service.session.session import Session
from sparkgate.service.spark.host_access import HOST_STATEMENTS, refusal
from sparkgate.service.spark.jobs import invalid
from sparkgate.service.spark.plans import parse_statement as parse_spark_statement
from sparkgate.service.spark.plans import statement_scope
from sparkgate.service.statements import handlers
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers import statement_set
from sparkgate.service.statements.kinds import (
    CreateView,
    Dml,
    EndStatementSet,
    FunctionDefinition,
    MetadataQuery,
    SparkCommand,
    SparkQuery,
    Statement,
    TableAsSelect,
)
from sparkgate.service.statements.parse_limit import NO_LIMIT, ParseLimit
from sparkgate.service.statements.paths import inner_statements, paths_of
from sparkgate.service.statements.registry import Registry
from sparkgate.service.statements.remembered import remember

__all__ = ["execute", "host_refusal", "parsed_executor", "statement_executor"]

log = logging.getLogger(__name__)


def execute(
    context: StatementContext,
    statement: Statement,
    registry: Registry | None = None,
    parse_limit: ParseLimit = NO_LIMIT,
) -> Execution:
    """Run a parsed statement with its handler."""
    if parse_limit.enabled:
        # Spark's parse first, within the limit; the handlers find its plans cached.
        parse_limit.check_spark(context.session.spark, statement)
    # Before a statement set takes it: a set's statements run without dispatch.
    _refuse_host_statements(context, statement)
    if context.state.in_statement_set and not isinstance(statement, EndStatementSet):
        return statement_set.add(context, statement)
    execution = (registry or handlers.REGISTRY).run(context, statement)
    remember(context.session, statement)
    return execution


# Statements whose text goes to Spark as the user wrote it (not the gateway's own SQL).
_SPARK_TEXT = (SparkQuery, SparkCommand, Dml, TableAsSelect)


def _refuse_host_statements(context: StatementContext, statement: Statement) -> None:
    """Spark SQL acting on the host is refused before Spark sees it (host_access)."""
    message = host_refusal(context.session, statement)
    if message is not None:
        raise invalid(message)


def host_refusal(session: Session, statement: Statement) -> str | None:
    """Why ``statement`` may not run in ``session``, or None: it acts on the host
    (host_access), or names a path outside the allowed roots (confinement)."""
    message = _host_statement(session, statement)
    if message is None and session.path_roots is not None:
        message = session.path_roots.refusal(session.spark, paths_of(session.spark, statement))
    return message


def _host_statement(session: Session, statement: Statement) -> str | None:
    allowed = session.host_statements
    if len(allowed) == len(HOST_STATEMENTS):
        return None
    for inner in inner_statements(statement):  # what an EXPLAIN or a statement set holds
        message = _host_statement(session, inner)
        if message is not None:
            return message
    if isinstance(statement, CreateView):  # the view's query runs whenever it is read
        text = statement.query
    elif isinstance(statement, FunctionDefinition):
        text = statement.spark_text
    elif isinstance(statement, _SPARK_TEXT) and not isinstance(statement, MetadataQuery):
        text = statement.text
    else:
        return None
    plan = parse_spark_statement(session.spark, text)
    return refusal(plan.host_statements, allowed) if plan is not None else None


def parsed_executor(
    session: Session,
    statement: Statement,
    config: Mapping[str, str] | None = None,
    registry: Registry | None = None,
    parse_limit: ParseLimit = NO_LIMIT,
) -> Executor:
    """The executor an operation runs for an already parsed ``statement``."""

    def run(operation: Operation) -> Execution:
        log.info("Executing %s statement", _label(statement))
        context = StatementContext(session, operation, dict(config or {}))
        with statement_scope():
            return execute(context, statement, registry, parse_limit)

    return run


def _label(statement: Statement) -> str:
    """``SparkQuery`` -> ``SPARK_QUERY``: the statement's kind in the operation log."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(statement).__name__).upper()


def statement_executor(
    session: Session,
    statement: str,
    config: Mapping[str, str] | None = None,
    registry: Registry | None = None,
    parse_limit: ParseLimit = NO_LIMIT,
) -> Executor:
    """The executor an operation runs for ``statement`` in ``session``.

    ``config`` holds the statement's own options; they win over the
    session's for this statement, the gateway's options as Spark's.
    ``parse_limit`` bounds the time the gateway's and Spark's parsers take.
    """

    def run(operation: Operation) -> Execution:
        with statement_scope():
            parsed = parse_limit.parse(statement)
            return parsed_executor(session, parsed, config, registry, parse_limit)(operation)

    return run
