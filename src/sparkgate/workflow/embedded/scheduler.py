"""The ``embedded`` workflow scheduler: APScheduler in the gateway's process,
its workflows in a SQLite file under the data directory, or in the gateway's
state database.

Flink's embedded scheduler keeps workflows in memory ("mainly for
testing"); this one persists them, so after a restart every workflow is
back, a suspended one stays suspended, and the fire times missed while the
gateway was down follow the misfire policy: the workflow fires once at
start (missed fires coalesce into the latest one) if that fire is at most
``misfire-grace-time`` late, otherwise it waits for its next fire time.

By default the workflows are in ``<data-dir>/scheduler/workflows.sqlite``,
made with the first workflow: a gateway without FULL materialized tables runs
no scheduler. With ``sql-gateway.state.url`` they are in the table
``sparkgate_workflows`` of that database, and every gateway given the URL runs
a scheduler on it from the start: a workflow created, suspended, resumed,
re-scheduled or deleted through one gateway is seen by all (each scheduler
wakes every few seconds to read the table again, as it is not told of
another's changes), and when a gateway stops, the others go on firing its
workflows.

Each fire time refreshes once among the schedulers sharing a store, although
several of them may run the same due workflow: before refreshing, a scheduler
claims the fire by inserting (workflow, scheduled fire time) into the table
``sparkgate_workflow_fires`` of the same database, whose primary key lets one
insert win; the others skip that fire. Claims older than a day are deleted.

At each fire time the scheduler opens a session with the creating session's
configuration and calls the gateway's refresh method, the one the REST
refresh route calls for schedulers outside the gateway.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import pickle
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
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
# The workflows' table in the state database, and the claims of fire times
# (in the state database, or in the SQLite file of the default store).
_SHARED_TABLE = "sparkgate_workflows"
_CLAIMS_TABLE = "sparkgate_workflow_fires"
# A shared store's key in the stored jobs' arguments: the same on every gateway
# of the database, whatever host name or credentials each reaches it with.
_SHARED_KEY = f"state:{_SHARED_TABLE}"
# How often a scheduler on a shared store reads it again for other schedulers'
# changes (APScheduler otherwise sleeps until the next fire time it knows).
_WAKE_UP_SECONDS = 2.0
# Claims are kept this long, and pruned at most this often.
_CLAIM_RETENTION_SECONDS = 24 * 3600.0
_PRUNE_EVERY_SECONDS = 3600.0
# The live schedulers by store key (the file, or _SHARED_KEY), for the stored
# jobs' function (APScheduler stores a job's function as a module-level name,
# not an object). Several schedulers of one process may share a database.
_LIVE: dict[str, list[EmbeddedWorkflowScheduler]] = {}
_LIVE_LOCK = threading.Lock()
# The scheduler whose thread pool runs the current thread's fire.
_WORKER = threading.local()


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
    """A stored workflow's fire time (APScheduler calls this by name): refreshed by
    the scheduler that runs it, or any live one of its store (the claim of the fire
    time keeps it to one refresh)."""
    scheduler: EmbeddedWorkflowScheduler | None = getattr(_WORKER, "scheduler", None)
    if scheduler is None or not scheduler.running or scheduler.store_key != store:
        with _LIVE_LOCK:
            live = _LIVE.get(store)
            scheduler = live[0] if live else None
    if scheduler is None:
        log.warning("Workflow %s fired after its scheduler closed", workflow_name)
        return
    scheduler.refresh(EmbeddedRefreshHandler(workflow_name, workflow_group), spec)


def _bind_worker(scheduler: EmbeddedWorkflowScheduler) -> None:
    """The initializer of a scheduler's pool threads: what :func:`fire` runs on."""
    _WORKER.scheduler = scheduler


