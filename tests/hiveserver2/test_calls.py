"""Every TCLIService call, in process, over a real service on the shared Spark session.

A generated Thrift client (NOSASL, binary) speaks to the endpoint, so the
tests see exactly what is on the wire: states, status codes, column kinds,
null bitmaps and metadata column sets.
"""

from __future__ import annotations

import socket
import struct
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from TCLIService import ttypes
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TTransport

from sparkgate.api.errors import SessionNotFoundError
from sparkgate.api.handles import SessionHandle
from sparkgate.endpoints.hiveserver2 import metadata
from sparkgate.endpoints.hiveserver2.handles import parse_session
from tests.hiveserver2.conftest import RawClient, Running, running_endpoint, wait_for
from tests.service.conftest import make_service

V = ttypes.TProtocolVersion
OK = ttypes.TStatusCode.SUCCESS_STATUS
ERROR = ttypes.TStatusCode.ERROR_STATUS
STATE = ttypes.TOperationState
FIRST = ttypes.TFetchOrientation.FETCH_FIRST
NEXT = ttypes.TFetchOrientation.FETCH_NEXT


def open_session(
    client: RawClient, protocol: int = V.HIVE_CLI_SERVICE_PROTOCOL_V10, **conf: str
) -> Any:
    resp = client.OpenSession(
        ttypes.TOpenSessionReq(client_protocol=protocol, username="tester", configuration=conf)
    )
    assert resp.status.statusCode == OK, resp.status
    return resp


def execute(
    client: RawClient, session: Any, statement: str, run_async: bool = False, **kw: Any
) -> Any:
    resp = client.ExecuteStatement(
        ttypes.TExecuteStatementReq(
            sessionHandle=session, statement=statement, runAsync=run_async, **kw
        )
    )
    assert resp.status.statusCode == OK, resp.status
    return resp.operationHandle


def column_values(column: Any) -> list[Any]:
    kind = next(v for v in column.__dict__.values() if v is not None)
    nulls = kind.nulls or b""
    return [
        None if i // 8 < len(nulls) and nulls[i // 8] & (1 << (i % 8)) else value
        for i, value in enumerate(kind.values)
    ]


def fetch(
    client: RawClient, op: Any, max_rows: int = 1000, orientation: int = NEXT, fetch_type: int = 0
) -> tuple[list[tuple[Any, ...]], Any]:
    resp = client.FetchResults(
        ttypes.TFetchResultsReq(
            operationHandle=op, orientation=orientation, maxRows=max_rows, fetchType=fetch_type
        )
    )
    assert resp.status.statusCode == OK, resp.status
    results = resp.results
    if results.columns is not None:
        columns = [column_values(c) for c in results.columns]
        return list(zip(*columns, strict=True)), resp
    rows = [
        tuple(
            next((v.value for v in cell.__dict__.values() if v is not None), None)
            for cell in row.colVals
        )
        for row in results.rows
    ]
    return rows, resp


def fetch_all(client: RawClient, op: Any, max_rows: int = 1000) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    while True:
        page, _ = fetch(client, op, max_rows)
        if not page:
            return rows
        rows.extend(page)


def query(client: RawClient, session: Any, statement: str) -> list[tuple[Any, ...]]:
    op = execute(client, session, statement)
    try:
        return fetch_all(client, op)
    finally:
        client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=op))


def schema_of(client: RawClient, op: Any) -> list[tuple[str, str, dict[str, int]]]:
    resp = client.GetResultSetMetadata(ttypes.TGetResultSetMetadataReq(operationHandle=op))
    assert resp.status.statusCode == OK, resp.status
    out = []
    for col in resp.schema.columns:
        entry = col.typeDesc.types[0].primitiveEntry
        quals = entry.typeQualifiers.qualifiers if entry.typeQualifiers else {}
        out.append(
            (
                col.columnName,
                ttypes.TTypeId._VALUES_TO_NAMES[entry.type],
                {k: v.i32Value for k, v in quals.items()},
            )
        )
    return out


# -- sessions and protocol versions ------------------------------------------------


