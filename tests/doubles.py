"""A GatewayService double for protocol tests without a JVM (Kyuubi's Noop doubles).

:class:`FakeGatewayService` implements the whole :class:`GatewayService`
Protocol in memory: sessions, operations with Flink's fetch tokens, a small
catalog and jobs. A statement returns the :class:`Canned` result the test
set for its text (``service.results["SELECT 1"] = Canned.of(...)``); a
statement without one is refused with a clear message, so a test never reads
an answer it did not choose. Every call is recorded in :attr:`calls`, and
:attr:`failures` makes any method raise, for the endpoints' error mapping.

:func:`rest_client` is the REST endpoint's app called in-process (Starlette's
test client: httpx over the ASGI interface, no socket);
:func:`hiveserver2_handler` is the HiveServer2 endpoint's Thrift handler
called in-process. Neither starts Spark: that is the point.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import anyio.from_thread
import httpx
import pyarrow as pa

from sparkgate.api.auth import Credentials, Principal
from sparkgate.api.catalog import (
    CatalogTable,
    FunctionDefinition,
    FunctionInfo,
    ObjectIdentifier,
    TableInfo,
    TableKind,
)
from sparkgate.api.errors import (
    CatalogError,
    ExecutionError,
    IllegalStateError,
    InvalidTokenError,
    OperationNotFoundError,
    PermissionDeniedError,
    SessionLimitError,
    SessionNotFoundError,
    SqlParseError,
    UnsupportedStatementError,
)
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.health import EngineState, GatewayHealth
from sparkgate.api.jobs import JobInfo, JobStatus
from sparkgate.api.results import (
    FetchOrientation,
    GatewayInfo,
    OperationInfo,
    ResultKind,
    ResultSet,
    ResultType,
    RowKind,
)
from sparkgate.api.service import GatewayService, OperationProgress, StaticResult
from sparkgate.api.session import EndpointVersion, SessionEnvironment
from sparkgate.api.status import OperationStatus, OperationType, check_transition
from sparkgate.api.types import STRING, LogicalType, ResultSchema, TypeRoot
from sparkgate.api.workflow import WorkflowScheduler
from sparkgate.security.authentication import Authentication

__all__ = [
    "ENGINE_VERSION",
    "OK",
    "Call",
    "Canned",
    "FakeGatewayService",
    "InProcessClient",
    "InProcessHiveServer2",
    "arrow_batch",
    "hiveserver2_handler",
    "rest_client",
]

ENGINE_VERSION = "4.0.0-double"

_ARROW_TYPES: Mapping[TypeRoot, pa.DataType] = {
    TypeRoot.BOOLEAN: pa.bool_(),
    TypeRoot.TINYINT: pa.int8(),
    TypeRoot.SMALLINT: pa.int16(),
    TypeRoot.INTEGER: pa.int32(),
    TypeRoot.BIGINT: pa.int64(),
    TypeRoot.FLOAT: pa.float32(),
    TypeRoot.DOUBLE: pa.float64(),
    TypeRoot.CHAR: pa.string(),
    TypeRoot.VARCHAR: pa.string(),
    TypeRoot.BINARY: pa.binary(),
    TypeRoot.VARBINARY: pa.binary(),
    TypeRoot.DATE: pa.date32(),
    TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE: pa.timestamp("us"),
    TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE: pa.timestamp("us", tz="UTC"),
    TypeRoot.NULL: pa.null(),
}


def _arrow_type(logical_type: LogicalType) -> pa.DataType:
    try:
        return _ARROW_TYPES[logical_type.type_root]
    except KeyError:
        raise TypeError(
            f"arrow_batch has no Arrow type for {logical_type}: pass batches yourself"
        ) from None


def arrow_batch(schema: ResultSchema, rows: Sequence[Sequence[Any]]) -> pa.RecordBatch:
    """``rows`` (tuples in column order) as one record batch of ``schema``'s Arrow types."""
    columns = [
        pa.array([row[i] for row in rows], type=_arrow_type(column.logical_type))
        for i, column in enumerate(schema.columns)
    ]
    if not columns:
        return pa.RecordBatch.from_pydict({})
    return pa.RecordBatch.from_arrays(columns, names=list(schema.names))


