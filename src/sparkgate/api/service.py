"""The one facade every endpoint and the SQL client talk to (FLIP-91).

Endpoints are stateless translators: each call names its session first, and
everything a session or operation holds lives behind this Protocol. Times are
seconds (``float``); ``None`` means "no limit".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from sparkgate.api.auth import Credentials, Principal
from sparkgate.api.catalog import (
    CatalogTable,
    FunctionDefinition,
    FunctionInfo,
    ObjectIdentifier,
    TableInfo,
    TableKind,
)
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.health import GatewayHealth
from sparkgate.api.jobs import JobInfo
from sparkgate.api.results import FetchOrientation, GatewayInfo, OperationInfo, ResultSet
from sparkgate.api.session import EndpointVersion, SessionEnvironment
from sparkgate.api.status import OperationType
from sparkgate.api.types import ResultSchema
from sparkgate.api.workflow import WorkflowScheduler

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["GatewayService", "OperationProgress", "StaticResult"]


@dataclass(frozen=True)
class StaticResult:
    """What an endpoint-provided operation returns: a schema and its rows."""

    schema: ResultSchema
    batches: Sequence[pa.RecordBatch] = ()


@dataclass(frozen=True)
class OperationProgress:
    """Spark work done so far for one operation (for progress bars)."""

    jobs_total: int
    jobs_done: int
    stages_total: int
    stages_done: int
    tasks_total: int
    tasks_done: int
    tasks_running: int
    elapsed: float


@runtime_checkable
class GatewayService(Protocol):
    # -- sessions -------------------------------------------------------------
    def open_session(self, environment: SessionEnvironment) -> SessionHandle: ...

    def close_session(self, session: SessionHandle) -> None: ...

    def has_peers(self) -> bool:
        """Whether other gateways may serve this service's sessions (a shared state
        database): only then need an endpoint ask :meth:`session_owner`."""
        ...

    def session_owner(self, session: SessionHandle) -> str | None:
        """The REST base URL of another gateway of this service (one state database)
        that serves ``session``, for the endpoint to forward the call to; None when
        this gateway serves it (taking it over if its gateway has ended) or none does.

        Raises:
            EngineUnavailableError: the state database cannot be reached.
        """
        ...

    def render_metrics(self) -> bytes:
        """The gateway's metrics in Prometheus' text format (0.0.4)."""
        ...

    # -- authentication ---------------------------------------------------------
    def authenticate(self, credentials: Credentials) -> Principal | None:
        """Who ``credentials`` prove (see :mod:`sparkgate.api.auth`); None when
        authentication is off and the client named no user.

        Raises:
            AuthenticationError: authentication is on and they prove nothing.
        """
        ...

    def authorize_session(self, session: SessionHandle, principal: Principal | None) -> None:
        """Let ``principal`` use ``session`` (its owner, or an admin); with
        authentication off everybody may.

        Raises:
            PermissionDeniedError: the session is another user's.
            SessionNotFoundError: no such session.
        """
        ...

    def get_session_config(self, session: SessionHandle) -> dict[str, str]: ...

    def get_session_endpoint_version(self, session: SessionHandle) -> EndpointVersion | None: ...

    def heartbeat(self, session: SessionHandle) -> None: ...

    def configure_session(
        self, session: SessionHandle, statement: str, timeout: float | None = None
    ) -> None: ...

    def put_session_resource(self, session: SessionHandle, name: str, content: str) -> str:
        """Keep a client's file (a compiled plan) for the session until it ends;
        the URI statements of the session name it by."""
        ...

    def get_session_resource(self, session: SessionHandle, name: str) -> str:
        """A file kept for the session (a plan COMPILE PLAN wrote there)."""
        ...

    # -- operations -----------------------------------------------------------
    def execute_statement(
        self,
        session: SessionHandle,
        statement: str,
        *,
        timeout: float | None = None,
        config: Mapping[str, str] | None = None,
    ) -> OperationHandle: ...

    def submit_operation(
        self,
        session: SessionHandle,
        executor: Callable[[], StaticResult],
        operation_type: OperationType = OperationType.UNKNOWN,
    ) -> OperationHandle: ...

    def get_operation_info(
        self, session: SessionHandle, operation: OperationHandle
    ) -> OperationInfo: ...

    def get_operation_progress(
        self, session: SessionHandle, operation: OperationHandle
    ) -> OperationProgress: ...

    def get_operation_result_schema(
        self, session: SessionHandle, operation: OperationHandle, timeout: float | None = None
    ) -> ResultSchema: ...

    def cancel_operation(self, session: SessionHandle, operation: OperationHandle) -> None: ...

    def close_operation(self, session: SessionHandle, operation: OperationHandle) -> None: ...

    def fetch_results(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        token: int,
        max_rows: int,
        wait: float = 0.0,
    ) -> ResultSet: ...

    def fetch_results_by_orientation(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        orientation: FetchOrientation,
        max_rows: int,
        wait: float = 0.0,
    ) -> ResultSet: ...

    def fetch_log(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        orientation: FetchOrientation,
        max_rows: int,
    ) -> ResultSet: ...

    # -- utilities ------------------------------------------------------------
    def get_gateway_info(self) -> GatewayInfo: ...

    def health(self) -> GatewayHealth:
        """The engine's state: ready only while it is up (probes, ``gateway status``)."""
        ...

    def complete_statement(
        self, session: SessionHandle, statement: str, position: int
    ) -> list[str]: ...

    # -- catalog --------------------------------------------------------------
    def get_current_catalog(self, session: SessionHandle) -> str: ...

    def get_current_database(self, session: SessionHandle) -> str: ...

    def list_catalogs(self, session: SessionHandle) -> list[str]: ...

    def list_databases(self, session: SessionHandle, catalog_name: str) -> list[str]: ...

    def list_tables(
        self,
        session: SessionHandle,
        catalog_name: str,
        database: str,
        kinds: frozenset[TableKind] = frozenset(TableKind),
    ) -> list[TableInfo]: ...

    def get_table(self, session: SessionHandle, identifier: ObjectIdentifier) -> CatalogTable: ...

    def list_user_defined_functions(
        self, session: SessionHandle, catalog_name: str, database: str
    ) -> list[FunctionInfo]: ...

    def list_system_functions(self, session: SessionHandle) -> list[FunctionInfo]: ...

    def get_function_definition(self, session: SessionHandle, name: str) -> FunctionDefinition: ...

    # -- jobs (the gateway's, not a session's) ----------------------------------
    def list_jobs(self) -> list[JobInfo]:
        """Running jobs and ended ones still in the job store, oldest first (SHOW JOBS)."""
        ...

    def describe_job(self, job_id: str) -> JobInfo:
        """One job (DESCRIBE JOB); an unknown id raises ``ExecutionError``."""
        ...

    def stop_job(
        self, job_id: str, *, with_savepoint: bool = False, drain: bool = False
    ) -> JobInfo:
        """Stop a running job (STOP JOB) and return it ended.

        With ``with_savepoint`` (streaming jobs) it ends FINISHED and its
        ``savepoint`` says where the savepoint is; otherwise it ends CANCELED.
        ``drain`` lets the micro-batch in flight commit longer before stopping.
        """
        ...

    def deploy_script(
        self,
        session: SessionHandle,
        script: str | None,
        script_uri: str | None,
        config: Mapping[str, str] | None = None,
    ) -> str:
        """Run a SQL script (inline, or read from ``script_uri``) as a Spark
        application of its own, with the session's properties and ``config``
        over them (Flink's application mode); its Spark application id. The
        application is a job (SHOW JOBS).
        """
        ...

    # -- materialized tables (FLIP-448) ----------------------------------------
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
        """Start one refresh of a materialized table; the operation's result is the
        refresh job's id and cluster information.

        ``identifier`` must be ``catalog.database.table``; ``schedule_time`` is
        ``yyyy-MM-dd HH:mm:ss`` in the gateway's time zone (a periodic refresh
        overwrites the partition of ``schedule_time`` minus the freshness where
        the table has a date formatter). Malformed input raises
        ``SqlParseError`` before any operation starts.
        """
        ...

    def embedded_workflow_scheduler(self) -> WorkflowScheduler[Any] | None:
        """The gateway's workflow scheduler when it is the built-in ``embedded`` one
        (whose REST routes Flink's V3 API has), else None."""
        ...