@pytest.mark.parametrize(
    ("client_protocol", "server_protocol", "columnar"),
    [
        (V.HIVE_CLI_SERVICE_PROTOCOL_V1, V.HIVE_CLI_SERVICE_PROTOCOL_V1, False),
        (V.HIVE_CLI_SERVICE_PROTOCOL_V5, V.HIVE_CLI_SERVICE_PROTOCOL_V5, False),
        (V.HIVE_CLI_SERVICE_PROTOCOL_V6, V.HIVE_CLI_SERVICE_PROTOCOL_V6, True),
        (V.HIVE_CLI_SERVICE_PROTOCOL_V10, V.HIVE_CLI_SERVICE_PROTOCOL_V10, True),
        (V.HIVE_CLI_SERVICE_PROTOCOL_V10 + 1, V.HIVE_CLI_SERVICE_PROTOCOL_V10, True),
    ],
)
def test_protocol_negotiated_down_and_row_format_follows(
    client: RawClient, client_protocol: int, server_protocol: int, columnar: bool
) -> None:
    resp = open_session(client, client_protocol)
    assert resp.serverProtocolVersion == server_protocol
    op = execute(client, resp.sessionHandle, "SELECT 1 AS a, CAST(NULL AS STRING) AS b, 'x' AS c")
    rows, raw = fetch(client, op)
    assert rows == [(1, None, "x")]
    assert (raw.results.columns is not None) == columnar
    client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=resp.sessionHandle))


def test_open_session_configuration_keys(client: RawClient) -> None:
    handle = open_session(client).sessionHandle
    try:
        assert query(client, handle, "CREATE DATABASE IF NOT EXISTS hs2_conf_db") == [("OK",)]
    finally:
        client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=handle))
    conf = {
        "use:database": "hs2_conf_db",
        "set:hiveconf:spark.sql.shuffle.partitions": "3",
        "set:hivevar:spark.sql.ansi.enabled": "false",
    }
    handle = open_session(client, **conf).sessionHandle
    try:
        assert query(client, handle, "SELECT current_database()") == [("hs2_conf_db",)]
        assert query(client, handle, "SET spark.sql.shuffle.partitions")[0][-1] == "3"
        assert query(client, handle, "SET spark.sql.ansi.enabled")[0][-1] == "false"
    finally:
        client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=handle))


def test_sessions_run_dml_synchronously_in_batch_whatever_the_gateway_default(
    spark: Any,
) -> None:
    # A gateway whose REST users get Flink's asynchronous DML and streaming mode.
    service = make_service(
        spark, **{"table.dml-sync": "false", "execution.runtime-mode": "streaming"}
    )
    try:
        with running_endpoint(service, fetch_timeout=30.0) as running:
            raw = RawClient(running.port)
            try:
                handle = open_session(raw).sessionHandle
                assert query(raw, handle, "SET table.dml-sync") == [("table.dml-sync", "true")]
                assert query(raw, handle, "SET execution.runtime-mode") == [
                    ("execution.runtime-mode", "batch")
                ]
                # The connection's own configuration still wins.
                mine = open_session(raw, **{"set:hiveconf:table.dml-sync": "false"})
                assert query(raw, mine.sessionHandle, "SET table.dml-sync") == [
                    ("table.dml-sync", "false")
                ]
            finally:
                raw.close()
    finally:
        service.stop()


def test_open_session_with_missing_database_fails_and_leaks_nothing(
    client: RawClient, hs2: Running
) -> None:
    before = hs2.service.session_count
    resp = client.OpenSession(
        ttypes.TOpenSessionReq(
            client_protocol=V.HIVE_CLI_SERVICE_PROTOCOL_V10,
            configuration={"use:database": "no_such_db_hs2"},
        )
    )
    assert resp.status.statusCode == ERROR
    assert "no_such_db_hs2" in resp.status.errorMessage
    # Not "==": another test's session may close meanwhile; a leak would add one.
    assert hs2.service.session_count <= before


def test_closed_session_is_an_error(client: RawClient) -> None:
    handle = open_session(client).sessionHandle
    client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=handle))
    resp = client.ExecuteStatement(
        ttypes.TExecuteStatementReq(sessionHandle=handle, statement="SELECT 1")
    )
    assert resp.status.statusCode == ERROR and resp.status.errorMessage


@pytest.mark.parametrize(
    ("info_type", "field", "expected"),
    [
        (ttypes.TGetInfoType.CLI_DBMS_NAME, "stringValue", "Spark SQL"),
        (ttypes.TGetInfoType.CLI_SERVER_NAME, "stringValue", "sparkgate"),
        (ttypes.TGetInfoType.CLI_MAX_TABLE_NAME_LEN, "lenValue", 128),
    ],
)
def test_get_info(
    client: RawClient, session: Any, info_type: int, field: str, expected: Any
) -> None:
    resp = client.GetInfo(ttypes.TGetInfoReq(sessionHandle=session, infoType=info_type))
    assert resp.status.statusCode == OK
    assert getattr(resp.infoValue, field) == expected