@dataclass(frozen=True)
class Canned:
    """What one statement answers.

    ``rows`` (or ``batches``, for types :func:`arrow_batch` does not know)
    come back in pages of at most ``page_rows`` (and the fetch's
    ``max_rows``); the first ``not_ready`` fetches answer NOT_READY. With
    ``error`` the statement fails while it runs: its status is ERROR and
    fetching it, or asking for its schema, raises ``error``. With
    ``refused`` the service refuses the statement up front
    (``execute_statement`` raises it). ``ends`` is the status a successful
    statement ends in (TIMEOUT, CANCELED... for status mapping tests).
    """

    schema: ResultSchema = field(default_factory=lambda: ResultSchema.of(("result", STRING)))
    rows: tuple[tuple[Any, ...], ...] = (("OK",),)
    batches: tuple[pa.RecordBatch, ...] | None = None
    kinds: tuple[RowKind, ...] | None = None
    is_query: bool = False
    job_id: str | None = None
    page_rows: int | None = None
    not_ready: int = 0
    error: BaseException | None = None
    refused: BaseException | None = None
    log: tuple[str, ...] = ()
    progress: OperationProgress | None = None
    ends: OperationStatus = OperationStatus.FINISHED

    @classmethod
    def query(cls, schema: ResultSchema, rows: Sequence[Sequence[Any]], **kwargs: Any) -> Canned:
        """A query's result (``isQueryResult``)."""
        return cls(schema=schema, rows=tuple(tuple(r) for r in rows), is_query=True, **kwargs)

    @classmethod
    def failing(cls, error: BaseException, **kwargs: Any) -> Canned:
        return cls(error=error, **kwargs)

    def table(self) -> pa.Table:
        batches = self.batches
        if batches is None:
            batches = (arrow_batch(self.schema, self.rows),)
        if not batches:
            return pa.table({name: pa.array([], pa.null()) for name in self.schema.names})
        return pa.Table.from_batches(batches)


OK = Canned()
"""A statement that succeeds with Flink's ``result: OK`` row (DDL, SET...)."""


@dataclass(frozen=True)
class Call:
    """One recorded call of the double."""

    name: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]


@dataclass
class _Session:
    environment: SessionEnvironment
    config: dict[str, str]
    configured: list[str] = field(default_factory=list)
    resources: dict[str, str] = field(default_factory=dict)


@dataclass
class _Operation:
    handle: OperationHandle
    session: SessionHandle
    canned: Canned
    operation_type: OperationType
    table: pa.Table
    status: OperationStatus = OperationStatus.RUNNING
    not_ready_left: int = 0
    cursor: int = 0  # rows handed out
    pages: list[ResultSet] = field(default_factory=list)  # served pages, by token
    log_cursor: int = 0

    def move(self, target: OperationStatus) -> None:
        check_transition(self.status, target)
        self.status = target


