"""SHOW JOBS, DESCRIBE JOB, STOP JOB: the job manager, reached through the session."""

from __future__ import annotations

from sparkgate.service.operation.operation import Execution
from sparkgate.service.session.session import may_act_on
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import DescribeJob, ShowJobs, StopJob
from sparkgate.service.statements.results import ok_result, table_result

__all__ = ["describe_job", "show_jobs", "stop_job"]


def show_jobs(context: StatementContext, statement: ShowJobs) -> Execution:
    rows = [
        [job.id, job.name, job.status.value, job.describe()["start time"]]
        for job in context.state.jobs.jobs()
    ]
    return table_result(["job id", "job name", "status", "start time"], rows)


def describe_job(context: StatementContext, statement: DescribeJob) -> Execution:
    info = context.state.jobs.get(statement.job_id).describe()
    return table_result(list(info), [list(info.values())])


def stop_job(context: StatementContext, statement: StopJob) -> Execution:
    may_act_on(
        context.session, context.state.jobs.get(statement.job_id).user, "job", statement.job_id
    )
    job = context.state.jobs.stop_job(
        context.session.spark.sparkContext,
        statement.job_id,
        savepoint=statement.with_savepoint,
        drain=statement.with_drain,
    )
    if statement.with_savepoint:
        return table_result(["savepoint path"], [[job.savepoint]])
    return ok_result()