def test_get_info_dbms_version_is_spark(client: RawClient, session: Any, hs2: Running) -> None:
    resp = client.GetInfo(
        ttypes.TGetInfoReq(sessionHandle=session, infoType=ttypes.TGetInfoType.CLI_DBMS_VER)
    )
    assert resp.infoValue.stringValue == hs2.service.spark.version


# -- statements and results --------------------------------------------------------


def test_types_and_qualifiers(client: RawClient, session: Any) -> None:
    op = execute(
        client,
        session,
        "SELECT CAST(1 AS TINYINT) t, CAST(2 AS SMALLINT) s, 3 i, 4L l, CAST(1.5 AS FLOAT) f, "
        "2.5D d, CAST('1.50' AS DECIMAL(9,2)) dec, 'x' str, CAST('ab' AS VARCHAR(5)) vc, "
        "CAST('ab' AS CHAR(3)) ch, true b, X'CAFE' bin, DATE'2024-02-29' dt, "
        "TIMESTAMP_NTZ'2024-01-02 03:04:05.5' ts, array(1, 2) arr, map('k', 1) m, "
        "named_struct('a', 1, 'b', 'y') st, NULL n",
    )
    schema = schema_of(client, op)
    assert [(name, kind) for name, kind, _ in schema] == [
        ("t", "TINYINT_TYPE"),
        ("s", "SMALLINT_TYPE"),
        ("i", "INT_TYPE"),
        ("l", "BIGINT_TYPE"),
        ("f", "FLOAT_TYPE"),
        ("d", "DOUBLE_TYPE"),
        ("dec", "DECIMAL_TYPE"),
        ("str", "STRING_TYPE"),
        ("vc", "STRING_TYPE"),
        ("ch", "STRING_TYPE"),
        ("b", "BOOLEAN_TYPE"),
        ("bin", "BINARY_TYPE"),
        ("dt", "DATE_TYPE"),
        ("ts", "TIMESTAMP_TYPE"),
        ("arr", "ARRAY_TYPE"),
        ("m", "MAP_TYPE"),
        ("st", "STRUCT_TYPE"),
        ("n", "NULL_TYPE"),
    ]
    assert schema[6][2] == {"precision": 9, "scale": 2}
    rows = fetch_all(client, op)
    assert rows == [
        (
            1,
            2,
            3,
            4,
            1.5,
            2.5,
            "1.50",
            "x",
            "ab",
            "ab",
            True,
            b"\xca\xfe",
            "2024-02-29",
            "2024-01-02 03:04:05.5",
            "[1,2]",
            '{"k":1}',
            '{"a":1,"b":"y"}',
            None,
        )
    ]


def test_a_column_without_a_name_keeps_sparks_name(client: RawClient, session: Any) -> None:
    # Flink-protocol sessions say EXPR$0 (tests/rest); HiveServer2 clients see Spark's names.
    op = execute(client, session, "SELECT 1 + 1, count(*) FROM (VALUES (1)) AS t(a)")
    assert [name for name, _, _ in schema_of(client, op)] == ["(1 + 1)", "count(1)"]


def test_varchar_and_char_table_columns_keep_their_length(client: RawClient, session: Any) -> None:
    query(client, session, "DROP TABLE IF EXISTS hs2_lengths")
    query(client, session, "CREATE TABLE hs2_lengths (v VARCHAR(7), c CHAR(4)) USING parquet")
    op = execute(client, session, "SELECT * FROM hs2_lengths")
    assert schema_of(client, op) == [
        ("v", "VARCHAR_TYPE", {"characterMaximumLength": 7}),
        ("c", "CHAR_TYPE", {"characterMaximumLength": 4}),
    ]
    query(client, session, "DROP TABLE hs2_lengths")


