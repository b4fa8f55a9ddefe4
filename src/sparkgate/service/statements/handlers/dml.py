"""DML (INSERT, MERGE, UPDATE, DELETE, LOAD DATA): a job of the job manager."""

from __future__ import annotations

from sparkgate.api.errors import PlanError, UnsupportedStatementError
from sparkgate.service.catalog import quote_name
from sparkgate.service.operation.operation import Execution
from sparkgate.service.plan import planner
from sparkgate.service.plan.document import Plan
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import Dml
from sparkgate.service.statements.overwrite import OverwriteHook, file_table
from sparkgate.service.statements.replan import Replan
from sparkgate.service.statements.results import job_result
from sparkgate.service.streaming.insert import align, parse_insert
from sparkgate.service.streaming.strategy import (
    InsertPlan,
    RuntimeOptions,
    StagedFiles,
    plan_insert,
    query_frame,
    submit,
)

__all__ = ["run_dml"]


def run_dml(context: StatementContext, statement: Dml) -> Execution:
    """Streaming, asynchronous or synchronous, as the statement's options say."""
    runtime = context.runtime
    if statement.insert and planner.uses_state_ttl(statement.text, runtime):
        # State TTL (table.exec.state.ttl, STATE_TTL hints), or a ranking or an outer
        # join of streams, which Spark's streaming refuses: the gateway's operators.
        try:
            compiled: Plan | None = planner.compile_inserts(
                context.session, [statement.text], runtime, statement.text
            )
        except PlanError:
            if planner.sets_state_ttl(statement.text, runtime):
                raise
            compiled = None  # Spark runs it (a stream-static join, say)
        if compiled is not None and compiled.stateful:
            plans = planner.insert_plans(context.session, compiled, runtime)
            job_id = submit(
                context.session,
                context.operation,
                plans,
                statement.text,
                runtime,
                replan=Replan.of([statement.text], runtime, compiled=True),
            )
            return job_result(job_id)
    if statement.insert and not runtime.streaming:
        staged = _atomic_overwrite(context, statement, runtime)
        if staged is not None:
            return staged
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
        replan=Replan.of([statement.text], runtime),
    )
    return job_result(job_id)


def _atomic_overwrite(
    context: StatementContext, statement: Dml, runtime: RuntimeOptions
) -> Execution | None:
    """INSERT OVERWRITE of a file table as a job that swaps in staged files (overwrite.py)."""
    session = context.session
    spark = session.spark
    insert = parse_insert(statement.text, spark)
    table = file_table(spark, insert) if insert is not None else None
    if insert is None or table is None:
        return None
    frame, _ = query_frame(session, insert.query, runtime)
    fields = spark.table(quote_name(table.name)).schema.fields
    columns = [(f.name, f.dataType.simpleString()) for f in fields]
    frame = align(frame, insert, columns, ".".join(table.name))
    # Static partition values are the replaced directory's path, not columns of its files.
    frame = frame.drop(*table.static)
    hook = OverwriteHook.for_table(spark, table)
    staged = StagedFiles(table.provider, table.options, hook.staging, table.partition_by)
    plan = InsertPlan(statement.text, frame, table.name, overwrite=True, staging=staged)
    job_id = submit(
        session,
        context.operation,
        [plan],
        statement.text,
        runtime,
        hooks=[hook],
        last_step=hook.publish,
    )
    return job_result(job_id)
