"""Statements through the service: results, errors, configure-session, logs."""

from __future__ import annotations

import datetime as dt
import decimal
import re

import pyarrow as pa
import pytest

from sparkgate.api.errors import (
    ExecutionError,
    InvalidTokenError,
    SqlParseError,
    UnsupportedStatementError,
)
from sparkgate.api.handles import SessionHandle
from sparkgate.api.results import FetchOrientation, ResultKind, ResultType
from sparkgate.api.service import StaticResult
from sparkgate.api.status import OperationStatus, OperationType
from sparkgate.api.types import BIGINT, ResultSchema
from sparkgate.service.gateway import SparkGatewayService

from .conftest import fetch_all, run, unique_name


def test_query_result_schema_traits_and_rows(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    op = service.execute_statement(
        session,
        "SELECT CAST(1 AS INT) AS i, 'a' AS s, CAST(2.50 AS DECIMAL(5,2)) AS d, "
        "DATE'2024-02-29' AS day, TIMESTAMP_NTZ'2024-01-02 03:04:05.123' AS ts",
    )
    first, rows = fetch_all(service, session, op)
    assert first.is_query_result
    assert first.result_kind is ResultKind.SUCCESS_WITH_CONTENT
    assert first.schema.names == ("i", "s", "d", "day", "ts")
    assert [c.logical_type.to_json()["type"] for c in first.schema] == [
        "INTEGER",
        "VARCHAR",
        "DECIMAL",
        "DATE",
        "TIMESTAMP_WITHOUT_TIME_ZONE",
    ]
    assert rows == [
        (
            1,
            "a",
            decimal.Decimal("2.50"),
            dt.date(2024, 2, 29),
            dt.datetime(2024, 1, 2, 3, 4, 5, 123000),
        )
    ]
    assert service.get_operation_result_schema(session, op) == first.schema


def test_ddl_returns_ok_and_dml_returns_job_id(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    table = unique_name("t")
    op = service.execute_statement(
        session, f"CREATE TABLE {table} (id BIGINT, name STRING) USING parquet"
    )
    first, rows = fetch_all(service, session, op)
    assert rows == [("OK",)]
    assert first.result_kind is ResultKind.SUCCESS and not first.is_query_result
    assert first.schema.names == ("result",)
    try:
        op = service.execute_statement(session, f"INSERT INTO {table} VALUES (1, 'x'), (2, 'y')")
        first, rows = fetch_all(service, session, op)
        assert first.schema.names == ("job id",)
        assert first.job_id is not None and rows == [(first.job_id,)]
        assert run(service, session, f"SELECT id, name FROM {table} ORDER BY id") == [
            (1, "x"),
            (2, "y"),
        ]
        shown = run(service, session, "SHOW TABLES")
        assert any(table in row for row in shown)
    finally:
        run(service, session, f"DROP TABLE {table}")


def test_large_ordered_result_spans_pages_in_order(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    op = service.execute_statement(session, "SELECT id FROM range(0, 25000, 1, 3) ORDER BY id DESC")
    _, rows = fetch_all(service, session, op, max_rows=7000)
    assert [r[0] for r in rows] == list(range(24999, -1, -1))


def test_empty_result_reaches_eos(service: SparkGatewayService, session: SessionHandle) -> None:
    first, rows = fetch_all(
        service, session, service.execute_statement(session, "SELECT id FROM range(0) WHERE id > 5")
    )
    assert rows == [] and first.schema.names == ("id",)


def test_invalid_sql_fails_with_cause_chain_and_error_class(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    op = service.execute_statement(session, "SELECT * FROM no_such_table_anywhere")
    with pytest.raises(ExecutionError) as info:
        fetch_all(service, session, op)
    err = info.value
    assert err.error_class == "TABLE_OR_VIEW_NOT_FOUND"
    assert "no_such_table_anywhere" in err.root_cause
    assert err.causes and err.causes[0].startswith("org.apache.spark.sql.")
    assert "AnalysisException: [TABLE_OR_VIEW_NOT_FOUND]" in err.causes[0]
    assert service.get_operation_info(session, op).status is OperationStatus.ERROR
    syntax = service.execute_statement(session, "SELEC 1")
    with pytest.raises(ExecutionError) as info:
        fetch_all(service, session, syntax)
    assert info.value.error_class == "PARSE_SYNTAX_ERROR"
    assert run(service, session, "SELECT 3") == [(3,)]


@pytest.mark.parametrize(
    ("statement", "first_line"),
    [
        # A Java exception pyspark does not convert: its message, not py4j's
        # "An error occurred while calling o31.sql."
        ("SELECT CAST('x' AS TIMESTAMP_LTZ(12))", "[INVALID_TIMESTAMP_PRECISION]"),
        # A parse error whose message starts with a line break.
        ("SELECT 1 ORDER BY 1 SORT BY 1", "[UNSUPPORTED_FEATURE.COMBINATION_QUERY_RESULT_CLAUSES]"),
    ],
)
def test_the_error_message_starts_with_its_cause(
    service: SparkGatewayService, session: SessionHandle, statement: str, first_line: str
) -> None:
    op = service.execute_statement(session, statement)
    with pytest.raises(ExecutionError) as info:
        fetch_all(service, session, op)
    assert str(info.value).startswith(first_line)


def test_unterminated_statement_is_a_parse_error(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    op = service.execute_statement(session, "SELECT 'abc")
    with pytest.raises(SqlParseError, match="unterminated"):
        fetch_all(service, session, op)


def test_wrong_tokens_are_errors_and_previous_token_replays(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    op = service.execute_statement(session, "SELECT id FROM range(10)")
    first = service.fetch_results(session, op, 0, 4, wait=30)
    while first.result_type is ResultType.NOT_READY:
        first = service.fetch_results(session, op, 0, 4, wait=30)
    assert first.num_rows <= 4
    second = service.fetch_results(session, op, 1, 4, wait=30)
    assert service.fetch_results(session, op, 1, 4) is second
    # The page before the last comes again too: the REST endpoint reads one ahead.
    assert service.fetch_results(session, op, 0, 4) is first
    with pytest.raises(InvalidTokenError):
        service.fetch_results(session, op, 5, 4)
    seen = first.rows() + second.rows()
    token = 2
    while True:
        page = service.fetch_results(session, op, token, 4, wait=30)
        seen += page.rows()
        if page.result_type is ResultType.EOS:
            break
        token += 1
    assert [r[0] for r in seen] == list(range(10))
    with pytest.raises(InvalidTokenError):  # three pages back: gone
        service.fetch_results(session, op, token - 3, 4)


def test_fetch_by_orientation(service: SparkGatewayService, session: SessionHandle) -> None:
    op = service.execute_statement(session, "SELECT id FROM range(6)")
    seen = []
    while True:
        page = service.fetch_results_by_orientation(
            session, op, FetchOrientation.FORWARD, 4, wait=30
        )
        if page.result_type is ResultType.NOT_READY:
            continue
        if page.num_rows:
            back = service.fetch_results_by_orientation(session, op, FetchOrientation.BACKWARD, 4)
            assert back.rows() == page.rows()
        seen += page.rows()
        if page.result_type is ResultType.EOS:
            break
    assert [r[0] for r in seen] == list(range(6))


def test_configure_session(service: SparkGatewayService, session: SessionHandle) -> None:
    service.configure_session(session, "SET 'sql-client.verbose' = 'true';")
    service.configure_session(session, "CREATE TEMPORARY VIEW cfg_view AS SELECT 7 AS seven")
    assert service.get_session_config(session)["sql-client.verbose"] == "true"
    assert run(service, session, "SELECT seven FROM cfg_view") == [(7,)]
    for statement in ("SELECT 1", "INSERT INTO x VALUES (1)", "SHOW TABLES", "EXPLAIN SELECT 1"):
        with pytest.raises(UnsupportedStatementError, match="configure-session"):
            service.configure_session(session, statement)
    with pytest.raises(SqlParseError, match="one statement"):
        service.configure_session(session, "SET a=1; SET b=2")
    with pytest.raises(ExecutionError, match=r"PARSE_SYNTAX_ERROR|Syntax error"):
        service.configure_session(session, "CREATE TEMPORARY VIEW broken AS SELEC 1")
    assert run(service, session, "SELECT 1") == [(1,)]


def test_operation_level_config_is_scoped_to_the_statement(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    assert run(
        service,
        session,
        "SELECT current_timezone()",
        config={"spark.sql.session.timeZone": "America/Lima"},
    ) == [("America/Lima",)]
    assert run(service, session, "SELECT current_timezone()") != [("America/Lima",)]


def test_operation_log_and_progress(service: SparkGatewayService, session: SessionHandle) -> None:
    op = service.execute_statement(session, "SELECT sum(id) FROM range(0, 100000, 1, 4)")
    _, rows = fetch_all(service, session, op)
    assert rows == [(4999950000,)]
    log = service.fetch_log(session, op, FetchOrientation.FORWARD, 100)
    lines = [line for (line,) in log.rows()]
    assert any("QUERY" in line for line in lines)
    jobs = [
        re.search(r"Spark job \d+ SUCCEEDED: (\d+) stage\(s\), (\d+) task\(s\)", x) for x in lines
    ]
    assert any(m and int(m.group(1)) >= 1 and int(m.group(2)) >= 1 for m in jobs), lines
    progress = service.get_operation_progress(session, op)
    assert progress.jobs_total >= 1 and progress.tasks_done >= 1
    assert progress.tasks_done == progress.tasks_total


def test_submit_operation_runs_an_endpoint_callable(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    schema = ResultSchema.of(("n", BIGINT))

    def produce() -> StaticResult:
        return StaticResult(schema, [pa.RecordBatch.from_arrays([pa.array([5, 6])], ["n"])])

    op = service.submit_operation(session, produce, OperationType.GET_INFO)
    first, rows = fetch_all(service, session, op)
    assert rows == [(5,), (6,)] and first.schema == schema
    assert service.get_operation_info(session, op).type is OperationType.GET_INFO


def test_gateway_info(service: SparkGatewayService) -> None:
    info = service.get_gateway_info()
    assert info.product_name == "sparkgate"
    assert info.engine_version.startswith("4.")


def test_jars_are_tracked_per_session(
    service: SparkGatewayService, session: SessionHandle, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    import zipfile

    jar = tmp_path / "empty.jar"
    with zipfile.ZipFile(jar, "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    assert run(service, session, f"ADD JAR '{jar}'") == [("OK",)]
    assert run(service, session, "SHOW JARS") == [(str(jar),)]
    assert run(service, session, f"REMOVE JAR '{jar}'") == [("OK",)]
    assert run(service, session, "SHOW JARS") == []
    op = service.execute_statement(session, f"REMOVE JAR '{jar}'")
    with pytest.raises(ExecutionError, match="was not added"):
        fetch_all(service, session, op)


EVERY_TYPE = """
SELECT true AS b, CAST(1 AS TINYINT) AS ti, CAST(2 AS SMALLINT) AS si, 3 AS i, 4L AS bi,
       CAST(1.5 AS FLOAT) AS f, 2.5D AS d, CAST(123.456789 AS DECIMAL(9,6)) AS dec,
       'txt' AS s, X'CAFE' AS bin, DATE'1990-10-14' AS day,
       TIMESTAMP_NTZ'1990-10-14 12:12:43.123' AS ts_ntz,
       TIMESTAMP'1990-10-14 12:12:43.123' AS ts_ltz,
       INTERVAL '1 02:03:04.5' DAY TO SECOND AS dti, INTERVAL '10-3' YEAR TO MONTH AS ymi,
       array(1.1D, 2.2D) AS arr, map('k', 1L) AS m, named_struct('a', 1, 'b', 'x') AS st,
       NULL AS n
"""


@pytest.mark.parametrize("local", [False, True])
def test_every_type_streams_and_encodes(
    service: SparkGatewayService, session: SessionHandle, local: bool
) -> None:
    import orjson

    from sparkgate.codec.rows import encode_json_rows, encode_plain_text_rows

    # A FROM over range() makes Spark run a job (the streamed path); without
    # it the result is computed locally.
    sql = EVERY_TYPE if local else EVERY_TYPE + " FROM range(1)"
    run(service, session, "SET spark.sql.session.timeZone=UTC")
    op = service.execute_statement(session, sql)
    page = service.fetch_results(session, op, 0, 100, wait=60)
    while page.num_rows == 0:
        page = service.fetch_results(session, op, page.next_token or 0, 100, wait=60)
    schema = page.schema
    assert [c.logical_type.to_json()["type"] for c in schema][-6:] == [
        "INTERVAL_DAY_TIME",
        "INTERVAL_YEAR_MONTH",
        "ARRAY",
        "MAP",
        "ROW",
        "NULL",
    ]
    (row,) = [r for b in page.batches for r in encode_json_rows(b, schema, None)]
    fields = orjson.loads(orjson.dumps(row))["fields"]
    assert fields[:11] == [
        True,
        1,
        2,
        3,
        4,
        1.5,
        2.5,
        123.456789,
        "txt",
        "yv4=",
        "1990-10-14",
    ]
    assert fields[11] == "1990-10-14T12:12:43.123"
    assert fields[12] == "1990-10-14T12:12:43.123Z"
    assert fields[13] == 93784500 and fields[14] == 123
    assert fields[15:18] == [[1.1, 2.2], {"k": 1}, {"a": 1, "b": "x"}]
    assert fields[18] is None
    (text,) = [r for b in page.batches for r in encode_plain_text_rows(b, schema, None)]
    assert text["fields"][0] == "TRUE" and text["fields"][9] == "x'cafe'"
    # TIMESTAMP(3): a literal is typed by its digits, as Flink types it.
    assert text["fields"][11] == "1990-10-14 12:12:43.123"