def test_nulls_in_every_column_kind(client: RawClient, session: Any) -> None:
    rows = query(
        client,
        session,
        "SELECT IF(id % 3 = 0, NULL, id) a, IF(id % 2 = 0, NULL, CAST(id AS STRING)) b, "
        "IF(id = 4, NULL, id > 2) c, IF(id = 1, NULL, id * 0.5D) d FROM range(10)",
    )
    assert rows == [
        (
            None if i % 3 == 0 else i,
            None if i % 2 == 0 else str(i),
            None if i == 4 else i > 2,
            None if i == 1 else i * 0.5,
        )
        for i in range(10)
    ]


def test_large_result_in_pages(client: RawClient, session: Any) -> None:
    op = execute(client, session, "SELECT id, CAST(id AS STRING) s FROM range(25000)")
    first, resp = fetch(client, op, max_rows=10_000)
    assert len(first) == 10_000 and resp.hasMoreRows
    assert resp.results.startRowOffset == 0
    second, resp = fetch(client, op, max_rows=10_000)
    assert resp.results.startRowOffset == 10_000
    rest = fetch_all(client, op, 10_000)
    rows = first + second + rest
    assert rows == [(i, str(i)) for i in range(25000)]
    last, resp = fetch(client, op)
    assert last == [] and not resp.hasMoreRows


def test_failing_statement_sync_reports_error_status(client: RawClient, session: Any) -> None:
    resp = client.ExecuteStatement(
        ttypes.TExecuteStatementReq(sessionHandle=session, statement="SELECT * FROM hs2_missing")
    )
    assert resp.status.statusCode == ERROR
    assert "TABLE_OR_VIEW_NOT_FOUND" in resp.status.errorMessage
    assert resp.status.sqlState == "42P01"


def test_failing_statement_async_reports_error_state(client: RawClient, session: Any) -> None:
    op = execute(client, session, "SELECT * FROM hs2_missing", run_async=True)
    assert wait_for(lambda: status(client, op).operationState == STATE.ERROR_STATE)
    resp = status(client, op)
    assert "TABLE_OR_VIEW_NOT_FOUND" in resp.errorMessage and resp.sqlState == "42P01"


def status(client: RawClient, op: Any, progress: bool = False) -> Any:
    resp = client.GetOperationStatus(
        ttypes.TGetOperationStatusReq(operationHandle=op, getProgressUpdate=progress)
    )
    assert resp.status.statusCode == OK, resp.status
    return resp


SLOW = "SELECT count(*) FROM range(100000000000) a"


def test_async_with_progress_then_cancel_stops_the_job(
    client: RawClient, session: Any, hs2: Running
) -> None:
    op = execute(client, session, SLOW, run_async=True)
    tracker = hs2.service.spark.sparkContext.statusTracker()
    assert wait_for(lambda: bool(tracker.getActiveJobsIds()))
    assert status(client, op).operationState in (STATE.RUNNING_STATE, STATE.FINISHED_STATE)
    progress = status(client, op, progress=True).progressUpdateResponse
    assert len(progress.headerNames) == len(progress.rows[0]) == 9  # beeline needs nine
    assert progress.status == ttypes.TJobExecutionStatus.IN_PROGRESS
    resp = client.CancelOperation(ttypes.TCancelOperationReq(operationHandle=op))
    assert resp.status.statusCode == OK
    assert status(client, op).operationState == STATE.CANCELED_STATE
    assert wait_for(lambda: not tracker.getActiveJobsIds(), timeout=60)
    assert (
        client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=op)).status.statusCode == OK
    )


def test_query_timeout_is_an_error_state_with_a_clear_message(
    client: RawClient, session: Any
) -> None:
    op = execute(client, session, SLOW, run_async=True, queryTimeout=2)
    assert wait_for(lambda: status(client, op).operationState == STATE.ERROR_STATE, timeout=60)
    resp = status(client, op)
    assert "timed out" in resp.errorMessage and resp.sqlState == "HYT00"


def test_operation_log_through_fetch_type_1(client: RawClient, session: Any) -> None:
    op = execute(client, session, "SELECT 1")
    fetch_all(client, op)
    lines, resp = fetch(client, op, fetch_type=1)
    assert resp.results.columns is not None
    assert lines and any("SELECT 1" in str(line[0]) or line[0] for line in lines)
    again, _ = fetch(client, op, fetch_type=1, orientation=FIRST)
    assert again == lines