def _masked(url: str) -> str:
    """``url`` with its password hidden, for messages."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "the state database (sql-gateway.state.url)"


def _cause(exc: BaseException) -> str:
    """A database error's own message (the DB-API exception's), on one line."""
    original = getattr(exc, "orig", None) or exc
    return " ".join(str(original).split())


def _claims_table() -> Any:
    """The claims of fire times: one row per workflow and scheduled fire time."""
    import sqlalchemy as sa

    return sa.Table(
        _CLAIMS_TABLE,
        sa.MetaData(),
        sa.Column("job_id", sa.Unicode(191), primary_key=True),
        # The scheduled fire time, UTC, ISO 8601 to the second.
        sa.Column("fire_time", sa.String(32), primary_key=True),
        sa.Column("claimed_by", sa.String(128), nullable=False),
        sa.Column("claimed_at", sa.Float, nullable=False, index=True),
    )


def _create_tables(engine: Any, *tables: Any) -> None:
    """Create the missing ``tables``, also when another gateway creates them at once."""
    from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

    for table in tables:
        try:
            table.create(engine, checkfirst=True)
        except (IntegrityError, ProgrammingError, OperationalError):
            # Created by another gateway between the check and the CREATE.
            table.create(engine, checkfirst=True)


@functools.cache
def _shared_job_store_type() -> type[Any]:
    """APScheduler's SQLAlchemy job store, for a store several schedulers share.

    After running a due job, a scheduler writes the whole job back with its next
    fire time. Another scheduler may have suspended, re-scheduled or deleted the
    job since this one read it: that write then applies only while the stored
    job is still due (not suspended, not moved to a later time), so it never
    undoes another gateway's change; and a job deleted meanwhile is no error
    (APScheduler's own store raises one there, which would end the scheduler's
    thread).
    """
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.base import STATE_STOPPED
    from apscheduler.util import datetime_to_utc_timestamp

    class SharedJobStore(SQLAlchemyJobStore):  # type: ignore[misc]
        def _stopped(self) -> bool:
            scheduler = getattr(self, "_scheduler", None)
            return scheduler is not None and bool(scheduler.state == STATE_STOPPED)

        # A stopped scheduler's thread looks for due jobs once more: it would advance
        # them without running them (its executor is shut down), so another
        # gateway's scheduler would not run them either.
        def get_due_jobs(self, now: datetime) -> list[Any]:
            return [] if self._stopped() else super().get_due_jobs(now)

        def get_next_run_time(self) -> datetime | None:
            return None if self._stopped() else super().get_next_run_time()

        def update_job(self, job: Any) -> None:
            scheduler = getattr(self, "_scheduler", None)
            if threading.current_thread() is not getattr(scheduler, "_thread", None):
                super().update_job(job)  # a change asked of this gateway
                return
            column = self.jobs_t.c.next_run_time
            update = (
                self.jobs_t.update()
                .values(
                    next_run_time=datetime_to_utc_timestamp(job.next_run_time),
                    job_state=pickle.dumps(job.__getstate__(), self.pickle_protocol),
                )
                .where(self.jobs_t.c.id == job.id, column.is_not(None), column <= time.time())
            )
            with self.engine.begin() as connection:
                if connection.execute(update).rowcount == 0:
                    log.debug("Workflow %s was changed by another scheduler", job.id)

    return SharedJobStore


class EmbeddedWorkflowScheduler:
    """APScheduler's background scheduler on a SQLite job store (``store``), or on
    the table ``sparkgate_workflows`` of the state database ``state_url``, shared
    with the other gateways given that URL."""

    def __init__(
        self,
        store: Path,
        service: RefreshService | None,
        *,
        misfire_grace: timedelta,
        max_concurrent: int,
        state_url: str | None = None,
    ) -> None:
        self.store = store
        self.state_url = state_url
        #: The store in the stored jobs' arguments (the same on every gateway sharing it).
        self.store_key = _SHARED_KEY if state_url else str(store)
        #: Where the workflows are, for messages (never with a password).
        self.location = f"{_SHARED_TABLE} in {_masked(state_url)}" if state_url else str(store)
        #: Who claims fire times, in the claims table.
        self.claimant = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"[:128]
        self._service = service
        self._misfire_grace = misfire_grace
        self._max_concurrent = max_concurrent
        self._scheduler: Any = None
        self._engine: Any = None
        self._claims: Any = None
        self._pruned = 0.0
        self._stop_waking: threading.Event | None = None
        self._open = False
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()

    @property
    def shared(self) -> bool:
        """Whether the workflows are in the state database, shared with other gateways."""
        return self.state_url is not None

    @property
    def running(self) -> bool:
        return self._scheduler is not None

    # -- lifecycle -------------------------------------------------------------------
    def open(self) -> None:
        """Start on the stored workflows; with none stored, start with the first one
        (a gateway without FULL materialized tables runs no scheduler). On a shared
        store, start now: another gateway may create the first workflow."""
        self._open = True
        if self.shared or self.store.exists():
            self._start()

    def _start(self) -> Any:
        with self._start_lock:
            if self._scheduler is not None:
                return self._scheduler
            return self._start_scheduler()

    def _start_scheduler(self) -> Any:
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
        from apscheduler.schedulers.background import BackgroundScheduler

        # APScheduler logs every run at INFO; the refreshes log themselves.
        logging.getLogger("apscheduler.executors").setLevel(logging.WARNING)
        logging.getLogger("apscheduler.scheduler").setLevel(logging.WARNING)
        with _LIVE_LOCK:
            live = _LIVE.setdefault(self.store_key, [])
            if live and not self.shared:
                raise WorkflowError(f"{self.store} is in use by another scheduler")
            live.append(self)
        engine = None
        try:
            engine = self._create_engine()
            if self.shared:
                jobstore = _shared_job_store_type()(engine=engine, tablename=_SHARED_TABLE)
                _create_tables(engine, jobstore.jobs_t)
            else:
                jobstore = SQLAlchemyJobStore(engine=engine)
            claims = _claims_table()
            _create_tables(engine, claims)
            scheduler = BackgroundScheduler(
                jobstores={"default": jobstore},
                executors={
                    "default": ThreadPoolExecutor(
                        self._max_concurrent,
                        pool_kwargs={"initializer": _bind_worker, "initargs": (self,)},
                    )
                },
                job_defaults={
                    "coalesce": True,
                    "max_instances": 1,
                    "misfire_grace_time": int(self._misfire_grace.total_seconds()),
                },
            )
            scheduler.start()
        except Exception as exc:
            self._unregister()
            if engine is not None:
                engine.dispose()
            raise WorkflowError(
                f"Could not start the embedded scheduler on {self.location}: {self._safe(exc)}"
            ) from (None if self.shared else exc)  # a shared store's cause may show its URL
        self._engine, self._claims, self._scheduler = engine, claims, scheduler
        if self.shared:
            self._stop_waking = threading.Event()
            threading.Thread(
                target=_wake_up,
                args=(scheduler, self._stop_waking),
                name="embedded-scheduler-wake-up",
                daemon=True,
            ).start()
        self._prune()
        jobs = scheduler.get_jobs()
        paused = sum(1 for job in jobs if job.next_run_time is None)
        log.info(
            "Embedded workflow scheduler started: %d workflows (%d suspended) in %s",
            len(jobs),
            paused,
            self.location,
        )
        return scheduler

    def _create_engine(self) -> Any:
        import sqlalchemy as sa

        if self.state_url is None:
            self.store.parent.mkdir(parents=True, exist_ok=True)
            return sa.create_engine(f"sqlite:///{self.store}")
        from sqlalchemy.engine import make_url

        try:
            url = make_url(self.state_url)
        except Exception:
            raise WorkflowError("sql-gateway.state.url is not a SQLAlchemy URL") from None
        # pre_ping: a connection the database closed (a restart) is replaced.
        return sa.create_engine(url, pool_pre_ping=True)

    def _safe(self, exc: BaseException) -> str:
        """``exc``'s message without the state database's password."""
        message = _cause(exc)
        if self.state_url:
            from sqlalchemy.engine import make_url

            try:
                password = make_url(self.state_url).password
            except Exception:
                return type(exc).__name__
            if password:
                message = message.replace(str(password), "***")
        return message

    def _unregister(self) -> None:
        with _LIVE_LOCK:
            live = _LIVE.get(self.store_key, [])
            if self in live:
                live.remove(self)
            if not live:
                _LIVE.pop(self.store_key, None)

    def close(self) -> None:
        self._open = False
        with self._start_lock:
            scheduler, self._scheduler = self._scheduler, None
        if scheduler is None:
            return
        if self._stop_waking is not None:
            self._stop_waking.set()
            self._stop_waking = None
        self._unregister()
        scheduler.shutdown(wait=False)
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.dispose()  # its pooled connections (a state database's too)
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
        if self._scheduler is None and not self.shared and not self.store.exists():
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
                    args=[self.store_key, handler.workflow_name, handler.workflow_group],
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
        if not self._claim(handler.job_id, scheduled):
            return
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

    def _claim(self, job_id: str, scheduled: datetime) -> bool:
        """Claim the fire of ``job_id`` at ``scheduled``: whether this scheduler refreshes
        it (False when another scheduler of the store claimed it first)."""
        from sqlalchemy.exc import IntegrityError

        fire_time = scheduled.astimezone(timezone.utc).isoformat(timespec="seconds")
        engine, claims = self._engine, self._claims
        if engine is None or claims is None:
            log.warning("Workflow %s fired before its scheduler started", job_id)
            return False
        try:
            with engine.begin() as connection:
                connection.execute(
                    claims.insert().values(
                        job_id=job_id,
                        fire_time=fire_time,
                        claimed_by=self.claimant,
                        claimed_at=time.time(),
                    )
                )
        except IntegrityError:
            log.debug("Fire of %s at %s: refreshed by another scheduler", job_id, fire_time)
            return False
        except Exception as exc:
            if self.shared:
                log.error(
                    "Fire of %s at %s skipped: it could not be claimed in %s: %s",
                    job_id,
                    fire_time,
                    self.location,
                    self._safe(exc),
                )
                return False
            # One scheduler per file: nobody else could refresh it.
            log.warning("Could not claim the fire of %s at %s: %s", job_id, fire_time, exc)
        self._prune()
        return True

    def _prune(self) -> None:
        """Delete the claims older than a day, at most once an hour."""
        now = time.time()
        engine, claims = self._engine, self._claims
        if engine is None or claims is None or now - self._pruned < _PRUNE_EVERY_SECONDS:
            return
        self._pruned = now
        try:
            with engine.begin() as connection:
                connection.execute(
                    claims.delete().where(claims.c.claimed_at < now - _CLAIM_RETENTION_SECONDS)
                )
        except Exception as exc:
            log.warning("Could not delete old claims of fire times: %s", self._safe(exc))


def _wake_up(scheduler: Any, stop: threading.Event) -> None:
    """Wake ``scheduler`` until ``stop``, to read its shared store again: a workflow
    added or changed by another gateway's scheduler does not wake it."""
    while not stop.wait(_WAKE_UP_SECONDS):
        try:
            scheduler.wakeup()
        except Exception:
            return


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
            state_url=context.state_url or None,
        )
