"""Streaming in the SQL client, in embedded mode and in gateway mode (REST): tableau
prints streaming rows with their kinds as they arrive, table mode materializes a
streaming aggregation, streaming INSERTs are jobs that SHOW JOBS lists and STOP
JOB ... WITH SAVEPOINT stops and a resume completes exactly once, and statement
sets run as one job.

Every test drives the real client classes against the stream service on the
shared Spark session and asserts on what the client printed.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from pyspark.sql import SparkSession

from sparkgate.api.handles import SessionHandle
from sparkgate.api.results import RowKind
from sparkgate.api.types import ResultSchema
from sparkgate.client.client import SqlClient
from sparkgate.client.embedded import EmbeddedExecutor
from sparkgate.client.executor import Executor, TextRow
from sparkgate.client.rest import RestExecutor
from sparkgate.client.table_view import TableView, TableViewOutcome
from sparkgate.client.terminal import Terminal
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.service.gateway import SparkGatewayService
from tests.client.helpers import text_client
from tests.rest.conftest import settings

from .conftest import name, run, sink_ids, wait_for

_BORDER = re.compile(r"^\+(-+\+)+$")
# A job id is 32 characters, a savepoint path longer: show them whole.
_WIDE = "SET 'sql-client.display.max-column-width' = '1000'"


def sequence(table: str, start: int, end: int, rate: int) -> str:
    return (
        f"CREATE TABLE {table} (id BIGINT) WITH ('connector' = 'datagen', "
        f"'fields.id.kind' = 'sequence', 'fields.id.start' = '{start}', "
        f"'fields.id.end' = '{end}', 'rows-per-second' = '{rate}')"
    )


def parquet_sink(table: str, path: Path) -> str:
    return (
        f"CREATE TABLE {table} (id BIGINT) WITH ('connector' = 'filesystem', "
        f"'path' = '{path}', 'format' = 'parquet')"
    )


# -- fixtures ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def endpoint(stream_service: SparkGatewayService) -> Iterator[RestEndpoint]:
    server = RestEndpoint(stream_service, settings(fetch_timeout=0.5))
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=["embedded", "gateway"])
def executor(
    request: pytest.FixtureRequest, stream_service: SparkGatewayService
) -> Iterator[Executor]:
    built: Executor
    if request.param == "embedded":
        built = EmbeddedExecutor(stream_service)
    else:
        server: RestEndpoint = request.getfixturevalue("endpoint")
        built = RestExecutor("127.0.0.1", server.port)
    yield built
    with contextlib.suppress(Exception):
        built.close()


@pytest.fixture
def client(executor: Executor) -> Iterator[tuple[SqlClient, io.StringIO]]:
    sql_client, out = text_client(executor)
    yield sql_client, out
    sql_client.close()


# -- helpers -------------------------------------------------------------------------


def execute(client: SqlClient, out: io.StringIO, statement: str) -> str:
    """Run one statement that must succeed; what the client printed for it."""
    mark = len(out.getvalue())
    ok = client.execute(statement)
    text = out.getvalue()[mark:]
    assert ok, text
    return text


def setup(client: SqlClient, out: io.StringIO, *statements: str) -> None:
    script = "".join(f"{s};\n" for s in statements)
    assert client.run_script(script, echo=False), out.getvalue()


def tableaus(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every bordered table in ``text``: its header cells and its rows' cells."""

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip()[1:-1].split("|")]

    lines = text.splitlines()
    found = []
    i = 0
    while i + 2 < len(lines):
        if _BORDER.match(lines[i]) and lines[i + 1].startswith("|") and _BORDER.match(lines[i + 2]):
            header, body = cells(lines[i + 1]), []
            i += 3
            while i < len(lines) and lines[i].startswith("|"):
                body.append(cells(lines[i]))
                i += 1
            found.append((header, body))
        i += 1
    return found


def one_table(text: str) -> tuple[list[str], list[list[str]]]:
    tables = tableaus(text)
    assert len(tables) == 1, text
    return tables[0]