def test_fetch_first_replays_when_the_client_starts_with_it(
    client: RawClient, session: Any
) -> None:
    op = execute(client, session, "SELECT id FROM range(30)")
    first, _ = fetch(client, op, 10, FIRST)
    rest = fetch_all(client, op, 10)
    assert first + rest == [(i,) for i in range(30)]
    again, resp = fetch(client, op, 25, FIRST)
    assert again == [(i,) for i in range(25)]
    assert resp.results.startRowOffset == 0


def test_fetch_first_after_fetch_next_is_refused_clearly(client: RawClient, session: Any) -> None:
    op = execute(client, session, "SELECT id FROM range(30)")
    fetch(client, op, 10)
    resp = client.FetchResults(
        ttypes.TFetchResultsReq(operationHandle=op, orientation=FIRST, maxRows=10)
    )
    assert resp.status.statusCode == ERROR
    assert "FETCH_FIRST cannot restart" in resp.status.errorMessage


def test_unsupported_fetch_orientation(client: RawClient, session: Any) -> None:
    op = execute(client, session, "SELECT 1")
    resp = client.FetchResults(
        ttypes.TFetchResultsReq(
            operationHandle=op, orientation=ttypes.TFetchOrientation.FETCH_PRIOR, maxRows=10
        )
    )
    assert resp.status.statusCode == ERROR and "FETCH_PRIOR" in resp.status.errorMessage


# -- metadata -------------------------------------------------------------------


@pytest.fixture(scope="module")
def meta_tables(hs2: Running) -> Iterator[None]:
    raw = RawClient(hs2.port)
    handle = open_session(raw).sessionHandle
    for statement in (
        "CREATE DATABASE IF NOT EXISTS hs2_meta",
        "CREATE TABLE IF NOT EXISTS hs2_meta.orders (id BIGINT, amount DECIMAL(10,2) "
        "COMMENT 'money', note STRING) USING parquet",
        "CREATE OR REPLACE VIEW hs2_meta.big_orders AS SELECT * FROM hs2_meta.orders",
    ):
        query(raw, handle, statement)
    yield
    query(raw, handle, "DROP DATABASE hs2_meta CASCADE")
    raw.CloseSession(ttypes.TCloseSessionReq(sessionHandle=handle))
    raw.close()


def metadata_rows(client: RawClient, resp: Any) -> tuple[list[str], list[tuple[Any, ...]]]:
    assert resp.status.statusCode == OK, resp.status
    op = resp.operationHandle
    names = [name for name, _, _ in schema_of(client, op)]
    return names, fetch_all(client, op)


def names_of(schema: Any) -> list[str]:
    return list(schema.names)