class FakeGatewayService:
    """An in-memory GatewayService with canned results; see the module docstring."""

    def __init__(
        self,
        results: Mapping[str, Canned] | None = None,
        *,
        max_sessions: int | None = None,
        authentication: Authentication | None = None,
    ) -> None:
        self.results: dict[str, Canned] = dict(results or {})
        self.authentication = authentication or Authentication(())
        """The real authentication (its authenticators need no Spark)."""
        self.max_sessions = max_sessions
        self.calls: list[Call] = []
        self.failures: dict[str, BaseException] = {}
        """Method name -> exception that method raises (each time) before doing anything."""
        self.gateway_info = GatewayInfo("sparkgate", "0.0.0-test", ENGINE_VERSION)
        self.gateway_health = GatewayHealth(EngineState.UP)
        self.completions: list[str] = []
        self.current_catalog = "spark_catalog"
        self.current_database = "default"
        self.catalog: dict[str, dict[str, list[CatalogTable]]] = {"spark_catalog": {"default": []}}
        self.functions: list[FunctionInfo] = []
        self.system_functions: list[FunctionInfo] = []
        self.jobs: dict[str, JobInfo] = {}
        self.workflow_scheduler: WorkflowScheduler[Any] | None = None
        """What ``embedded_workflow_scheduler`` answers (None: not the embedded one)."""
        self.sessions: dict[SessionHandle, _Session] = {}
        #: Sessions another gateway of the service serves: their REST base URLs.
        self.owners: dict[SessionHandle, str] = {}
        self._operations: dict[OperationHandle, _Operation] = {}
        self._lock = threading.RLock()

    # -- bookkeeping ----------------------------------------------------------------
    def _record(self, name: str, *args: Any, **kwargs: Any) -> None:
        with self._lock:
            self.calls.append(Call(name, args, kwargs))
        failure = self.failures.get(name)
        if failure is not None:
            raise failure

    def called(self, name: str) -> list[Call]:
        """The recorded calls of one method, in order."""
        with self._lock:
            return [c for c in self.calls if c.name == name]

    def _session(self, handle: SessionHandle) -> _Session:
        with self._lock:
            session = self.sessions.get(handle)
        if session is None:
            raise SessionNotFoundError(f"Session '{handle}' does not exist.")
        return session

    def _operation(self, session: SessionHandle, handle: OperationHandle) -> _Operation:
        self._session(session)
        with self._lock:
            operation = self._operations.get(handle)
        if operation is None or operation.session != session:
            raise OperationNotFoundError(f"Operation {handle} does not exist or is closed.")
        return operation

    @property
    def open_operations(self) -> list[OperationHandle]:
        with self._lock:
            return list(self._operations)

    # -- sessions -------------------------------------------------------------------
    def open_session(self, environment: SessionEnvironment) -> SessionHandle:
        self._record("open_session", environment)
        with self._lock:
            if self.max_sessions is not None and len(self.sessions) >= self.max_sessions:
                raise SessionLimitError(
                    f"Failed to open a session: the maximum number of sessions "
                    f"({self.max_sessions}) is reached."
                )
            handle = SessionHandle.create()
            self.sessions[handle] = _Session(environment, dict(environment.config))
        return handle

    def render_metrics(self) -> bytes:
        self._record("render_metrics")
        return b"# no metrics in the double\n"

    def authenticate(self, credentials: Credentials) -> Principal | None:
        return self.authentication.authenticate(credentials)

    def authorize_session(self, session: SessionHandle, principal: Principal | None) -> None:
        if principal is None or not principal.authenticated or principal.admin:
            return
        if self._session(session).environment.user != principal.name:
            raise PermissionDeniedError(f"Session '{session}' belongs to another user")

    def has_peers(self) -> bool:
        return bool(self.owners)

    def session_owner(self, session: SessionHandle) -> str | None:
        # Not recorded: the REST endpoint asks it before every call on a session.
        return self.owners.get(session)

    def close_session(self, session: SessionHandle) -> None:
        self._record("close_session", session)
        self._session(session)
        with self._lock:
            del self.sessions[session]
            for handle in [h for h, o in self._operations.items() if o.session == session]:
                del self._operations[handle]

    def get_session_config(self, session: SessionHandle) -> dict[str, str]:
        self._record("get_session_config", session)
        return dict(self._session(session).config)

    def get_session_endpoint_version(self, session: SessionHandle) -> EndpointVersion | None:
        self._record("get_session_endpoint_version", session)
        return self._session(session).environment.endpoint_version

    def heartbeat(self, session: SessionHandle) -> None:
        self._record("heartbeat", session)
        self._session(session)

    def put_session_resource(self, session: SessionHandle, name: str, content: str) -> str:
        self._record("put_session_resource", session, name, content)
        self._session(session).resources[name] = content
        return f"file:///fake/{session}/{name}"

    def get_session_resource(self, session: SessionHandle, name: str) -> str:
        self._record("get_session_resource", session, name)
        try:
            return self._session(session).resources[name]
        except KeyError:
            raise ExecutionError(f"The session has no resource '{name}'") from None

    def configure_session(
        self, session: SessionHandle, statement: str, timeout: float | None = None
    ) -> None:
        self._record("configure_session", session, statement, timeout)
        state = self._session(session)
        canned = self._canned(statement)
        if canned.refused is not None:
            raise canned.refused
        if canned.error is not None:
            raise canned.error
        state.configured.append(statement)

    # -- operations -----------------------------------------------------------------
    def _canned(self, statement: str) -> Canned:
        key = statement.strip().rstrip(";").strip()
        canned = self.results.get(key)
        if canned is None:
            raise UnsupportedStatementError(
                f"The GatewayService double has no result for {key!r}: set "
                f"service.results[{key!r}] in the test."
            )
        return canned

    def _start(
        self, session: SessionHandle, canned: Canned, operation_type: OperationType
    ) -> OperationHandle:
        operation = _Operation(
            OperationHandle.create(),
            session,
            canned,
            operation_type,
            canned.table() if canned.error is None else pa.table({}),
            not_ready_left=canned.not_ready,
        )
        if canned.error is not None:
            operation.move(OperationStatus.ERROR)
        elif not canned.not_ready:
            operation.move(canned.ends)
        with self._lock:
            self._operations[operation.handle] = operation
        return operation.handle

    def execute_statement(
        self,
        session: SessionHandle,
        statement: str,
        *,
        timeout: float | None = None,
        config: Mapping[str, str] | None = None,
    ) -> OperationHandle:
        self._record("execute_statement", session, statement, timeout=timeout, config=config)
        self._session(session)
        canned = self._canned(statement)
        if canned.refused is not None:
            raise canned.refused
        return self._start(session, canned, OperationType.EXECUTE_STATEMENT)

    def submit_operation(
        self,
        session: SessionHandle,
        executor: Callable[[], StaticResult],
        operation_type: OperationType = OperationType.UNKNOWN,
    ) -> OperationHandle:
        self._record("submit_operation", session, executor, operation_type)
        self._session(session)
        try:
            result = executor()
        except Exception as exc:
            canned = Canned.failing(exc)
        else:
            canned = Canned(schema=result.schema, batches=tuple(result.batches))
        return self._start(session, canned, operation_type)

    def get_operation_info(
        self, session: SessionHandle, operation: OperationHandle
    ) -> OperationInfo:
        self._record("get_operation_info", session, operation)
        op = self._operation(session, operation)
        return OperationInfo(op.status, op.operation_type, has_result=True, error=op.canned.error)

    def get_operation_progress(
        self, session: SessionHandle, operation: OperationHandle
    ) -> OperationProgress:
        self._record("get_operation_progress", session, operation)
        op = self._operation(session, operation)
        return op.canned.progress or OperationProgress(0, 0, 0, 0, 0, 0, 0, 0.0)

    def get_operation_result_schema(
        self, session: SessionHandle, operation: OperationHandle, timeout: float | None = None
    ) -> ResultSchema:
        self._record("get_operation_result_schema", session, operation, timeout)
        op = self._operation(session, operation)
        if op.canned.error is not None:
            raise op.canned.error
        if op.status is OperationStatus.CANCELED:
            raise IllegalStateError(f"Operation {operation} was canceled.")
        return op.canned.schema

    def cancel_operation(self, session: SessionHandle, operation: OperationHandle) -> None:
        self._record("cancel_operation", session, operation)
        op = self._operation(session, operation)
        with self._lock:
            if op.status is not OperationStatus.CANCELED:
                op.move(OperationStatus.CANCELED)

    def close_operation(self, session: SessionHandle, operation: OperationHandle) -> None:
        self._record("close_operation", session, operation)
        self._operation(session, operation)
        with self._lock:
            del self._operations[operation]

    def _next_page(self, op: _Operation, max_rows: int) -> ResultSet:
        """The page after the cursor: PAYLOAD with rows, or EOS once they are all out."""
        canned = op.canned
        if op.not_ready_left:
            op.not_ready_left -= 1
            if not op.not_ready_left:
                op.move(op.canned.ends)
            return ResultSet(ResultType.NOT_READY, next_token=len(op.pages), schema=ResultSchema())
        limit = max(1, min(max_rows, canned.page_rows or max_rows))
        piece = op.table.slice(op.cursor, limit)
        rows = piece.num_rows
        kinds = None if canned.kinds is None else canned.kinds[op.cursor : op.cursor + rows]
        op.cursor += rows
        # Flink answers a first page even for an empty result; after that, no rows is EOS.
        done = not rows and bool(op.pages)
        page = ResultSet(
            ResultType.EOS if done else ResultType.PAYLOAD,
            next_token=None if done else len(op.pages) + 1,
            schema=canned.schema,
            batches=tuple(piece.combine_chunks().to_batches()) if rows else (),
            kinds=kinds,
            is_query_result=canned.is_query,
            result_kind=ResultKind.SUCCESS_WITH_CONTENT,
            job_id=canned.job_id,
        )
        op.pages.append(page)
        return page

    def _check_fetchable(self, op: _Operation) -> None:
        if op.canned.error is not None:
            raise op.canned.error
        if op.status is OperationStatus.CANCELED:
            raise IllegalStateError(f"Operation {op.handle} was canceled; nothing to fetch.")

    def fetch_results(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        token: int,
        max_rows: int,
        wait: float = 0.0,
    ) -> ResultSet:
        self._record("fetch_results", session, operation, token, max_rows, wait=wait)
        op = self._operation(session, operation)
        self._check_fetchable(op)
        with self._lock:
            served = len(op.pages)
            if token == served:
                return self._next_page(op, max_rows)
            if served - 2 <= token < served:
                # The last page again, or the one before (the REST endpoint reads ahead).
                return op.pages[token]
        raise InvalidTokenError(
            f"Invalid fetch token {token}: expecting {served}"
            + (f" (next) or {served - 1} (the last page again)." if served else ".")
        )

    def fetch_results_by_orientation(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        orientation: FetchOrientation,
        max_rows: int,
        wait: float = 0.0,
    ) -> ResultSet:
        self._record(
            "fetch_results_by_orientation", session, operation, orientation, max_rows, wait=wait
        )
        op = self._operation(session, operation)
        self._check_fetchable(op)
        if orientation is FetchOrientation.FIRST:  # as the service without result spooling
            raise InvalidTokenError("The double keeps no result to read again.")
        if orientation is not FetchOrientation.FORWARD:
            raise IllegalStateError("The double fetches FORWARD only.")
        with self._lock:
            return self._next_page(op, max_rows)

    def fetch_log(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        orientation: FetchOrientation,
        max_rows: int,
    ) -> ResultSet:
        self._record("fetch_log", session, operation, orientation, max_rows)
        op = self._operation(session, operation)
        with self._lock:
            if orientation is FetchOrientation.BACKWARD:
                op.log_cursor = 0
            lines = op.canned.log[op.log_cursor : op.log_cursor + max_rows]
            op.log_cursor += len(lines)
        schema = ResultSchema.of(("log", STRING))
        return ResultSet(
            ResultType.PAYLOAD if lines else ResultType.EOS,
            next_token=None,
            schema=schema,
            batches=(arrow_batch(schema, [(line,) for line in lines]),),
            result_kind=ResultKind.SUCCESS_WITH_CONTENT,
        )

    # -- utilities ------------------------------------------------------------------
    def get_gateway_info(self) -> GatewayInfo:
        self._record("get_gateway_info")
        return self.gateway_info

    def health(self) -> GatewayHealth:
        self._record("health")
        return self.gateway_health

    def complete_statement(
        self, session: SessionHandle, statement: str, position: int
    ) -> list[str]:
        self._record("complete_statement", session, statement, position)
        self._session(session)
        return list(self.completions)

    # -- catalog --------------------------------------------------------------------
    def get_current_catalog(self, session: SessionHandle) -> str:
        self._record("get_current_catalog", session)
        self._session(session)
        return self.current_catalog

    def get_current_database(self, session: SessionHandle) -> str:
        self._record("get_current_database", session)
        self._session(session)
        return self.current_database

    def list_catalogs(self, session: SessionHandle) -> list[str]:
        self._record("list_catalogs", session)
        self._session(session)
        return sorted(self.catalog)

    def _databases(self, catalog_name: str) -> dict[str, list[CatalogTable]]:
        databases = self.catalog.get(catalog_name)
        if databases is None:
            raise CatalogError(f"Catalog {catalog_name!r} does not exist.")
        return databases

    def list_databases(self, session: SessionHandle, catalog_name: str) -> list[str]:
        self._record("list_databases", session, catalog_name)
        self._session(session)
        return sorted(self._databases(catalog_name))

    def list_tables(
        self,
        session: SessionHandle,
        catalog_name: str,
        database: str,
        kinds: frozenset[TableKind] = frozenset(TableKind),
    ) -> list[TableInfo]:
        self._record("list_tables", session, catalog_name, database, kinds)
        self._session(session)
        tables = self._databases(catalog_name).get(database)
        if tables is None:
            raise CatalogError(f"Database {catalog_name}.{database} does not exist.")
        return [TableInfo(t.identifier, t.kind, t.is_temporary) for t in tables if t.kind in kinds]

    def add_table(self, table: CatalogTable) -> None:
        """Put ``table`` (fully qualified) into the double's catalog."""
        ident = table.identifier
        assert ident.catalog is not None and ident.database is not None, ident
        self.catalog.setdefault(ident.catalog, {}).setdefault(ident.database, []).append(table)

    def get_table(self, session: SessionHandle, identifier: ObjectIdentifier) -> CatalogTable:
        self._record("get_table", session, identifier)
        self._session(session)
        for databases in self.catalog.values():
            for tables in databases.values():
                for table in tables:
                    if table.identifier == identifier:
                        return table
        raise CatalogError(f"Table or view {identifier} does not exist.")

    def list_user_defined_functions(
        self, session: SessionHandle, catalog_name: str, database: str
    ) -> list[FunctionInfo]:
        self._record("list_user_defined_functions", session, catalog_name, database)
        self._session(session)
        return list(self.functions)

    def list_system_functions(self, session: SessionHandle) -> list[FunctionInfo]:
        self._record("list_system_functions", session)
        self._session(session)
        return list(self.system_functions)

    def get_function_definition(self, session: SessionHandle, name: str) -> FunctionDefinition:
        self._record("get_function_definition", session, name)
        self._session(session)
        raise CatalogError(f"Function {name} does not exist.")

    # -- jobs -----------------------------------------------------------------------
    def list_jobs(self) -> list[JobInfo]:
        self._record("list_jobs")
        with self._lock:
            return sorted(self.jobs.values(), key=lambda j: j.start_time)

    def describe_job(self, job_id: str) -> JobInfo:
        self._record("describe_job", job_id)
        with self._lock:
            job = self.jobs.get(job_id)
        if job is None:
            raise ExecutionError(f"Could not find job '{job_id}'.")
        return job

    def deploy_script(
        self,
        session: SessionHandle,
        script: str | None,
        script_uri: str | None,
        config: Mapping[str, str] | None = None,
    ) -> str:
        self._record("deploy_script", session, script, script_uri, config)
        self._session(session)
        if not (script or script_uri):
            raise SqlParseError("A script to deploy is missing: give script or scriptUri")
        return "app-double-0001"

    def stop_job(
        self, job_id: str, *, with_savepoint: bool = False, drain: bool = False
    ) -> JobInfo:
        self._record("stop_job", job_id, with_savepoint=with_savepoint, drain=drain)
        with self._lock:
            job = self.jobs.get(job_id)
            if job is None:
                raise ExecutionError(f"Could not find job '{job_id}'.")
            if job.status.is_terminal:
                raise ExecutionError(f"Job '{job_id}' has already ended ({job.status.value}).")
            status = JobStatus.FINISHED if with_savepoint else JobStatus.CANCELED
            savepoint = f"savepoints/{job_id}" if with_savepoint else None
            job = replace(job, status=status, end_time=job.start_time + 1, savepoint=savepoint)
            self.jobs[job_id] = job
        return job

    # -- materialized tables -------------------------------------------------------
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
        self._record(
            "refresh_materialized_table",
            session,
            identifier,
            is_periodic=is_periodic,
            schedule_time=schedule_time,
            dynamic_options=dynamic_options,
            static_partitions=static_partitions,
            execution_config=execution_config,
        )
        self._session(session)
        canned = self._canned(f"REFRESH MATERIALIZED TABLE {identifier}")
        return self._start(session, canned, OperationType.EXECUTE_STATEMENT)

    def embedded_workflow_scheduler(self) -> WorkflowScheduler[Any] | None:
        self._record("embedded_workflow_scheduler")
        return self.workflow_scheduler


