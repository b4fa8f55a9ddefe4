"""The ``embedded`` workflow scheduler: APScheduler in the gateway's process,
its workflows in a SQLite file under the data directory.

Flink's embedded scheduler keeps workflows in memory ("mainly for
testing"); this one persists them, so after a restart every workflow is
back, a suspended one stays suspended, and the fire times missed while the
gateway was down follow the misfire policy: the workflow fires once at
start (missed fires coalesce into the latest one) if that fire is at most
``misfire-grace-time`` late, otherwise it waits for its next fire time.

At each fire time the scheduler opens a session with the creating session's
configuration and calls the gateway's refresh method, the one the REST
refresh route calls for schedulers outside the gateway.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sparkgate.api.config import ConfigOption, Configuration, duration_option, int_option
from sparkgate.api.errors import ConfigurationError
from sparkgate.api.results import ResultType
from sparkgate.api.session import SessionEnvironment
from sparkgate.api.workflow import (
    SCHEDULE_TIME_FORMAT,
    CreatePeriodicRefreshWorkflow,
    CreateRefreshWorkflow,
    DeleteRefreshWorkflow,
    ModifyRefreshWorkflow,
    ModifyRefreshWorkflowCronExpr,
    RefreshService,
    ResumeRefreshWorkflow,
    SuspendRefreshWorkflow,
    WorkflowError,
    WorkflowSchedulerContext,
)
from sparkgate.workflow.embedded.cron import cron_trigger, last_fire_time

__all__ = [
    "EMBEDDED_OPTIONS",
    "MAX_CONCURRENT_REFRESHES",
    "MISFIRE_GRACE_TIME",
    "EmbeddedRefreshHandler",
    "EmbeddedRefreshHandlerSerializer",
    "EmbeddedWorkflowScheduler",
    "EmbeddedWorkflowSchedulerFactory",
]

log = logging.getLogger(__name__)

MISFIRE_GRACE_TIME = duration_option(
    "misfire-grace-time",
    timedelta(hours=1),
    "A fire time missed while the gateway was down (or busy) still fires, once, "
    "if it is at most this late; several missed fire times of one workflow "
    "coalesce into the latest. Later than this, the workflow waits for its next "
    "fire time.",
    min_value=timedelta(seconds=1),
)
MAX_CONCURRENT_REFRESHES = int_option(
    "max-concurrent-refreshes",
    4,
    "Refreshes of different materialized tables that may run at once; a "
    "workflow whose previous refresh still runs skips that fire time.",
    min_value=1,
)
EMBEDDED_OPTIONS: tuple[ConfigOption[Any], ...] = (MISFIRE_GRACE_TIME, MAX_CONCURRENT_REFRESHES)

# Flink's embedded scheduler's names: the workflow of table `c`.`d`.`t` is
# "quartz_job_`c`.`d`.`t`" in group "default_group".
_NAME_PREFIX = "quartz_job_"
_GROUP = "default_group"
_FIRE = f"{__name__}:fire"
# The live schedulers by store file, for the stored jobs' function (APScheduler
# stores a job's function as a module-level name, not an object).
_LIVE: dict[str, EmbeddedWorkflowScheduler] = {}
_LIVE_LOCK = threading.Lock()


@dataclass(frozen=True)
class EmbeddedRefreshHandler:
    """Where a workflow is in the embedded scheduler: its name and group."""

    workflow_name: str
    workflow_group: str = _GROUP

    def as_summary_string(self) -> str:
        return (
            f"{{\n  workflowName: {self.workflow_name},\n  workflowGroup: {self.workflow_group}\n}}"
        )

    @property
    def job_id(self) -> str:
        return f"{self.workflow_group}.{self.workflow_name}"


class EmbeddedRefreshHandlerSerializer:
    """The handler as JSON (Flink's field names)."""

    def serialize(self, handler: EmbeddedRefreshHandler) -> bytes:
        body = {"workflowName": handler.workflow_name, "workflowGroup": handler.workflow_group}
        return json.dumps(body).encode()

    def deserialize(self, data: bytes) -> EmbeddedRefreshHandler:
        try:
            body = json.loads(data)
            return EmbeddedRefreshHandler(str(body["workflowName"]), str(body["workflowGroup"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise WorkflowError(f"Not a refresh handler of the embedded scheduler: {exc}") from exc


def fire(store: str, workflow_name: str, workflow_group: str, **spec: Any) -> None:
    """A stored workflow's fire time (APScheduler calls this by name)."""
    with _LIVE_LOCK:
        scheduler = _LIVE.get(store)
    if scheduler is None:
        log.warning("Workflow %s fired after its scheduler closed", workflow_name)
        return
    scheduler.refresh(EmbeddedRefreshHandler(workflow_name, workflow_group), spec)


class EmbeddedWorkflowScheduler:
    """APScheduler's background scheduler on a SQLite job store."""

    def __init__(
        self,
        store: Path,
        service: RefreshService | None,
        *,
        misfire_grace: timedelta,
        max_concurrent: int,
    ) -> None:
        self.store = store
        self._service = service
        self._misfire_grace = misfire_grace
        self._max_concurrent = max_concurrent
        self._scheduler: Any = None
        self._open = False
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------
    def open(self) -> None:
        """Start on the stored workflows; with none stored, start with the first one
        (a gateway without FULL materialized tables runs no scheduler)."""
        self._open = True
        if self.store.exists():
            self._start()

    def _start(self) -> Any:
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
        from apscheduler.schedulers.background import BackgroundScheduler

        if self._scheduler is not None:
            return self._scheduler
        # APScheduler logs every run at INFO; the refreshes log themselves.
        logging.getLogger("apscheduler.executors").setLevel(logging.WARNING)
        logging.getLogger("apscheduler.scheduler").setLevel(logging.WARNING)
        try:
            self.store.parent.mkdir(parents=True, exist_ok=True)
            scheduler = BackgroundScheduler(
                jobstores={"default": SQLAlchemyJobStore(url=f"sqlite:///{self.store}")},
                executors={"default": ThreadPoolExecutor(self._max_concurrent)},
                job_defaults={
                    "coalesce": True,
                    "max_instances": 1,
                    "misfire_grace_time": int(self._misfire_grace.total_seconds()),
                },
            )
            with _LIVE_LOCK:
                if str(self.store) in _LIVE:
                    raise WorkflowError(f"{self.store} is in use by another scheduler")
                _LIVE[str(self.store)] = self
            scheduler.start()
        except WorkflowError:
            raise
        except Exception as exc:
            with _LIVE_LOCK:
                _LIVE.pop(str(self.store), None)
            raise WorkflowError(f"Could not start the embedded scheduler: {exc}") from exc
        self._scheduler = scheduler
        jobs = scheduler.get_jobs()
        paused = sum(1 for job in jobs if job.next_run_time is None)
        log.info(
            "Embedded workflow scheduler started: %d workflows (%d suspended) in %s",
            len(jobs),
            paused,
            self.store,
        )
        return scheduler

    def close(self) -> None:
        self._open = False
        scheduler, self._scheduler = self._scheduler, None
        if scheduler is None:
            return
        with _LIVE_LOCK:
            _LIVE.pop(str(self.store), None)
        scheduler.shutdown(wait=False)
        log.info("Embedded workflow scheduler stopped")

    def refresh_handler_serializer(self) -> EmbeddedRefreshHandlerSerializer:
        return EmbeddedRefreshHandlerSerializer()

    @property
    def _running(self) -> Any:
        if not self._open:
            raise WorkflowError("The embedded workflow scheduler is not open")
        return self._start()

    def _stored(self, job_id: str) -> Any:
        """The stored workflow ``job_id``, or None (no store yet: no workflow at all)."""
        if self._scheduler is None and not self.store.exists():
            if not self._open:
                raise WorkflowError("The embedded workflow scheduler is not open")
            return None
        return self._running.get_job(job_id)

    # -- workflows -------------------------------------------------------------------
    def create_refresh_workflow(self, workflow: CreateRefreshWorkflow) -> EmbeddedRefreshHandler:
        if not isinstance(workflow, CreatePeriodicRefreshWorkflow):
            raise WorkflowError(f"The embedded scheduler cannot create a {type(workflow).__name__}")
        handler = EmbeddedRefreshHandler(_NAME_PREFIX + workflow.materialized_table)
        trigger = cron_trigger(workflow.cron_expression)
        spec = {
            "materialized_table": workflow.materialized_table,
            "description": workflow.description,
            "cron_expression": workflow.cron_expression,
            "init_config": dict(workflow.init_config),
            "execution_config": dict(workflow.execution_config),
            "dynamic_options": {},
        }
        with self._lock:
            if self._running.get_job(handler.job_id) is not None:
                raise WorkflowError(
                    f"A refresh workflow for {workflow.materialized_table} already exists "
                    f"({handler.workflow_name})"
                )
            try:
                self._running.add_job(
                    _FIRE,
                    trigger,
                    args=[str(self.store), handler.workflow_name, handler.workflow_group],
                    kwargs=spec,
                    id=handler.job_id,
                    name=workflow.description or handler.workflow_name,
                )
            except Exception as exc:
                raise WorkflowError(f"Could not create the refresh workflow: {exc}") from exc
        log.info(
            "Created refresh workflow %s (cron %s)", handler.workflow_name, workflow.cron_expression
        )
        return handler

    def modify_refresh_workflow(
        self, workflow: ModifyRefreshWorkflow[EmbeddedRefreshHandler]
    ) -> None:
        handler = workflow.refresh_handler
        with self._lock:
            job = self._stored(handler.job_id)
            if job is None:
                raise WorkflowError(f"No refresh workflow {handler.workflow_name}")
            try:
                if isinstance(workflow, SuspendRefreshWorkflow):
                    job.pause()
                    action = "Suspended"
                elif isinstance(workflow, ResumeRefreshWorkflow):
                    kwargs = dict(job.kwargs)
                    kwargs["dynamic_options"] = dict(workflow.dynamic_options)
                    job.modify(kwargs=kwargs)
                    job.resume()
                    action = "Resumed"
                elif isinstance(workflow, ModifyRefreshWorkflowCronExpr):
                    kwargs = dict(job.kwargs)
                    kwargs["cron_expression"] = workflow.cron_expression
                    job.modify(kwargs=kwargs)
                    paused = job.next_run_time is None
                    job.reschedule(cron_trigger(workflow.cron_expression))
                    if paused:
                        job.pause()
                    action = f"Re-scheduled ({workflow.cron_expression})"
                else:
                    raise WorkflowError(f"The embedded scheduler cannot {type(workflow).__name__}")
            except WorkflowError:
                raise
            except Exception as exc:
                raise WorkflowError(
                    f"Could not change refresh workflow {handler.workflow_name}: {exc}"
                ) from exc
        log.info("%s refresh workflow %s", action, handler.workflow_name)

    def delete_refresh_workflow(
        self, workflow: DeleteRefreshWorkflow[EmbeddedRefreshHandler]
    ) -> None:
        handler = workflow.refresh_handler
        with self._lock:
            if self._stored(handler.job_id) is None:
                return
            try:
                self._running.remove_job(handler.job_id)
            except Exception as exc:
                raise WorkflowError(
                    f"Could not delete refresh workflow {handler.workflow_name}: {exc}"
                ) from exc
        log.info("Deleted refresh workflow %s", handler.workflow_name)

    # -- reading -----------------------------------------------------------------------
    def workflow(self, handler: EmbeddedRefreshHandler) -> dict[str, Any] | None:
        """The stored workflow (its spec, cron and next fire time), or None."""
        job = self._stored(handler.job_id)
        if job is None:
            return None
        return {
            **job.kwargs,
            "suspended": job.next_run_time is None,
            "next_fire_time": job.next_run_time,
        }

    # -- firing ------------------------------------------------------------------------
    def refresh(self, handler: EmbeddedRefreshHandler, spec: Mapping[str, Any]) -> None:
        """Refresh the workflow's table for the fire time just passed."""
        table = str(spec["materialized_table"])
        service = self._service
        if service is None:
            log.error("Workflow %s fired, but no gateway service to refresh with", table)
            return
        now = datetime.now().astimezone()
        scheduled = last_fire_time(str(spec["cron_expression"]), now) or now
        schedule_time = scheduled.strftime(SCHEDULE_TIME_FORMAT)
        environment = SessionEnvironment(
            session_name=f"refresh of {table}", config=dict(spec.get("init_config") or {})
        )
        try:
            session = service.open_session(environment)
        except Exception as exc:
            log.error("Refresh of %s at %s: no session: %s", table, schedule_time, exc)
            return
        try:
            operation = service.refresh_materialized_table(
                session,
                table,
                is_periodic=True,
                schedule_time=schedule_time,
                dynamic_options=dict(spec.get("dynamic_options") or {}),
                execution_config=dict(spec.get("execution_config") or {}),
            )
            job_id = _job_id(service, session, operation)
            log.info("Refresh of %s for %s: job %s", table, schedule_time, job_id)
        except Exception as exc:
            log.error("Refresh of %s for %s failed: %s", table, schedule_time, exc)
        finally:
            try:
                service.close_session(session)
            except Exception:
                log.debug("Could not close the refresh session", exc_info=True)


def _job_id(service: RefreshService, session: Any, operation: Any) -> str | None:
    """The refresh job's id, from the refresh operation's result."""
    token = 0
    while True:
        page = service.fetch_results(session, operation, token, 10, wait=5.0)
        if page.result_type is ResultType.NOT_READY:
            continue
        for batch in page.batches:
            if batch.num_rows:
                return str(batch.column(0)[0].as_py())
        if page.result_type is ResultType.EOS or page.next_token is None:
            return None
        token = page.next_token


class EmbeddedWorkflowSchedulerFactory:
    """``workflow-scheduler.type: embedded`` (the default)."""

    def create_workflow_scheduler(
        self, context: WorkflowSchedulerContext
    ) -> EmbeddedWorkflowScheduler:
        known = {option.key for option in EMBEDDED_OPTIONS}
        unknown = sorted(set(context.options) - known)
        if unknown:
            raise ConfigurationError(
                f"Unknown option(s) of the embedded workflow scheduler: "
                f"{', '.join('workflow-scheduler.embedded.' + key for key in unknown)} "
                f"(known: {', '.join(sorted(known))})"
            )
        options = Configuration(dict(context.options))
        return EmbeddedWorkflowScheduler(
            Path(context.data_dir).expanduser() / "scheduler" / "workflows.sqlite",
            context.service,
            misfire_grace=options.get(MISFIRE_GRACE_TIME),
            max_concurrent=options.get(MAX_CONCURRENT_REFRESHES),
        )