@pytest.mark.usefixtures("meta_tables")
class TestMetadata:
    def test_catalogs(self, client: RawClient, session: Any) -> None:
        names, rows = metadata_rows(client, client.GetCatalogs(ttypes.TGetCatalogsReq(session)))
        assert names == ["TABLE_CAT"] and ("spark_catalog",) in rows

    def test_schemas_with_pattern(self, client: RawClient, session: Any) -> None:
        names, rows = metadata_rows(
            client, client.GetSchemas(ttypes.TGetSchemasReq(session, None, "hs2\\_me%"))
        )
        assert names == names_of(metadata.SCHEMAS_SCHEMA) == ["TABLE_SCHEM", "TABLE_CATALOG"]
        assert rows == [("hs2_meta", "spark_catalog")]

    def test_table_types(self, client: RawClient, session: Any) -> None:
        names, rows = metadata_rows(client, client.GetTableTypes(ttypes.TGetTableTypesReq(session)))
        assert names == ["TABLE_TYPE"] and rows == [("TABLE",), ("VIEW",)]

    @pytest.mark.parametrize(
        ("types", "expected"),
        [
            (None, [("orders", "TABLE"), ("big_orders", "VIEW")]),
            (["VIEW"], [("big_orders", "VIEW")]),
            (["TABLE"], [("orders", "TABLE")]),
        ],
    )
    def test_tables(
        self, client: RawClient, session: Any, types: list[str] | None, expected: list[Any]
    ) -> None:
        names, rows = metadata_rows(
            client, client.GetTables(ttypes.TGetTablesReq(session, None, "hs2_meta", "%", types))
        )
        assert names == [
            "TABLE_CAT",
            "TABLE_SCHEM",
            "TABLE_NAME",
            "TABLE_TYPE",
            "REMARKS",
            "TYPE_CAT",
            "TYPE_SCHEM",
            "TYPE_NAME",
            "SELF_REFERENCING_COL_NAME",
            "REF_GENERATION",
        ]
        assert [(r[2], r[3]) for r in rows] == expected
        assert all(r[:2] == ("spark_catalog", "hs2_meta") for r in rows)

    def test_columns(self, client: RawClient, session: Any) -> None:
        names, rows = metadata_rows(
            client,
            client.GetColumns(ttypes.TGetColumnsReq(session, None, "hs2_meta", "orders", "%")),
        )
        assert names == names_of(metadata.COLUMNS_SCHEMA) and len(names) == 23
        picked = [(r[3], r[4], r[5], r[6], r[8], r[10], r[11], r[16], r[17]) for r in rows]
        assert picked == [
            ("id", -5, "BIGINT", 19, 0, 1, "", 1, "YES"),
            ("amount", 3, "DECIMAL(10,2)", 10, 2, 1, "money", 2, "YES"),
            ("note", 12, "STRING", 2147483647, None, 1, "", 3, "YES"),
        ]

    def test_columns_pattern(self, client: RawClient, session: Any) -> None:
        _, rows = metadata_rows(
            client,
            client.GetColumns(ttypes.TGetColumnsReq(session, None, "hs2_meta", "%orders", "AM%")),
        )
        assert sorted((r[2], r[3]) for r in rows) == [
            ("big_orders", "amount"),
            ("orders", "amount"),
        ]

    def test_functions(self, client: RawClient, session: Any) -> None:
        names, rows = metadata_rows(
            client, client.GetFunctions(ttypes.TGetFunctionsReq(session, None, None, "upp%"))
        )
        assert names == [
            "FUNCTION_CAT",
            "FUNCTION_SCHEM",
            "FUNCTION_NAME",
            "REMARKS",
            "FUNCTION_TYPE",
            "SPECIFIC_NAME",
        ]
        assert "upper" in [r[2] for r in rows]

    def test_type_info(self, client: RawClient, session: Any) -> None:
        names, rows = metadata_rows(client, client.GetTypeInfo(ttypes.TGetTypeInfoReq(session)))
        assert names[:3] == ["TYPE_NAME", "DATA_TYPE", "PRECISION"] and len(names) == 18
        assert ("DECIMAL", 3) in [(r[0], r[1]) for r in rows]

    def test_keys_are_empty_with_hive_columns(self, client: RawClient, session: Any) -> None:
        names, rows = metadata_rows(
            client,
            client.GetPrimaryKeys(ttypes.TGetPrimaryKeysReq(session, None, "hs2_meta", "orders")),
        )
        assert names == [
            "TABLE_CAT",
            "TABLE_SCHEM",
            "TABLE_NAME",
            "COLUMN_NAME",
            "KEQ_SEQ",
            "PK_NAME",
        ]
        assert rows == []
        names, rows = metadata_rows(
            client,
            client.GetCrossReference(
                ttypes.TGetCrossReferenceReq(session, None, "hs2_meta", "orders")
            ),
        )
        assert len(names) == 14 and names[0] == "PKTABLE_CAT" and rows == []

    def test_metadata_result_can_be_fetched_again_from_the_start(
        self, client: RawClient, session: Any
    ) -> None:
        resp = client.GetTypeInfo(ttypes.TGetTypeInfoReq(session))
        op = resp.operationHandle
        all_rows = fetch_all(client, op, 7)
        again, _ = fetch(client, op, 1000, FIRST)
        assert again == all_rows and len(all_rows) > 7


@pytest.mark.parametrize(
    "call",
    ["GetDelegationToken", "CancelDelegationToken", "RenewDelegationToken"],
)
def test_delegation_tokens_are_not_supported(client: RawClient, session: Any, call: str) -> None:
    request = {
        "GetDelegationToken": ttypes.TGetDelegationTokenReq(session, "me", "renewer"),
        "CancelDelegationToken": ttypes.TCancelDelegationTokenReq(session, "token"),
        "RenewDelegationToken": ttypes.TRenewDelegationTokenReq(session, "token"),
    }[call]
    resp = getattr(client, call)(request)
    assert resp.status.statusCode == ERROR
    assert "Delegation tokens are not supported" in resp.status.errorMessage


# -- the wire ------------------------------------------------------------------------