# The double must stay a GatewayService: a Protocol method it lacks fails at import.
_missing = [
    name
    for name in dir(GatewayService)
    if not name.startswith("_") and not hasattr(FakeGatewayService, name)
]
assert not _missing, f"FakeGatewayService lacks GatewayService methods: {_missing}"


# -- in-process endpoints -----------------------------------------------------------------


class InProcessClient:
    """A blocking HTTP client of an ASGI app, in this process: httpx's ASGI
    transport, its event loop on a portal thread (httpx's transport is async only)."""

    def __init__(self, app: Any, portal: Any) -> None:
        self._portal = portal
        transport = httpx.ASGITransport(app=app)
        self._http = httpx.AsyncClient(transport=transport, base_url="http://gateway")

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        response: httpx.Response = self._portal.call(
            lambda: self._http.request(method, url, **kwargs)
        )
        return response

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", url, **kwargs)

    def close(self) -> None:
        self._portal.call(self._http.aclose)


@contextmanager
def rest_client(
    service: GatewayService | None = None, **settings: Any
) -> Iterator[tuple[InProcessClient, GatewayService]]:
    """The REST endpoint's ASGI app over ``service`` (a fresh double by default),
    with an in-process client: no socket, no uvicorn."""
    from sparkgate.endpoints.rest.app import create_app
    from sparkgate.endpoints.rest.options import RestSettings

    service = service if service is not None else FakeGatewayService()
    values: dict[str, Any] = {"fetch_timeout": 0.0, "fetch_max_rows": 1000}
    values.update(settings)
    app = create_app(service, RestSettings(**values))
    with anyio.from_thread.start_blocking_portal() as portal:
        client = InProcessClient(app, portal)
        try:
            yield client, service
        finally:
            client.close()