def show_jobs(client: SqlClient, out: io.StringIO) -> list[dict[str, str]]:
    text = execute(client, out, "SHOW JOBS")
    if "Empty set" in text:
        return []
    header, body = one_table(text)
    return [dict(zip(header, row, strict=True)) for row in body]


def jobs_named(client: SqlClient, out: io.StringIO, pipeline: str) -> list[dict[str, str]]:
    return [job for job in show_jobs(client, out) if job["job name"] == pipeline]


def job_status(client: SqlClient, out: io.StringIO, job_id: str) -> str:
    return next(job["status"] for job in show_jobs(client, out) if job["job id"] == job_id)


def session_of(executor: Executor) -> SessionHandle:
    if isinstance(executor, EmbeddedExecutor):
        return executor.session
    assert isinstance(executor, RestExecutor) and executor._session is not None
    return executor._session


def gateway_queries(service: SparkGatewayService, executor: Executor) -> list[str]:
    """The gateway's StreamingQueries running in the client session's Spark session."""
    spark = service._session(session_of(executor)).spark
    return [q.name for q in spark.streams.active if (q.name or "").startswith("sparkgate-")]


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """A Ctrl-C that lands outside the client's interrupt guard must not end pytest."""
    previous = signal.signal(signal.SIGINT, lambda _signum, _frame: None)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


# -- tableau -------------------------------------------------------------------------


def test_tableau_prints_a_streaming_result_with_its_row_kinds(
    client: tuple[SqlClient, io.StringIO],
) -> None:
    sql, out = client
    gen = name("gen")
    setup(
        sql,
        out,
        "SET 'sql-client.execution.result-mode' = 'tableau'",
        "SET 'execution.runtime-mode' = 'streaming'",
        sequence(gen, 1, 30, 20),
    )
    text = execute(sql, out, f"SELECT id, id * 10 AS tens FROM {gen}")
    header, body = one_table(text)
    # Flink's streaming tableau: an op column, one +I per row, then the changelog footer.
    assert header == ["op", "id", "tens"], text
    assert sorted(body, key=lambda row: int(row[1])) == [
        ["+I", str(i), str(i * 10)] for i in range(1, 31)
    ]
    assert "Received a total of 30 rows" in text


_DATA_ROW = re.compile(r"^\|( [+-][IUD] \|)? +-?\d+ \|$")


def test_tableau_prints_streaming_rows_as_they_arrive(
    stream_service: SparkGatewayService,
    executor: Executor,
    client: tuple[SqlClient, io.StringIO],
) -> None:
    sql, out = client
    gen = name("gen")
    setup(
        sql,
        out,
        "SET 'sql-client.execution.result-mode' = 'tableau'",
        "SET 'execution.runtime-mode' = 'streaming'",
        f"CREATE TABLE {gen} (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '10')",
    )
    mark = len(out.getvalue())

    def printed() -> int:
        return sum(1 for line in out.getvalue()[mark:].splitlines() if _DATA_ROW.match(line))

    seen: list[int] = []

    def watch() -> None:
        # The source never ends: rows on screen before Ctrl-C were printed as they came.
        try:
            if wait_for(lambda: printed() > 0, 30):
                seen.append(printed())
                if wait_for(lambda: printed() > seen[0], 30):
                    seen.append(printed())
        finally:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, as the user presses it

    watcher = threading.Thread(target=watch, daemon=True)
    with sigint_ignored():
        watcher.start()
        ok = sql.execute(f"SELECT a FROM {gen}")
        watcher.join(60)
    text = out.getvalue()[mark:]
    assert ok, text
    assert len(seen) == 2 and 0 < seen[0] < seen[1], (seen, text)
    cancelled = re.search(r"Query cancelled after (\d+) rows\.", text)
    assert cancelled and int(cancelled.group(1)) == printed() >= seen[1], text
    # Ctrl-C stopped the Spark query; the client goes on.
    assert wait_for(lambda: not gateway_queries(stream_service, executor), 30)
    header, body = one_table(execute(sql, out, "SELECT 41 + 1 AS answer"))
    assert header[-1] == "answer" and [row[-1] for row in body] == ["42"]


