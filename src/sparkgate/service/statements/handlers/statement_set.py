"""Statement sets: BEGIN STATEMENT SET ... END, and EXECUTE STATEMENT SET.

The INSERTs of a set run as one job. Between BEGIN and END they are kept in
the session's context (``statement_set``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sparkgate.api.errors import UnsupportedStatementError
from sparkgate.service.operation.operation import Execution
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import (
    BeginStatementSet,
    Dml,
    EndStatementSet,
    ExecuteStatementSet,
    Statement,
)
from sparkgate.service.statements.replan import Replan
from sparkgate.service.statements.results import job_result, ok_result
from sparkgate.service.streaming.strategy import plan_insert, submit

__all__ = ["add", "begin", "end", "execute"]

log = logging.getLogger(__name__)


def begin(context: StatementContext, statement: BeginStatementSet) -> Execution:
    if context.state.in_statement_set:
        raise UnsupportedStatementError("A statement set is already open; close it with END")
    context.state.statement_set = []
    return ok_result()


def add(context: StatementContext, statement: Statement) -> Execution:
    """Buffer an INSERT between BEGIN STATEMENT SET and END."""
    if not (isinstance(statement, Dml) and statement.insert):
        raise UnsupportedStatementError(
            "Only INSERT statements can be added to a statement set; END closes it. "
            f"Not accepted: {statement.text}"
        )
    buffered = context.state.statement_set
    assert buffered is not None
    buffered.append(statement)
    return ok_result()


def end(context: StatementContext, statement: EndStatementSet) -> Execution:
    buffered = context.state.statement_set
    if buffered is None:
        raise UnsupportedStatementError("END without BEGIN STATEMENT SET")
    context.state.statement_set = None
    return _execute(context, buffered, statement.text)


def execute(context: StatementContext, statement: ExecuteStatementSet) -> Execution:
    return _execute(context, statement.statements, statement.text)


def _execute(context: StatementContext, statements: Sequence[Statement], text: str) -> Execution:
    if not statements:
        return ok_result()  # as Flink: an empty set runs no job
    runtime = context.runtime
    plans = []
    for inner in statements:
        if not (isinstance(inner, Dml) and inner.insert):
            raise UnsupportedStatementError(
                f"A statement set holds only INSERT statements, not: {inner.text}"
            )
        plans.append(plan_insert(context.session, inner.text, runtime))
    log.info("Executing a statement set of %d INSERTs", len(plans))
    replan = Replan.of([inner.text for inner in statements], runtime)
    return job_result(
        submit(context.session, context.operation, plans, text, runtime, replan=replan)
    )