def _through_the_wire(message: Any) -> Any:
    """``message`` written with Thrift's binary protocol and read back: what a client gets."""
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.transport.TTransport import TMemoryBuffer

    out = TMemoryBuffer()
    message.write(TBinaryProtocol(out))
    copy = type(message)()
    copy.read(TBinaryProtocol(TMemoryBuffer(out.getvalue())))
    return copy


class InProcessHiveServer2:
    """One HiveServer2 connection's handler, its calls made in this process.

    Requests and responses go through Thrift's binary encoding in memory, so
    a test reads exactly what a client would (the handler may answer with
    pre-encoded parts, such as columnar row sets). ``connection_closed()``
    ends the connection as a client hanging up does.
    """

    def __init__(self, handler: Any) -> None:
        self.handler = handler

    def __getattr__(self, name: str) -> Callable[[Any], Any]:
        method = getattr(self.handler, name)
        if not name[:1].isupper():
            return method  # type: ignore[no-any-return]

        def call(request: Any) -> Any:
            return _through_the_wire(method(_through_the_wire(request)))

        return call


def hiveserver2_handler(
    service: GatewayService | None = None, user: str | None = None, **settings: Any
) -> InProcessHiveServer2:
    """The HiveServer2 endpoint's Thrift handler over ``service`` (a fresh double by
    default), for one connection of ``user``: ``client.OpenSession(TOpenSessionReq(...))``."""
    from sparkgate.endpoints.hiveserver2.handler import (
        CLIServiceHandler,
        ConnectionContext,
        HiveServer2Core,
    )
    from sparkgate.endpoints.hiveserver2.options import HiveServer2Settings

    service = service if service is not None else FakeGatewayService()
    values: dict[str, Any] = {"fetch_timeout": 0.0}
    values.update(settings)
    core = HiveServer2Core(service, HiveServer2Settings(**values))
    return InProcessHiveServer2(CLIServiceHandler(core, ConnectionContext(user)))