# -- table mode ----------------------------------------------------------------------


def test_table_mode_materializes_a_streaming_aggregation(
    stream_service: SparkGatewayService, session: SessionHandle, executor: Executor
) -> None:
    out = io.StringIO()
    views: list[TableView] = []
    received: list[tuple[RowKind, TextRow]] = []

    def table_view(
        schema: ResultSchema,
        pages: Iterator[Sequence[tuple[RowKind, TextRow]]],
        **kwargs: Any,
    ) -> TableViewOutcome:
        def recorded() -> Iterator[Sequence[tuple[RowKind, TextRow]]]:
            for page in pages:
                received.extend(page)
                yield page

        # The real full-screen view on a dummy screen; the "user" leaves with q
        # once the bounded stream has ended.
        with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
            view = TableView(schema, recorded(), input=pipe, output=DummyOutput(), **kwargs)
            views.append(view)

            def leave() -> None:
                wait_for(lambda: view.done, 90)
                pipe.send_text("q")

            leaver = threading.Thread(target=leave, daemon=True)
            leaver.start()
            outcome = view.run()
            leaver.join(10)
            return outcome

    # An interactive terminal: table mode only opens on one.
    sql = SqlClient(executor, Terminal(out, interactive=True, color=False), table_view=table_view)
    sql.start()
    try:
        gen = name("gen")
        query = f"SELECT id % 2 AS parity, count(*) AS c FROM {gen} GROUP BY id % 2"
        setup(sql, out, sequence(gen, 1, 30, 20))
        # The ground truth: the same query in batch mode, in another session.
        truth = sorted([str(v) for v in row] for row in run(stream_service, session, query))
        assert truth == [["0", "15"], ["1", "15"]]

        setup(
            sql,
            out,
            "SET 'sql-client.execution.result-mode' = 'table'",
            "SET 'execution.runtime-mode' = 'streaming'",
        )
        execute(sql, out, query)
    finally:
        sql.close()
    [view] = views
    assert view.done and view.error is None
    assert list(view.schema.names) == ["parity", "c"]
    # It was updated as the stream went: counts were retracted and replaced...
    kinds = {kind for kind, _ in received}
    assert RowKind.UPDATE_BEFORE in kinds and RowKind.UPDATE_AFTER in kinds, received
    # ...and what it shows at the end is the batch result.
    assert sorted(row for _, row in view.rows) == truth
    assert not tableaus(out.getvalue())  # the view showed the result, not the tableau


# -- jobs ----------------------------------------------------------------------------


def test_a_streaming_insert_prints_its_job_id(client: tuple[SqlClient, io.StringIO]) -> None:
    sql, out = client
    src, sink, pipeline = name("src"), name("hole"), name("client-job")
    setup(
        sql,
        out,
        _WIDE,
        f"CREATE TABLE {src} (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '10')",
        f"CREATE TABLE {sink} (a INT) WITH ('connector' = 'blackhole')",
        "SET 'execution.runtime-mode' = 'streaming'",
        f"SET 'pipeline.name' = '{pipeline}'",
    )
    text = execute(sql, out, f"INSERT INTO {sink} SELECT a FROM {src}")
    [job] = jobs_named(sql, out, pipeline)
    try:
        assert job["status"] == "RUNNING"
        # The id is what STOP JOB needs: the client shows it on submission, as Flink's does.
        assert job["job id"] in text, text
    finally:
        execute(sql, out, f"STOP JOB '{job['job id']}'")
    assert job_status(sql, out, job["job id"]) == "CANCELED"