def _raw_call(sock: socket.socket, name: str, args: bytes) -> bytes:
    """Send one unframed binary-protocol call; return the reply bytes."""
    buf = TTransport.TMemoryBuffer()
    proto = TBinaryProtocol(buf)
    proto.writeMessageBegin(name, TMessageType.CALL, 7)
    buf.write(args)
    proto.writeMessageEnd()
    sock.sendall(buf.getvalue())
    time.sleep(0.3)
    return sock.recv(65536)


def test_unknown_methods_with_binary_handles_keep_the_connection(
    client: RawClient, hs2: Running
) -> None:
    session = open_session(client).sessionHandle
    # impyla's GetLog/CloseImpalaOperation args: a struct holding a handle with binary GUIDs.
    args_buf = TTransport.TMemoryBuffer()
    args_proto = TBinaryProtocol(args_buf)
    args_proto.writeStructBegin("args")
    args_proto.writeFieldBegin("req", TType.STRUCT, 1)
    ttypes.TOperationHandle(
        operationId=ttypes.THandleIdentifier(guid=b"\xff\xfe" * 8, secret=b"\x80" * 16),
        operationType=0,
        hasResultSet=True,
    ).write(args_proto)
    args_proto.writeFieldEnd()
    args_proto.writeFieldStop()
    args_proto.writeStructEnd()
    with socket.create_connection(("127.0.0.1", hs2.port)) as sock:
        for name in ("GetLog", "CloseImpalaOperation"):
            reply = TBinaryProtocol(
                TTransport.TMemoryBuffer(_raw_call(sock, name, args_buf.getvalue()))
            )
            got_name, kind, seqid = reply.readMessageBegin()
            assert (got_name, kind, seqid) == (name, TMessageType.EXCEPTION, 7)
            error = TApplicationException()
            error.read(reply)
            assert error.type == TApplicationException.UNKNOWN_METHOD
    # The same client connection still works after an unknown call through it.
    with pytest.raises(TApplicationException):
        client.GetLog(
            ttypes.TGetLogReq(
                ttypes.TOperationHandle(
                    ttypes.THandleIdentifier(b"\x01" * 16, b"\x02" * 16), 0, True
                )
            )
        )
    assert query(client, session, "SELECT 2") == [(2,)]


def test_framed_nosasl_transport(hs2: Running) -> None:
    raw = RawClient(hs2.port, framed=True)
    try:
        handle = open_session(raw).sessionHandle
        assert query(raw, handle, "SELECT 'framed'") == [("framed",)]
    finally:
        raw.close()


def closed_by_peer(sock: socket.socket) -> bool:
    sock.settimeout(10)
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True


def test_garbage_first_byte_is_dropped(hs2: Running) -> None:
    with socket.create_connection(("127.0.0.1", hs2.port)) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\n\r\n")
        assert closed_by_peer(sock)


def test_oversized_frame_closes_the_connection(hs2_service: Any) -> None:
    from tests.hiveserver2.conftest import running_endpoint

    with (
        running_endpoint(hs2_service, max_message_size=1024) as small,
        socket.create_connection(("127.0.0.1", small.port)) as sock,
    ):
        sock.sendall(struct.pack(">i", 10_000) + b"\x80\x01")
        assert closed_by_peer(sock)


def _unframed_call_with_a_huge_string() -> bytes:
    """An unframed (NOSASL) OpenSession whose first field claims a 2 GB string."""
    name = b"OpenSession"
    header = struct.pack(">I", 0x80010001) + struct.pack(">i", len(name)) + name
    header += struct.pack(">i", 1)  # sequence id
    return (
        header
        + struct.pack(">bh", TType.STRUCT, 1)
        + struct.pack(">bh", TType.STRING, 1)
        + (struct.pack(">i", 0x7FFFFFF0))
    )


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        ("framed, 2 GB length", struct.pack(">i", 0x7FFFFFFF) + b"\x80\x01"),
        ("framed, negative length", struct.pack(">i", -1) + b"\x80\x01"),
        ("SASL START, 4 GB length", struct.pack(">BI", 1, 0xFFFFFFFF) + b"PLAIN"),
        ("unframed, 2 GB string", _unframed_call_with_a_huge_string()),
    ],
)
def test_a_huge_length_prefix_allocates_nothing_and_harms_no_one(
    hs2: Running, kind: str, payload: bytes
) -> None:
    import psutil

    process = psutil.Process()
    before = process.memory_info().rss
    with socket.create_connection(("127.0.0.1", hs2.port)) as sock:
        sock.sendall(payload)
        assert closed_by_peer(sock), kind
    # Far below what the prefix claims: nothing of that size was allocated.
    assert process.memory_info().rss - before < 256 * 1024 * 1024, kind
    raw = RawClient(hs2.port)  # the endpoint goes on serving
    try:
        assert open_session(raw).status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS
    finally:
        raw.close()


