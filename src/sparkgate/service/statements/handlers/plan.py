"""COMPILE [AND EXECUTE] PLAN, EXECUTE PLAN and EXPLAIN PLAN (FLIP-190, FLIP-292)."""

from __future__ import annotations

import logging

from sparkgate.api.errors import PlanError
from sparkgate.service.operation.operation import Execution
from sparkgate.service.plan import planner
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import CompilePlan, ExecutePlan, ExplainPlan
from sparkgate.service.statements.results import job_result, ok_result, table_result
from sparkgate.service.streaming.strategy import submit

__all__ = ["compile_plan", "execute_plan", "explain_plan"]

log = logging.getLogger(__name__)


def _run(context: StatementContext, uri: str, text: str) -> Execution:
    session = context.session
    plan = planner.read_plan(session, uri)
    runtime = context.runtime.as_streaming()
    prepared = planner.insert_plans(session, plan, runtime)
    log.info("Executing the compiled plan %s (%d sinks)", planner.shown_uri(uri), len(prepared))
    # The job is named by what it runs (the plan's INSERTs), as an INSERT's job is.
    name = plan.statement or text
    return job_result(submit(session, context.operation, prepared, name, runtime))


def compile_plan(context: StatementContext, statement: CompilePlan) -> Execution:
    session = context.session
    uri = statement.uri
    if planner.plan_exists(session, uri):
        if statement.if_not_exists:
            log.info("COMPILE PLAN IF NOT EXISTS: %s exists and is kept", uri)
            return _run(context, uri, statement.text) if statement.execute else ok_result()
        if not context.runtime.force_recompile:
            shown = planner.shown_uri(uri)
            raise PlanError(
                f"Cannot overwrite the plan file '{shown}': use COMPILE PLAN ... IF NOT EXISTS "
                "to keep it, or SET 'table.plan.force-recompile' = 'true' to replace it"
            )
    inserts = [s.text for s in statement.inserts]
    plan = planner.compile_inserts(session, inserts, context.runtime, ";\n".join(inserts))
    planner.write_plan(session, uri, plan)
    return _run(context, uri, statement.text) if statement.execute else ok_result()


def execute_plan(context: StatementContext, statement: ExecutePlan) -> Execution:
    return _run(context, statement.uri, statement.text)


def explain_plan(context: StatementContext, statement: ExplainPlan) -> Execution:
    session = context.session
    plan = planner.read_plan(session, statement.uri)
    # Checked as EXECUTE PLAN would: tables resolve, types agree; nothing starts.
    planner.insert_plans(session, plan, context.runtime.as_streaming())
    # Drawn as it would run: nodes without state metadata take the session's TTL.
    drawn = plan.with_ttl(context.runtime.state_ttl)
    return table_result(["result"], [[planner.explain(drawn, statement.uri)]])