def test_stop_with_savepoint_and_resume_in_the_client_is_exactly_once(
    spark: SparkSession, client: tuple[SqlClient, io.StringIO], tmp_path: Path
) -> None:
    sql, out = client
    rows = 100
    src, sink, pipeline = name("src"), name("sink"), name("client-copy")
    path = tmp_path / "sink"
    setup(
        sql,
        out,
        _WIDE,
        sequence(src, 0, rows - 1, 10),
        parquet_sink(sink, path),
        "SET 'execution.runtime-mode' = 'streaming'",
        f"SET 'pipeline.name' = '{pipeline}'",
    )
    insert = f"INSERT INTO {sink} SELECT id FROM {src}"
    execute(sql, out, insert)
    [job] = jobs_named(sql, out, pipeline)
    job_id = job["job id"]
    assert job["status"] == "RUNNING"
    assert wait_for(lambda: len(sink_ids(spark, path)) >= 10, 60)

    header, [[savepoint]] = one_table(execute(sql, out, f"STOP JOB '{job_id}' WITH SAVEPOINT"))
    assert header == ["savepoint path"]
    assert Path(savepoint).is_dir()
    # Stopped with a savepoint: FINISHED, as Flink reports it (a plain STOP JOB: CANCELED).
    assert job_status(sql, out, job_id) == "FINISHED"
    before = sink_ids(spark, path)
    assert before == list(range(len(before))) and len(before) < rows

    execute(sql, out, f"SET 'execution.savepoint.path' = '{savepoint}'")
    execute(sql, out, insert)
    [resumed] = [j["job id"] for j in jobs_named(sql, out, pipeline) if j["job id"] != job_id]
    assert wait_for(lambda: job_status(sql, out, resumed) == "FINISHED", 90)
    assert sink_ids(spark, path) == list(range(rows))
    execute(sql, out, "RESET 'execution.savepoint.path'")
    header, [described] = one_table(execute(sql, out, f"DESCRIBE JOB '{resumed}'"))
    info = dict(zip(header, described, strict=True))
    assert info["restored from"] == savepoint
    assert info["status"] == "FINISHED"


# -- statement sets --------------------------------------------------------------------


@pytest.mark.parametrize("form", ["begin-end", "execute"])
def test_statement_sets_in_the_client_run_as_one_streaming_job(
    spark: SparkSession, client: tuple[SqlClient, io.StringIO], tmp_path: Path, form: str
) -> None:
    sql, out = client
    src, a, b, pipeline = name("src"), name("a"), name("b"), name("client-set")
    setup(
        sql,
        out,
        _WIDE,
        sequence(src, 1, 12, 20),
        parquet_sink(a, tmp_path / a),
        parquet_sink(b, tmp_path / b),
        "SET 'execution.runtime-mode' = 'streaming'",
        f"SET 'pipeline.name' = '{pipeline}'",
    )
    evens = f"INSERT INTO {a} SELECT id FROM {src} WHERE id % 2 = 0"
    odds = f"INSERT INTO {b} SELECT id FROM {src} WHERE id % 2 = 1"
    mark = len(out.getvalue())
    if form == "begin-end":
        execute(sql, out, "BEGIN STATEMENT SET")
        execute(sql, out, evens)
        # A query does not enter the set: an error, and the set stays open.
        assert not sql.execute("SELECT 1")
        execute(sql, out, odds)
        execute(sql, out, "END")
        refused = "Only INSERT statements can be added to a statement set"
    else:
        assert not sql.execute(f"EXECUTE STATEMENT SET BEGIN {evens}; SELECT 1; END")
        execute(sql, out, f"EXECUTE STATEMENT SET BEGIN {evens}; {odds}; END")
        refused = "A statement set holds only INSERT statements"
    text = out.getvalue()[mark:]
    assert text.count("[ERROR] Could not execute SQL statement. Reason:") == 1, text
    assert refused in text and "SELECT 1" in text
    assert not tableaus(text)  # the refused query printed no result

    [job] = jobs_named(sql, out, pipeline)
    assert wait_for(lambda: job_status(sql, out, job["job id"]) == "FINISHED", 90)
    assert sink_ids(spark, tmp_path / a) == [2, 4, 6, 8, 10, 12]
    assert sink_ids(spark, tmp_path / b) == [1, 3, 5, 7, 9, 11]
