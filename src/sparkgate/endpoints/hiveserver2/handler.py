"""The TCLIService calls, each translated into calls of the GatewayService.

One :class:`CLIServiceHandler` serves one binary connection (or one HTTP
request) and knows who is connected; everything it keeps beyond that lives
in the :class:`HiveServer2Core` shared by all connections: the service, the
settings and the FETCH_FIRST bookkeeping (see :mod:`.fetching`). Every call
runs through :func:`~.errors.guarded`, the one place errors become status.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from TCLIService import ttypes

from sparkgate.api.auth import Principal
from sparkgate.api.catalog import quote_identifier
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import FetchOrientation
from sparkgate.api.service import GatewayService, StaticResult
from sparkgate.api.session import EndpointVersion, SessionEnvironment
from sparkgate.api.session_options import DML_SYNC, RUNTIME_MODE
from sparkgate.api.status import OperationStatus, OperationType
from sparkgate.endpoints.hiveserver2.errors import (
    TIMEOUT_SQL_STATE,
    HiveServer2Error,
    error_status,
    guarded,
)
from sparkgate.endpoints.hiveserver2.fetching import Page, ResultPager
from sparkgate.endpoints.hiveserver2.handles import (
    operation_handle,
    parse_operation,
    parse_session,
    session_handle,
)
from sparkgate.endpoints.hiveserver2.hive_types import table_schema
from sparkgate.endpoints.hiveserver2.metadata import MetadataCalls
from sparkgate.endpoints.hiveserver2.options import HiveServer2Settings
from sparkgate.endpoints.hiveserver2.rowset import to_row_set

__all__ = [
    "ENDPOINT_ID",
    "SERVER_PROTOCOL",
    "SESSION_DEFAULTS",
    "CLIServiceHandler",
    "ConnectionContext",
    "HiveServer2Core",
    "protocol_name",
]

log = logging.getLogger(__name__)

ENDPOINT_ID = "hiveserver2"
_V = ttypes.TProtocolVersion
SERVER_PROTOCOL: int = _V.HIVE_CLI_SERVICE_PROTOCOL_V10
_OP = ttypes.TOperationType
_STATE = ttypes.TOperationState
_S = OperationStatus

_STATES: Mapping[OperationStatus, int] = {
    _S.INITIALIZED: _STATE.INITIALIZED_STATE,
    _S.PENDING: _STATE.PENDING_STATE,
    _S.RUNNING: _STATE.RUNNING_STATE,
    _S.FINISHED: _STATE.FINISHED_STATE,
    _S.CANCELED: _STATE.CANCELED_STATE,
    _S.CLOSED: _STATE.CLOSED_STATE,
    _S.ERROR: _STATE.ERROR_STATE,
    # impyla (and Hive JDBC before 2.2) do not know TIMEDOUT_STATE: an
    # ERROR_STATE with a clear message fails the query in every client.
    _S.TIMEOUT: _STATE.ERROR_STATE,
}
_METADATA_TYPES = frozenset(
    {
        _OP.GET_TYPE_INFO,
        _OP.GET_CATALOGS,
        _OP.GET_SCHEMAS,
        _OP.GET_TABLES,
        _OP.GET_TABLE_TYPES,
        _OP.GET_COLUMNS,
        _OP.GET_FUNCTIONS,
        _OP.UNKNOWN,
    }
)
_FETCH_NEXT = ttypes.TFetchOrientation.FETCH_NEXT
_FETCH_FIRST = ttypes.TFetchOrientation.FETCH_FIRST
_LOG_FETCH = 1
_READ_AHEAD_THREADS = 16
_NO_TOKENS = (
    "Delegation tokens are not supported: sparkgate's HiveServer2 endpoint does not use "
    "Kerberos, authenticate with PLAIN (user name and password) instead."
)
# Nine columns, as Hive's: beeline's in-place progress bar formats exactly nine.
_PROGRESS_HEADER = [
    "STAGES",
    "ATTEMPT",
    "STATUS",
    "TOTAL",
    "COMPLETED",
    "RUNNING",
    "PENDING",
    "FAILED",
    "",
]


def protocol_name(version: int) -> str:
    return str(_V._VALUES_TO_NAMES.get(version, f"HIVE_CLI_SERVICE_PROTOCOL_{version}"))


def _columnar(version: int) -> bool:
    return bool(version >= _V.HIVE_CLI_SERVICE_PROTOCOL_V6)


# As Flink's HiveServer2 endpoint: Hive clients take a statement that returned
# for one that is done, so DML waits and queries run in batch (a client may
# still SET them in its connection's configuration).
SESSION_DEFAULTS = {RUNTIME_MODE.key: "batch", DML_SYNC.key: "true"}


class HiveServer2Core:
    """What every connection shares."""

    def __init__(self, service: GatewayService, settings: HiveServer2Settings) -> None:
        self.service = service
        self.settings = settings
        # Result pages read ahead of their clients (fetching.py): a few at once.
        self._read_ahead = ThreadPoolExecutor(_READ_AHEAD_THREADS, "hiveserver2-read-ahead")
        self.pager = ResultPager(
            service,
            fetch_timeout=settings.fetch_timeout,
            max_rows=settings.fetch_max_rows,
            replay_max_rows=settings.fetch_first_max_rows,
            read_ahead=self._read_ahead,
        )
        self._versions: dict[SessionHandle, int] = {}
        self._lock = threading.Lock()

    def protocol_of(self, session: SessionHandle) -> int:
        with self._lock:
            known = self._versions.get(session)
        if known is not None:
            return known
        endpoint_version = self.service.get_session_endpoint_version(session)
        version = SERVER_PROTOCOL
        if endpoint_version is not None:
            version = ttypes.TProtocolVersion._NAMES_TO_VALUES.get(
                endpoint_version.version, SERVER_PROTOCOL
            )
        with self._lock:
            self._versions[session] = version
        return version

    def remember(self, session: SessionHandle, version: int) -> None:
        with self._lock:
            self._versions[session] = version

    def close(self) -> None:
        """Stop reading ahead (the endpoint stops); a page on its way is dropped."""
        self._read_ahead.shutdown(wait=False, cancel_futures=True)

    def session_closed(self, session: SessionHandle) -> None:
        with self._lock:
            self._versions.pop(session, None)
        self.pager.forget_session(session)


class ConnectionContext:
    """Who is connected, and the sessions they opened on this connection."""

    def __init__(
        self,
        user: str | None,
        *,
        closes_sessions: bool = True,
        principal: Principal | None = None,
        address: str | None = None,
    ) -> None:
        self.user = user
        #: The client's address (the audit log).
        self.address = address
        # Who the gateway's authentication proved (None: authentication is off).
        self.principal = principal
        self.closes_sessions = closes_sessions
        self.sessions: set[SessionHandle] = set()
        self._lock = threading.Lock()

    def opened(self, session: SessionHandle) -> None:
        if self.closes_sessions:
            with self._lock:
                self.sessions.add(session)

    def closed(self, session: SessionHandle) -> None:
        with self._lock:
            self.sessions.discard(session)

    def take_sessions(self) -> list[SessionHandle]:
        with self._lock:
            sessions = list(self.sessions)
            self.sessions.clear()
            return sessions


class CLIServiceHandler:
    """``TCLIService.Iface``: one method per Thrift call."""

    def __init__(self, core: HiveServer2Core, connection: ConnectionContext) -> None:
        self.core = core
        self.connection = connection

    @property
    def service(self) -> GatewayService:
        return self.core.service

    def _session(self, handle: ttypes.TSessionHandle | None) -> SessionHandle:
        """The session ``handle`` names, if the connection's user may use it."""
        session = parse_session(handle)
        self.service.authorize_session(session, self.connection.principal)
        return session

    def _operation(
        self, handle: ttypes.TOperationHandle | None
    ) -> tuple[SessionHandle, OperationHandle]:
        session, operation = parse_operation(handle)
        self.service.authorize_session(session, self.connection.principal)
        return session, operation

    # -- sessions ------------------------------------------------------------------
    def OpenSession(self, req: ttypes.TOpenSessionReq) -> ttypes.TOpenSessionResp:
        def call() -> dict[str, Any]:
            client = req.client_protocol if req.client_protocol is not None else SERVER_PROTOCOL
            version = min(client, SERVER_PROTOCOL)
            principal = self.connection.principal
            user = (principal.name if principal else None) or self.connection.user
            user = user or req.username or "anonymous"
            config = dict(SESSION_DEFAULTS)
            database: str | None = None
            for key, value in (req.configuration or {}).items():
                if key == "use:database":
                    database = value
                elif key.startswith("set:hiveconf:"):
                    config[key[len("set:hiveconf:") :]] = value
                elif key.startswith("set:hivevar:"):
                    config[key[len("set:hivevar:") :]] = value
                else:
                    config[key] = value
            environment = SessionEnvironment(
                session_name=f"hiveserver2:{user}",
                endpoint_version=EndpointVersion(ENDPOINT_ID, protocol_name(version)),
                config=config,
                user=user,
                principal=principal,
                client_address=self.connection.address,
            )
            handle = self.service.open_session(environment)
            try:
                if database:
                    self.service.configure_session(handle, f"USE {quote_identifier(database)}")
            except BaseException:
                self.service.close_session(handle)
                raise
            self.core.remember(handle, version)
            self.connection.opened(handle)
            log.info(
                "HiveServer2 session %s opened for %s (%s)", handle, user, protocol_name(version)
            )
            return {
                "serverProtocolVersion": version,
                "sessionHandle": session_handle(handle),
                "configuration": {},
            }

        return guarded(ttypes.TOpenSessionResp, call)

    def CloseSession(self, req: ttypes.TCloseSessionReq) -> ttypes.TCloseSessionResp:
        def call() -> dict[str, Any]:
            session = self._session(req.sessionHandle)
            self.connection.closed(session)
            try:
                self.service.close_session(session)
            finally:
                self.core.session_closed(session)
            return {}

        return guarded(ttypes.TCloseSessionResp, call)

    def GetInfo(self, req: ttypes.TGetInfoReq) -> ttypes.TGetInfoResp:
        def call() -> dict[str, Any]:
            self.service.heartbeat(self._session(req.sessionHandle))
            info = self.service.get_gateway_info()
            kind = ttypes.TGetInfoType
            strings = {
                kind.CLI_SERVER_NAME: info.product_name,
                kind.CLI_DBMS_NAME: "Spark SQL",
                kind.CLI_DBMS_VER: info.engine_version,
                kind.CLI_IDENTIFIER_QUOTE_CHAR: "`",
                kind.CLI_SEARCH_PATTERN_ESCAPE: "\\",
                kind.CLI_USER_NAME: self.connection.user or "",
                kind.CLI_CATALOG_NAME: "Y",
            }
            lengths = {
                kind.CLI_MAX_COLUMN_NAME_LEN: 128,
                kind.CLI_MAX_SCHEMA_NAME_LEN: 128,
                kind.CLI_MAX_TABLE_NAME_LEN: 128,
                kind.CLI_MAX_CATALOG_NAME_LEN: 128,
                kind.CLI_MAX_IDENTIFIER_LEN: 128,
                kind.CLI_MAX_USER_NAME_LEN: 128,
                kind.CLI_MAX_STATEMENT_LEN: 0,
            }
            if req.infoType in strings:
                value = ttypes.TGetInfoValue(stringValue=strings[req.infoType])
            elif req.infoType in lengths:
                value = ttypes.TGetInfoValue(lenValue=lengths[req.infoType])
            elif req.infoType == kind.CLI_TXN_CAPABLE:
                value = ttypes.TGetInfoValue(smallIntValue=0)
            else:
                raise HiveServer2Error(f"Unrecognized GetInfoType value: {req.infoType}", "HY096")
            return {"infoValue": value}

        return guarded(ttypes.TGetInfoResp, call)

    # -- statements ----------------------------------------------------------------
    def ExecuteStatement(self, req: ttypes.TExecuteStatementReq) -> ttypes.TExecuteStatementResp:
        def call() -> dict[str, Any]:
            session = self._session(req.sessionHandle)
            timeout = float(req.queryTimeout) if req.queryTimeout else None
            overlay = {str(k): str(v) for k, v in (req.confOverlay or {}).items()}
            operation = self.service.execute_statement(
                session, req.statement or "", timeout=timeout, config=overlay or None
            )
            if not req.runAsync:
                self._wait_ready(session, operation)
            return {"operationHandle": operation_handle(session, operation, _OP.EXECUTE_STATEMENT)}

        return guarded(ttypes.TExecuteStatementResp, call)

    def _wait_ready(self, session: SessionHandle, operation: OperationHandle) -> None:
        """Block until results are ready; a failure closes the operation and is raised."""
        try:
            self.service.get_operation_result_schema(session, operation, timeout=None)
        except BaseException:
            try:
                self.service.close_operation(session, operation)
            except Exception:
                log.debug("Closing failed operation %s", operation, exc_info=True)
            raise

    def GetOperationStatus(
        self, req: ttypes.TGetOperationStatusReq
    ) -> ttypes.TGetOperationStatusResp:
        def call() -> dict[str, Any]:
            session, operation = self._operation(req.operationHandle)
            info = self.service.get_operation_info(session, operation)
            fields: dict[str, Any] = {
                "operationState": _STATES[info.status],
                "hasResultSet": info.has_result,
            }
            if info.status is _S.ERROR and info.error is not None:
                failure = error_status(info.error)
                fields["errorMessage"] = failure.errorMessage
                fields["sqlState"] = failure.sqlState
                fields["errorCode"] = 0
            elif info.status is _S.TIMEOUT:
                fields["errorMessage"] = (
                    "Query timed out: it ran longer than its queryTimeout and was cancelled."
                )
                fields["sqlState"] = TIMEOUT_SQL_STATE
                fields["errorCode"] = 0
            if req.getProgressUpdate:
                fields["progressUpdateResponse"] = self._progress(session, operation, info.status)
            return fields

        return guarded(ttypes.TGetOperationStatusResp, call)

    def _progress(
        self, session: SessionHandle, operation: OperationHandle, status: OperationStatus
    ) -> ttypes.TProgressUpdateResp:
        try:
            progress = self.service.get_operation_progress(session, operation)
        except Exception:
            log.debug("No progress for %s", operation, exc_info=True)
            return ttypes.TProgressUpdateResp(
                headerNames=[],
                rows=[],
                progressedPercentage=0.0,
                status=ttypes.TJobExecutionStatus.NOT_AVAILABLE,
                footerSummary="",
                startTime=int(time.time() * 1000),
            )
        # FINISHED means "results ready": the query's jobs may still be running.
        done = status.is_terminal and (
            status is not _S.FINISHED or progress.jobs_done >= progress.jobs_total
        )
        total = progress.tasks_total
        percentage = 1.0 if done else (progress.tasks_done / total if total else 0.0)
        pending = max(total - progress.tasks_done - progress.tasks_running, 0)
        row = [
            f"Stages: {progress.stages_done}/{progress.stages_total}",
            "0",
            "SUCCEEDED" if done else "RUNNING",
            str(total),
            str(progress.tasks_done),
            str(progress.tasks_running),
            str(pending),
            "0",
            "",
        ]
        return ttypes.TProgressUpdateResp(
            headerNames=list(_PROGRESS_HEADER),
            rows=[row],
            progressedPercentage=percentage,
            status=(
                ttypes.TJobExecutionStatus.COMPLETE
                if done
                else ttypes.TJobExecutionStatus.IN_PROGRESS
            ),
            footerSummary=f"Jobs: {progress.jobs_done}/{progress.jobs_total}",
            # Epoch milliseconds: beeline prints now - startTime as ELAPSED TIME.
            startTime=int((time.time() - progress.elapsed) * 1000),
        )

    def CancelOperation(self, req: ttypes.TCancelOperationReq) -> ttypes.TCancelOperationResp:
        def call() -> dict[str, Any]:
            session, operation = self._operation(req.operationHandle)
            self.service.cancel_operation(session, operation)
            return {}

        return guarded(ttypes.TCancelOperationResp, call)

    def CloseOperation(self, req: ttypes.TCloseOperationReq) -> ttypes.TCloseOperationResp:
        def call() -> dict[str, Any]:
            session, operation = self._operation(req.operationHandle)
            self.core.pager.forget(operation)
            self.service.close_operation(session, operation)
            return {}

        return guarded(ttypes.TCloseOperationResp, call)

    def GetResultSetMetadata(
        self, req: ttypes.TGetResultSetMetadataReq
    ) -> ttypes.TGetResultSetMetadataResp:
        def call() -> dict[str, Any]:
            session, operation = self._operation(req.operationHandle)
            schema = self.service.get_operation_result_schema(
                session, operation, timeout=self.core.settings.fetch_timeout
            )
            columns = [(c.name, c.logical_type, c.comment) for c in schema.columns]
            return {"schema": table_schema(columns)}

        return guarded(ttypes.TGetResultSetMetadataResp, call)

    def FetchResults(self, req: ttypes.TFetchResultsReq) -> ttypes.TFetchResultsResp:
        def call() -> dict[str, Any]:
            session, operation = self._operation(req.operationHandle)
            orientation = _FETCH_NEXT if req.orientation is None else req.orientation
            if orientation not in (_FETCH_NEXT, _FETCH_FIRST):
                name = ttypes.TFetchOrientation._VALUES_TO_NAMES.get(orientation, orientation)
                raise HiveServer2Error(
                    f"Fetch orientation {name} is not supported: use FETCH_NEXT or FETCH_FIRST.",
                    "HY106",
                )
            columnar = _columnar(self.core.protocol_of(session))
            max_rows = int(req.maxRows or 0)
            if req.fetchType == _LOG_FETCH:
                log_page = self.service.fetch_log(
                    session,
                    operation,
                    FetchOrientation.BACKWARD
                    if orientation == _FETCH_FIRST
                    else FetchOrientation.FORWARD,
                    max(1, min(max_rows or 1000, self.core.settings.fetch_max_rows)),
                )
                rows = to_row_set(log_page.batches, log_page.schema, columnar)
                return {"hasMoreRows": log_page.num_rows > 0, "results": rows}

            def encode(page: Page) -> Any:
                return to_row_set(page.batches, page.schema, columnar, page.start_offset)

            page = self.core.pager.fetch(
                session,
                operation,
                first=orientation == _FETCH_FIRST,
                max_rows=max_rows,
                is_metadata=req.operationHandle.operationType in _METADATA_TYPES,
                encode=encode,
            )
            rows = page.encoded if page.encoded is not None else encode(page)
            return {"hasMoreRows": page.has_more, "results": rows}

        return guarded(ttypes.TFetchResultsResp, call)

    # -- metadata --------------------------------------------------------------------
    def _metadata(
        self,
        response: Callable[..., Any],
        session_handle_: ttypes.TSessionHandle,
        operation_type: int,
        build: Callable[[MetadataCalls], StaticResult],
    ) -> Any:
        def call() -> dict[str, Any]:
            session = self._session(session_handle_)
            calls = MetadataCalls(self.service, session)
            operation = self.service.submit_operation(
                session, lambda: build(calls), OperationType.UNKNOWN
            )
            self._wait_ready(session, operation)
            return {"operationHandle": operation_handle(session, operation, operation_type)}

        return guarded(response, call)

    def GetTypeInfo(self, req: ttypes.TGetTypeInfoReq) -> ttypes.TGetTypeInfoResp:
        return self._metadata(
            ttypes.TGetTypeInfoResp, req.sessionHandle, _OP.GET_TYPE_INFO, MetadataCalls.type_info
        )

    def GetCatalogs(self, req: ttypes.TGetCatalogsReq) -> ttypes.TGetCatalogsResp:
        return self._metadata(
            ttypes.TGetCatalogsResp, req.sessionHandle, _OP.GET_CATALOGS, MetadataCalls.catalogs
        )

    def GetSchemas(self, req: ttypes.TGetSchemasReq) -> ttypes.TGetSchemasResp:
        return self._metadata(
            ttypes.TGetSchemasResp,
            req.sessionHandle,
            _OP.GET_SCHEMAS,
            lambda calls: calls.schemas(req.catalogName, req.schemaName),
        )

    def GetTables(self, req: ttypes.TGetTablesReq) -> ttypes.TGetTablesResp:
        return self._metadata(
            ttypes.TGetTablesResp,
            req.sessionHandle,
            _OP.GET_TABLES,
            lambda calls: calls.tables(
                req.catalogName, req.schemaName, req.tableName, req.tableTypes
            ),
        )

    def GetTableTypes(self, req: ttypes.TGetTableTypesReq) -> ttypes.TGetTableTypesResp:
        return self._metadata(
            ttypes.TGetTableTypesResp,
            req.sessionHandle,
            _OP.GET_TABLE_TYPES,
            MetadataCalls.table_types,
        )

    def GetColumns(self, req: ttypes.TGetColumnsReq) -> ttypes.TGetColumnsResp:
        return self._metadata(
            ttypes.TGetColumnsResp,
            req.sessionHandle,
            _OP.GET_COLUMNS,
            lambda calls: calls.columns(
                req.catalogName, req.schemaName, req.tableName, req.columnName
            ),
        )

    def GetFunctions(self, req: ttypes.TGetFunctionsReq) -> ttypes.TGetFunctionsResp:
        return self._metadata(
            ttypes.TGetFunctionsResp,
            req.sessionHandle,
            _OP.GET_FUNCTIONS,
            lambda calls: calls.functions(req.catalogName, req.schemaName, req.functionName),
        )

    def GetPrimaryKeys(self, req: ttypes.TGetPrimaryKeysReq) -> ttypes.TGetPrimaryKeysResp:
        return self._metadata(
            ttypes.TGetPrimaryKeysResp, req.sessionHandle, _OP.UNKNOWN, MetadataCalls.primary_keys
        )

    def GetCrossReference(self, req: ttypes.TGetCrossReferenceReq) -> ttypes.TGetCrossReferenceResp:
        return self._metadata(
            ttypes.TGetCrossReferenceResp,
            req.sessionHandle,
            _OP.UNKNOWN,
            MetadataCalls.cross_reference,
        )

    # -- delegation tokens -------------------------------------------------------------
    def _no_tokens(self) -> dict[str, Any]:
        raise HiveServer2Error(_NO_TOKENS, "HYC00")

    def GetDelegationToken(
        self, req: ttypes.TGetDelegationTokenReq
    ) -> ttypes.TGetDelegationTokenResp:
        return guarded(ttypes.TGetDelegationTokenResp, self._no_tokens)

    def CancelDelegationToken(
        self, req: ttypes.TCancelDelegationTokenReq
    ) -> ttypes.TCancelDelegationTokenResp:
        return guarded(ttypes.TCancelDelegationTokenResp, self._no_tokens)

    def RenewDelegationToken(
        self, req: ttypes.TRenewDelegationTokenReq
    ) -> ttypes.TRenewDelegationTokenResp:
        return guarded(ttypes.TRenewDelegationTokenResp, self._no_tokens)

    # -- connection end ------------------------------------------------------------------
    def connection_closed(self) -> None:
        """Close what the client left open: its sessions (and their operations)."""
        for session in self.connection.take_sessions():
            try:
                self.service.close_session(session)
                log.info("HiveServer2 session %s closed: its connection ended", session)
            except Exception:
                log.debug("Session %s was already gone", session, exc_info=True)
            finally:
                self.core.session_closed(session)
