"""HiveServer2's TCLIService calls over the GatewayService double, called in-process.

The handler is what a connection's Thrift processor calls; here the tests
call it directly with the generated request types, and read the generated
response types, so every call's translation is pinned without a socket or
a JVM. One test goes over a real loopback port (binary transport) too.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from TCLIService import TCLIService, ttypes
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from sparkgate.api.catalog import CatalogTable, ObjectIdentifier, TableKind
from sparkgate.api.errors import ExecutionError, SqlParseError
from sparkgate.api.service import OperationProgress
from sparkgate.api.session import EndpointVersion
from sparkgate.api.status import OperationStatus
from sparkgate.api.types import INT, STRING, Column, ResultSchema
from sparkgate.endpoints.hiveserver2.endpoint import HiveServer2Endpoint
from sparkgate.endpoints.hiveserver2.handler import SESSION_DEFAULTS
from sparkgate.endpoints.hiveserver2.options import HiveServer2Settings
from tests.doubles import ENGINE_VERSION, OK, Canned, FakeGatewayService, hiveserver2_handler

V = ttypes.TProtocolVersion
OK_STATUS = ttypes.TStatusCode.SUCCESS_STATUS
ERROR_STATUS = ttypes.TStatusCode.ERROR_STATUS
STATE = ttypes.TOperationState
FIRST = ttypes.TFetchOrientation.FETCH_FIRST
NEXT = ttypes.TFetchOrientation.FETCH_NEXT

SCHEMA = ResultSchema.of(("id", INT), ("name", STRING))
ROWS = [(1, "one"), (2, None), (3, "three")]


def open_session(handler: Any, protocol: int = V.HIVE_CLI_SERVICE_PROTOCOL_V10, **conf: str) -> Any:
    resp = handler.OpenSession(
        ttypes.TOpenSessionReq(client_protocol=protocol, username="tester", configuration=conf)
    )
    assert resp.status.statusCode == OK_STATUS, resp.status
    return resp


@pytest.fixture
def session(handler: Any) -> Any:
    return open_session(handler).sessionHandle


def execute(handler: Any, session: Any, statement: str, **kw: Any) -> Any:
    resp = handler.ExecuteStatement(
        ttypes.TExecuteStatementReq(sessionHandle=session, statement=statement, **kw)
    )
    assert resp.status.statusCode == OK_STATUS, resp.status
    return resp.operationHandle


def column_values(column: Any) -> list[Any]:
    kind = next(v for v in column.__dict__.values() if v is not None)
    nulls = kind.nulls or b""
    return [
        None if i // 8 < len(nulls) and nulls[i // 8] & (1 << (i % 8)) else value
        for i, value in enumerate(kind.values)
    ]


def rows_of(results: Any) -> list[tuple[Any, ...]]:
    if results.columns is not None:
        return list(zip(*(column_values(c) for c in results.columns), strict=True))
    return [
        tuple(
            next((v.value for v in cell.__dict__.values() if v is not None), None)
            for cell in row.colVals
        )
        for row in results.rows
    ]


def fetch(handler: Any, op: Any, max_rows: int = 1000, orientation: int = NEXT, **kw: Any) -> Any:
    resp = handler.FetchResults(
        ttypes.TFetchResultsReq(operationHandle=op, orientation=orientation, maxRows=max_rows, **kw)
    )
    assert resp.status.statusCode == OK_STATUS, resp.status
    return resp


# -- sessions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("client_protocol", "server_protocol"),
    [
        (V.HIVE_CLI_SERVICE_PROTOCOL_V10, V.HIVE_CLI_SERVICE_PROTOCOL_V10),
        (V.HIVE_CLI_SERVICE_PROTOCOL_V8, V.HIVE_CLI_SERVICE_PROTOCOL_V8),
        (V.HIVE_CLI_SERVICE_PROTOCOL_V5, V.HIVE_CLI_SERVICE_PROTOCOL_V5),
    ],
)
def test_protocol_is_negotiated_down_and_recorded_on_the_session(
    handler: Any, service: FakeGatewayService, client_protocol: int, server_protocol: int
) -> None:
    resp = open_session(handler, client_protocol)
    assert resp.serverProtocolVersion == server_protocol
    [opened] = service.called("open_session")
    name = ttypes.TProtocolVersion._VALUES_TO_NAMES[server_protocol]
    assert opened.args[0].endpoint_version == EndpointVersion("hiveserver2", name)


def test_open_session_configuration_keys(handler: Any, service: FakeGatewayService) -> None:
    service.results["USE `my db`"] = OK
    open_session(
        handler,
        **{
            "use:database": "my db",
            "set:hiveconf:spark.sql.shuffle.partitions": "3",
            "set:hivevar:my.var": "x",
            "plain.key": "y",
        },
    )
    [opened] = service.called("open_session")
    environment = opened.args[0]
    assert environment.user == "tester" and environment.session_name == "hiveserver2:tester"
    assert dict(environment.config) == {
        **SESSION_DEFAULTS,
        "spark.sql.shuffle.partitions": "3",
        "my.var": "x",
        "plain.key": "y",
    }
    [configured] = service.called("configure_session")
    assert configured.args[1] == "USE `my db`"


def test_a_failing_use_database_closes_the_new_session(
    handler: Any, service: FakeGatewayService
) -> None:
    service.results["USE `nope`"] = Canned(refused=ExecutionError("Database 'nope' not found"))
    resp = handler.OpenSession(
        ttypes.TOpenSessionReq(
            client_protocol=V.HIVE_CLI_SERVICE_PROTOCOL_V10,
            configuration={"use:database": "nope"},
        )
    )
    assert resp.status.statusCode == ERROR_STATUS
    assert resp.status.errorMessage == "Database 'nope' not found"
    assert service.sessions == {}


def test_the_connections_user_wins_over_the_requests(service: FakeGatewayService) -> None:
    handler = hiveserver2_handler(service, user="alice")
    open_session(handler)
    assert service.called("open_session")[0].args[0].user == "alice"


def test_close_session_and_calls_on_a_closed_one(
    handler: Any, service: FakeGatewayService, session: Any
) -> None:
    resp = handler.CloseSession(ttypes.TCloseSessionReq(sessionHandle=session))
    assert resp.status.statusCode == OK_STATUS and service.sessions == {}
    resp = handler.ExecuteStatement(
        ttypes.TExecuteStatementReq(sessionHandle=session, statement="SELECT 1")
    )
    assert resp.status.statusCode == ERROR_STATUS
    assert "does not exist" in resp.status.errorMessage and resp.status.sqlState == "HY010"


def test_connection_end_closes_the_sessions_it_opened(
    handler: Any, service: FakeGatewayService
) -> None:
    open_session(handler)
    open_session(handler)
    assert len(service.sessions) == 2
    handler.connection_closed()
    assert service.sessions == {}


def test_get_info(handler: Any, session: Any) -> None:
    kind = ttypes.TGetInfoType

    def info(info_type: int) -> Any:
        return handler.GetInfo(ttypes.TGetInfoReq(sessionHandle=session, infoType=info_type))

    assert info(kind.CLI_DBMS_VER).infoValue.stringValue == ENGINE_VERSION
    assert info(kind.CLI_DBMS_NAME).infoValue.stringValue == "Spark SQL"
    assert info(kind.CLI_SERVER_NAME).infoValue.stringValue == "sparkgate"
    assert info(kind.CLI_MAX_TABLE_NAME_LEN).infoValue.lenValue == 128
    unknown = info(kind.CLI_ACCESSIBLE_TABLES)
    assert unknown.status.statusCode == ERROR_STATUS and unknown.status.sqlState == "HY096"


# -- statements ------------------------------------------------------------------------


def test_sync_execute_waits_for_the_result_and_passes_overlay_and_timeout(
    handler: Any, service: FakeGatewayService, session: Any
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS)
    execute(
        handler, session, "SELECT rows", queryTimeout=30, confOverlay={"table.dml-sync": "false"}
    )
    [call] = service.called("execute_statement")
    assert call.kwargs == {"timeout": 30.0, "config": {"table.dml-sync": "false"}}
    [waited] = service.called("get_operation_result_schema")
    assert waited.args[2] is None  # no limit: a sync call returns when results are ready


def test_async_execute_returns_at_once(
    handler: Any, service: FakeGatewayService, session: Any
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS, not_ready=3)
    op = execute(handler, session, "SELECT rows", runAsync=True)
    assert not service.called("get_operation_result_schema")
    assert service.called("execute_statement")[0].kwargs == {"timeout": None, "config": None}
    resp = handler.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=op))
    assert resp.operationState == STATE.RUNNING_STATE and resp.hasResultSet


def test_sync_failure_is_an_error_status_and_the_operation_is_closed(
    handler: Any, service: FakeGatewayService, session: Any
) -> None:
    error = ExecutionError("Division by zero", causes=("ArithmeticException: / by zero",))
    error.sql_state = "22012"
    service.results["SELECT 1/0"] = Canned.failing(error)
    resp = handler.ExecuteStatement(
        ttypes.TExecuteStatementReq(sessionHandle=session, statement="SELECT 1/0")
    )
    assert resp.status.statusCode == ERROR_STATUS
    assert (resp.status.errorMessage, resp.status.sqlState) == ("Division by zero", "22012")
    assert service.open_operations == []


def test_a_refused_statement_is_an_error_status_with_its_sql_state(
    handler: Any, service: FakeGatewayService, session: Any
) -> None:
    service.results["SELEC 1"] = Canned(refused=SqlParseError("Syntax error at line 1"))
    resp = handler.ExecuteStatement(
        ttypes.TExecuteStatementReq(sessionHandle=session, statement="SELEC 1")
    )
    assert resp.status.statusCode == ERROR_STATUS
    assert (resp.status.errorMessage, resp.status.sqlState) == ("Syntax error at line 1", "42000")


@pytest.mark.parametrize(
    ("canned", "state", "message", "sql_state"),
    [
        (Canned.query(SCHEMA, ROWS), STATE.FINISHED_STATE, None, None),
        (Canned(ends=OperationStatus.CANCELED), STATE.CANCELED_STATE, None, None),
        (
            Canned.failing(ExecutionError("boom", causes=("java.lang.Error: boom",))),
            STATE.ERROR_STATE,
            "boom",
            None,
        ),
        # impyla and old Hive JDBC do not know TIMEDOUT_STATE.
        (Canned(ends=OperationStatus.TIMEOUT), STATE.ERROR_STATE, "Query timed out", "HYT00"),
    ],
)
def test_operation_status_states_and_errors(
    handler: Any,
    service: FakeGatewayService,
    session: Any,
    canned: Canned,
    state: int,
    message: str | None,
    sql_state: str | None,
) -> None:
    service.results["statement"] = canned
    op = execute(handler, session, "statement", runAsync=True)
    resp = handler.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=op))
    assert resp.status.statusCode == OK_STATUS
    assert resp.operationState == state
    if message is None:
        assert resp.errorMessage is None
    else:
        assert resp.errorMessage.startswith(message) and resp.sqlState == sql_state


def test_progress_update_has_hives_nine_columns(
    handler: Any, service: FakeGatewayService, session: Any
) -> None:
    progress = OperationProgress(2, 1, 4, 3, 40, 30, 2, 1.5)
    service.results["SELECT slow"] = Canned.query(SCHEMA, ROWS, not_ready=3, progress=progress)
    op = execute(handler, session, "SELECT slow", runAsync=True)
    resp = handler.GetOperationStatus(
        ttypes.TGetOperationStatusReq(operationHandle=op, getProgressUpdate=True)
    )
    update = resp.progressUpdateResponse
    assert len(update.headerNames) == 9
    assert update.rows == [["Stages: 3/4", "0", "RUNNING", "40", "30", "2", "8", "0", ""]]
    assert update.progressedPercentage == 0.75
    assert update.status == ttypes.TJobExecutionStatus.IN_PROGRESS
    assert update.footerSummary == "Jobs: 1/2"
    # Epoch milliseconds of the start: beeline shows now - startTime as the elapsed time.
    assert abs(time.time() * 1000 - 1500 - update.startTime) < 60_000


def test_cancel_and_close(handler: Any, service: FakeGatewayService, session: Any) -> None:
    service.results["SELECT slow"] = Canned.query(SCHEMA, ROWS, not_ready=3)
    op = execute(handler, session, "SELECT slow", runAsync=True)
    assert (
        handler.CancelOperation(ttypes.TCancelOperationReq(operationHandle=op)).status.statusCode
        == OK_STATUS
    )
    resp = handler.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=op))
    assert resp.operationState == STATE.CANCELED_STATE
    assert (
        handler.CloseOperation(ttypes.TCloseOperationReq(operationHandle=op)).status.statusCode
        == OK_STATUS
    )
    assert service.open_operations == []
    resp = handler.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=op))
    assert resp.status.statusCode == ERROR_STATUS and "does not exist" in resp.status.errorMessage


# -- results -----------------------------------------------------------------------------


def test_result_set_metadata(handler: Any, service: FakeGatewayService, session: Any) -> None:
    schema = ResultSchema((Column("id", INT, "the key"), Column("name", STRING)))
    service.results["SELECT rows"] = Canned.query(schema, [])
    op = execute(handler, session, "SELECT rows")
    resp = handler.GetResultSetMetadata(ttypes.TGetResultSetMetadataReq(operationHandle=op))
    columns = resp.schema.columns
    assert [(c.columnName, c.comment, c.position) for c in columns] == [
        ("id", "the key", 1),
        ("name", "", 2),
    ]
    types = [c.typeDesc.types[0].primitiveEntry.type for c in columns]
    assert types == [ttypes.TTypeId.INT_TYPE, ttypes.TTypeId.STRING_TYPE]


@pytest.mark.parametrize(
    ("protocol", "columnar"),
    [(V.HIVE_CLI_SERVICE_PROTOCOL_V10, True), (V.HIVE_CLI_SERVICE_PROTOCOL_V5, False)],
)
def test_pages_rows_or_columns_by_protocol(
    handler: Any, service: FakeGatewayService, protocol: int, columnar: bool
) -> None:
    session = open_session(handler, protocol).sessionHandle
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS)
    op = execute(handler, session, "SELECT rows")
    first = fetch(handler, op, max_rows=2)
    assert (first.results.columns is not None) == columnar
    assert rows_of(first.results) == ROWS[:2] and first.hasMoreRows
    second = fetch(handler, op, max_rows=2)
    assert rows_of(second.results) == ROWS[2:]
    last = fetch(handler, op, max_rows=2)
    assert rows_of(last.results) == [] and not last.hasMoreRows
    assert [c.args[3] for c in service.called("fetch_results_by_orientation")][:2] == [2, 2]


def test_fetch_first_replays_when_the_client_starts_with_it(
    handler: Any, service: FakeGatewayService, session: Any
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS)
    op = execute(handler, session, "SELECT rows")
    assert rows_of(fetch(handler, op, orientation=FIRST).results) == ROWS
    assert rows_of(fetch(handler, op, orientation=FIRST).results) == ROWS


def test_fetch_first_after_fetch_next_is_refused_clearly(
    handler: Any, service: FakeGatewayService, session: Any
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS)
    op = execute(handler, session, "SELECT rows")
    fetch(handler, op, max_rows=1)
    resp = handler.FetchResults(
        ttypes.TFetchResultsReq(operationHandle=op, orientation=FIRST, maxRows=10)
    )
    assert resp.status.statusCode == ERROR_STATUS and resp.status.sqlState == "HY106"
    assert "FETCH_FIRST cannot restart this result" in resp.status.errorMessage


def test_unsupported_fetch_orientation(
    handler: Any, service: FakeGatewayService, session: Any
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS)
    op = execute(handler, session, "SELECT rows")
    resp = handler.FetchResults(
        ttypes.TFetchResultsReq(
            operationHandle=op, orientation=ttypes.TFetchOrientation.FETCH_PRIOR, maxRows=10
        )
    )
    assert resp.status.statusCode == ERROR_STATUS and resp.status.sqlState == "HY106"
    assert "FETCH_PRIOR is not supported" in resp.status.errorMessage


def test_operation_log_through_fetch_type_1(
    handler: Any, service: FakeGatewayService, session: Any
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS, log=("line one", "line two"))
    op = execute(handler, session, "SELECT rows")
    assert rows_of(fetch(handler, op, fetchType=1).results) == [("line one",), ("line two",)]
    resp = fetch(handler, op, fetchType=1)
    assert rows_of(resp.results) == [] and not resp.hasMoreRows
    again = fetch(handler, op, orientation=FIRST, fetchType=1)
    assert rows_of(again.results) == [("line one",), ("line two",)]


# -- metadata ------------------------------------------------------------------------------


def test_metadata_calls_read_the_catalog_api(
    handler: Any, service: FakeGatewayService, session: Any
) -> None:
    service.catalog["other"] = {"db1": []}
    service.add_table(
        CatalogTable(
            ObjectIdentifier("spark_catalog", "default", "t1"), TableKind.TABLE, (Column("a", INT),)
        )
    )
    service.add_table(
        CatalogTable(ObjectIdentifier("spark_catalog", "default", "v1"), TableKind.VIEW, ())
    )

    def rows(resp: Any) -> list[tuple[Any, ...]]:
        assert resp.status.statusCode == OK_STATUS, resp.status
        return rows_of(fetch(handler, resp.operationHandle).results)

    assert rows(handler.GetCatalogs(ttypes.TGetCatalogsReq(sessionHandle=session))) == [
        ("other",),
        ("spark_catalog",),
    ]
    schemas = rows(handler.GetSchemas(ttypes.TGetSchemasReq(sessionHandle=session)))
    assert sorted(schemas) == [("db1", "other"), ("default", "spark_catalog")]
    tables = rows(
        handler.GetTables(
            ttypes.TGetTablesReq(sessionHandle=session, schemaName="def%", tableTypes=["VIEW"])
        )
    )
    assert [t[:4] for t in tables] == [("spark_catalog", "default", "v1", "VIEW")]


def test_delegation_tokens_are_not_supported(handler: Any, session: Any) -> None:
    resp = handler.GetDelegationToken(
        ttypes.TGetDelegationTokenReq(sessionHandle=session, owner="a", renewer="b")
    )
    assert resp.status.statusCode == ERROR_STATUS and resp.status.sqlState == "HYC00"


# -- over a real loopback port ---------------------------------------------------------------


@pytest.fixture
def endpoint(service: FakeGatewayService) -> Iterator[HiveServer2Endpoint]:
    endpoint = HiveServer2Endpoint(service, HiveServer2Settings(port=0, fetch_timeout=0.0))
    endpoint.start()
    try:
        yield endpoint
    finally:
        endpoint.stop()


def test_a_thrift_client_on_a_loopback_port(
    endpoint: HiveServer2Endpoint, service: FakeGatewayService
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS)
    sock = TSocket.TSocket("127.0.0.1", endpoint.binary_port)
    sock.setTimeout(30_000)
    transport = TTransport.TBufferedTransport(sock)
    transport.open()
    try:
        client = TCLIService.Client(TBinaryProtocol(transport))
        session = open_session(client).sessionHandle
        op = execute(client, session, "SELECT rows")
        assert rows_of(fetch(client, op).results) == ROWS
        client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=op))
        client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=session))
    finally:
        transport.close()
    assert service.sessions == {} and service.open_operations == []
