"""DML (INSERT, MERGE, UPDATE, DELETE, LOAD DATA): a job of the job manager."""

from __future__ import annotations

from collections.abc import Callable

from sparkgate.api.errors import UnsupportedStatementError
from sparkgate.service.operation.operation import Execution
from sparkgate.service.plan import planner
from sparkgate.service.session.session import Session
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import Dml
from sparkgate.service.statements.results import job_result
from sparkgate.service.streaming.strategy import (
    InsertPlan,
    RuntimeOptions,
    inserts_again,
    plan_insert,
    submit,
)

__all__ = ["run_dml"]


def run_dml(context: StatementContext, statement: Dml) -> Execution:
    """Streaming, asynchronous or synchronous, as the statement's options say."""
    runtime = context.runtime
    if statement.insert and planner.uses_state_ttl(statement.text, runtime):
        # State TTL (table.exec.state.ttl, STATE_TTL hints): a plan on the gateway's operators.
        compiled = planner.compile_inserts(
            context.session, [statement.text], runtime, statement.text
        )
        if compiled.stateful:
            plans = planner.insert_plans(context.session, compiled, runtime)
            job_id = submit(
                context.session,
                context.operation,
                plans,
                statement.text,
                runtime,
                replan=_compiled_again(context.session, statement.text, runtime.frozen()),
            )
            return job_result(job_id)
    if statement.insert:
        plan = plan_insert(context.session, statement.text, runtime)
    elif runtime.streaming:
        raise UnsupportedStatementError(f"Only INSERT runs as a streaming job: {statement.text}")
    else:
        plan = InsertPlan(statement.text, None)  # UPDATE, DELETE, MERGE, LOAD DATA: Spark's own
    job_id = submit(
        context.session,
        context.operation,
        [plan],
        statement.text,
        runtime,
        replan=inserts_again(context.session, [statement.text], runtime.frozen()),
    )
    return job_result(job_id)


def _compiled_again(
    session: Session, text: str, runtime: RuntimeOptions
) -> Callable[[], list[InsertPlan]]:
    """The INSERT compiled again with its state TTL (for a streaming job's restart)."""

    def replan() -> list[InsertPlan]:
        compiled = planner.compile_inserts(session, [text], runtime, text)
        return planner.insert_plans(session, compiled, runtime)

    return replan
