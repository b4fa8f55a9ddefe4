"""Workflow schedulers for materialized tables in FULL refresh mode (FLIP-448).

A materialized table in FULL mode is refreshed by a *refresh workflow*: a
schedule kept by a workflow scheduler (the built-in ``embedded`` one, or
Airflow, DolphinScheduler, a company's own) that calls the gateway's refresh
method (:meth:`RefreshService.refresh_materialized_table`, REST ``POST
/sessions/:h/materialized-tables/:identifier/refresh``) at each fire time.

A scheduler is a plug-in: a :class:`WorkflowSchedulerFactory` registered
under the entry-point group :data:`WORKFLOW_SCHEDULER_GROUP`, picked by
``workflow-scheduler.type``. It receives the options
``workflow-scheduler.<type>.*`` with that prefix removed, and validates them.

The gateway tells a scheduler what to do with one of the
:class:`RefreshWorkflow` values (the operation types of FLIP-448): create a
periodic workflow, suspend, resume, change its cron expression, delete it.
What the scheduler returns at creation, its :class:`RefreshHandler`, is
stored in the catalog with the table (serialized by the scheduler's own
:class:`RefreshHandlerSerializer`) and handed back with every later
operation on that workflow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from sparkgate.api.errors import ExecutionError
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import ResultSet
from sparkgate.api.session import SessionEnvironment

__all__ = [
    "SCHEDULE_TIME_FORMAT",
    "WORKFLOW_SCHEDULER_GROUP",
    "CreatePeriodicRefreshWorkflow",
    "CreateRefreshWorkflow",
    "DeleteRefreshWorkflow",
    "ModifyRefreshWorkflow",
    "ModifyRefreshWorkflowCronExpr",
    "RefreshHandler",
    "RefreshHandlerSerializer",
    "RefreshService",
    "RefreshWorkflow",
    "ResumeRefreshWorkflow",
    "SuspendRefreshWorkflow",
    "WorkflowError",
    "WorkflowScheduler",
    "WorkflowSchedulerContext",
    "WorkflowSchedulerFactory",
]

WORKFLOW_SCHEDULER_GROUP = "sparkgate.workflow_schedulers"
"""The entry-point group of :class:`WorkflowSchedulerFactory` plug-ins; the name is
the value of ``workflow-scheduler.type``."""

SCHEDULE_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
"""``scheduleTime``: SQL's ``yyyy-MM-dd HH:mm:ss``, in the gateway's local time zone."""


def _frozen(values: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(values or {}))


class WorkflowError(ExecutionError):
    """A workflow scheduler could not create, change or delete a refresh workflow
    (FLIP-448's ``WorkflowException``)."""


@runtime_checkable
class RefreshHandler(Protocol):
    """What locates a refresh workflow in its scheduler (a name, a group, an id)."""

    def as_summary_string(self) -> str:
        """The handler as DESCRIBE shows it."""
        ...


H = TypeVar("H", bound=RefreshHandler)


class RefreshHandlerSerializer(Protocol[H]):
    """Turns a scheduler's handlers into bytes for the catalog, and back."""

    def serialize(self, handler: H) -> bytes: ...

    def deserialize(self, data: bytes) -> H: ...


# -- the operations ------------------------------------------------------------------


@dataclass(frozen=True)
class RefreshWorkflow:
    """One operation on a refresh workflow; the subclasses carry what it needs."""


@dataclass(frozen=True)
class CreateRefreshWorkflow(RefreshWorkflow):
    """Create a refresh workflow for a materialized table."""


@dataclass(frozen=True)
class CreatePeriodicRefreshWorkflow(CreateRefreshWorkflow):
    """A workflow that refreshes ``materialized_table`` on ``cron_expression``.

    ``materialized_table`` is fully qualified (``catalog.database.table``,
    parts quoted with backticks where needed); ``cron_expression`` is in
    Quartz's syntax, as Flink derives it from the table's freshness
    (seconds, minutes, hours, day-of-month, month, day-of-week, year).
    ``init_config`` is the creating session's configuration (the refresh
    runs in a session opened with it); ``execution_config`` is passed to
    each refresh; ``rest_endpoint_url`` is where an external scheduler
    reaches the gateway (None when the gateway serves no REST endpoint).
    """

    materialized_table: str
    description: str
    cron_expression: str
    init_config: Mapping[str, str] = field(default_factory=_frozen)
    execution_config: Mapping[str, str] = field(default_factory=_frozen)
    rest_endpoint_url: str | None = None


@dataclass(frozen=True)
class ModifyRefreshWorkflow(RefreshWorkflow, Generic[H]):
    """Change an existing workflow, located by ``refresh_handler``."""

    refresh_handler: H


@dataclass(frozen=True)
class SuspendRefreshWorkflow(ModifyRefreshWorkflow[H]):
    """Stop firing until resumed (ALTER MATERIALIZED TABLE ... SUSPEND)."""


@dataclass(frozen=True)
class ResumeRefreshWorkflow(ModifyRefreshWorkflow[H]):
    """Fire again, with ``dynamic_options`` for the table's refreshes (RESUME WITH (...))."""

    dynamic_options: Mapping[str, str] = field(default_factory=_frozen)


@dataclass(frozen=True)
class ModifyRefreshWorkflowCronExpr(ModifyRefreshWorkflow[H]):
    """Fire on a new cron expression (Quartz syntax)."""

    cron_expression: str = ""


@dataclass(frozen=True)
class DeleteRefreshWorkflow(RefreshWorkflow, Generic[H]):
    """Delete the workflow located by ``refresh_handler`` (DROP MATERIALIZED TABLE)."""

    refresh_handler: H


# -- the plug-in -----------------------------------------------------------------------


@runtime_checkable
class WorkflowScheduler(Protocol[H]):
    """Creates, changes and deletes refresh workflows in one scheduler service.

    Every method raises :class:`WorkflowError` when the scheduler fails; the
    gateway then leaves the table as it was.
    """

    def open(self) -> None:
        """Get ready (connect, load stored workflows); called once at gateway start."""
        ...

    def close(self) -> None:
        """Release what :meth:`open` took; called once at gateway stop."""
        ...

    def refresh_handler_serializer(self) -> RefreshHandlerSerializer[H]:
        """The serializer of this scheduler's refresh handlers."""
        ...

    def create_refresh_workflow(self, workflow: CreateRefreshWorkflow) -> H:
        """Create the workflow; the handler that locates it from now on."""
        ...

    def modify_refresh_workflow(self, workflow: ModifyRefreshWorkflow[H]) -> None:
        """Suspend, resume or re-schedule the workflow."""
        ...

    def delete_refresh_workflow(self, workflow: DeleteRefreshWorkflow[H]) -> None:
        """Delete the workflow; deleting one that is gone is not an error."""
        ...


class RefreshService(Protocol):
    """The gateway methods a scheduler inside the gateway's process calls at a fire
    time: the same ones the REST refresh route calls for schedulers outside it."""

    def open_session(self, environment: SessionEnvironment) -> SessionHandle: ...

    def close_session(self, session: SessionHandle) -> None: ...

    def refresh_materialized_table(
        self,
        session: SessionHandle,
        identifier: str,
        *,
        is_periodic: bool,
        schedule_time: str | None = None,
        dynamic_options: Mapping[str, str] | None = None,
        static_partitions: Mapping[str, str] | None = None,
        execution_config: Mapping[str, str] | None = None,
    ) -> OperationHandle:
        """Start a refresh; the handle of the operation that runs it (its result is
        the refresh job's id and cluster information)."""
        ...

    def fetch_results(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        token: int,
        max_rows: int,
        wait: float = 0.0,
    ) -> ResultSet: ...


@dataclass(frozen=True)
class WorkflowSchedulerContext:
    """What a factory gets: the gateway's whole ``configuration``, the scheduler's
    ``options`` (``workflow-scheduler.<type>.*`` with the prefix removed), the
    gateway's ``data_dir``, the ``service`` to trigger refreshes through, and
    ``state_url``: the SQLAlchemy URL of the database the gateway keeps its
    state in (``sql-gateway.state.url``), None when it keeps it in files under
    ``data_dir``. Gateways given the same ``state_url`` are one service: a
    scheduler that keeps its workflows there must fire each one once among them."""

    configuration: Mapping[str, str]
    options: Mapping[str, str]
    data_dir: str
    service: RefreshService | None = None
    state_url: str | None = None


@runtime_checkable
class WorkflowSchedulerFactory(Protocol):
    """Makes the scheduler of one ``workflow-scheduler.type``."""

    def create_workflow_scheduler(
        self, context: WorkflowSchedulerContext
    ) -> WorkflowScheduler[Any]:
        """The scheduler; raises :class:`~sparkgate.api.errors.ConfigurationError`
        for a missing, unknown or malformed option."""
        ...