def is_open(service: Any, session: SessionHandle) -> bool:
    try:
        service.get_session_config(session)
    except SessionNotFoundError:
        return False
    return True


def test_disconnect_mid_fetch_closes_session_and_stops_work(hs2: Running) -> None:
    raw = RawClient(hs2.port)
    handle = open_session(raw).sessionHandle
    op = execute(raw, handle, "SELECT id FROM range(5000000)")
    page, _ = fetch(raw, op, 100)
    assert len(page) == 100
    # By its handle, not by a count: other tests' sessions may close meanwhile.
    session = parse_session(handle)
    assert is_open(hs2.service, session)
    raw.close()  # no CloseOperation, no CloseSession
    assert wait_for(lambda: not is_open(hs2.service, session), timeout=30)
    tracker = hs2.service.spark.sparkContext.statusTracker()
    assert wait_for(lambda: not tracker.getActiveJobsIds(), timeout=60)


def test_catalogs_made_with_create_catalog_are_browsable(client: RawClient, session: Any) -> None:
    """GetCatalogs / GetSchemas / GetTables / GetColumns see a CREATE CATALOG catalog."""
    name = f"hs2_cat_{uuid.uuid4().hex[:8]}"
    fetch_all(
        client,
        execute(client, session, f"CREATE CATALOG {name} WITH ('type' = 'generic_in_memory')"),
    )
    try:
        fetch_all(
            client,
            execute(
                client, session, f"CREATE TABLE {name}.`default`.pairs AS SELECT 1 AS a, 'x' AS b"
            ),
        )
        _, catalogs = metadata_rows(client, client.GetCatalogs(ttypes.TGetCatalogsReq(session)))
        assert (name,) in catalogs
        _, schemas = metadata_rows(
            client, client.GetSchemas(ttypes.TGetSchemasReq(session, name, "%"))
        )
        assert ("default", name) in schemas
        # Connector tables and views the gateway keeps there are listed too.
        for ddl in (
            f"CREATE TABLE {name}.`default`.gen (n BIGINT, s STRING) WITH ('connector' = "
            "'datagen', 'number-of-rows' = '1')",
            f"CREATE VIEW {name}.`default`.longs AS SELECT n FROM {name}.`default`.gen",
        ):
            fetch_all(client, execute(client, session, ddl))
        _, tables = metadata_rows(
            client, client.GetTables(ttypes.TGetTablesReq(session, name, "default", "%", None))
        )
        assert sorted((r[0], r[1], r[2], r[3]) for r in tables) == [
            (name, "default", "gen", "TABLE"),
            (name, "default", "longs", "VIEW"),
            (name, "default", "pairs", "TABLE"),
        ]
        for table, expected in (
            ("pairs", [("a", "INT"), ("b", "STRING")]),
            ("gen", [("n", "BIGINT"), ("s", "STRING")]),
            ("longs", [("n", "BIGINT")]),
        ):
            _, columns = metadata_rows(
                client,
                client.GetColumns(ttypes.TGetColumnsReq(session, name, "default", table, "%")),
            )
            assert [(r[3], r[5]) for r in columns] == expected
    finally:
        fetch_all(client, execute(client, session, f"DROP CATALOG {name}"))


def test_fetch_first_after_fetch_next_reads_a_kept_result_again(spark: Any) -> None:
    service = make_service(spark, **{"sql-gateway.result.spool": "true"})
    try:
        with running_endpoint(service, fetch_timeout=30.0) as running:
            raw = RawClient(running.port)
            try:
                handle = open_session(raw).sessionHandle
                op = execute(raw, handle, "SELECT id FROM range(30)")
                head, _ = fetch(raw, op, 10)
                again, resp = fetch(raw, op, 4, FIRST)
                assert again == [(i,) for i in range(4)] and head == [(i,) for i in range(10)]
                assert resp.results.startRowOffset == 0
                # On from row 4: the rows read before, then the rest of the result.
                assert fetch_all(raw, op, 7) == [(i,) for i in range(4, 30)]
            finally:
                raw.close()
    finally:
        service.stop()
