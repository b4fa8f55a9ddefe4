"""Streaming over the REST API: jobs stopped with a savepoint and resumed exactly
once, jobs that outlive their session, streaming SELECTs stopped by cancel and
close, back-pressure from a slow REST reader, and failed jobs with their cause.

Every test talks httpx to a real RestEndpoint on 127.0.0.1 in front of a real
service on the shared Spark session.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.service.gateway import SparkGatewayService
from tests.rest.conftest import settings, submit, walk

from .conftest import make_service, name, sink_ids, wait_for

DATAGEN = "CREATE TABLE {t} (id BIGINT) WITH ('connector' = 'datagen', {options})"


def sequence(start: int, end: int, rate: int) -> str:
    return (
        f"'fields.id.kind' = 'sequence', 'fields.id.start' = '{start}', "
        f"'fields.id.end' = '{end}', 'rows-per-second' = '{rate}'"
    )


# -- helpers -------------------------------------------------------------------------


def open_session(http: httpx.Client) -> str:
    response = http.post("/v4/sessions", json={"sessionName": "rest-streaming"})
    assert response.status_code == 200, response.text
    return str(response.json()["sessionHandle"])


def close_session(http: httpx.Client, handle: str) -> None:
    http.delete(f"/v4/sessions/{handle}")


def table(http: httpx.Client, handle: str, statement: str) -> tuple[list[str], list[list[Any]]]:
    """Column names and rows of a statement's whole result (JSON row format)."""
    op = submit(http, handle, statement)
    bodies = walk(http, f"/v4/sessions/{handle}/operations/{op}/result/0?rowFormat=JSON")
    names = next(
        [c["name"] for c in b["results"]["columns"]]
        for b in bodies
        if b.get("results", {}).get("columns")
    )
    data = [row["fields"] for b in bodies if "results" in b for row in b["results"]["data"]]
    http.delete(f"/v4/sessions/{handle}/operations/{op}/close")
    return names, data


def rows_of(http: httpx.Client, handle: str, statement: str) -> list[list[Any]]:
    return table(http, handle, statement)[1]


def jobs(http: httpx.Client, handle: str) -> dict[str, list[Any]]:
    """SHOW JOBS by job id: [id, name, status, start time]."""
    return {str(row[0]): row for row in rows_of(http, handle, "SHOW JOBS")}


def status(http: httpx.Client, handle: str, job_id: str) -> str:
    return str(jobs(http, handle)[job_id][2])


def first_rows(
    http: httpx.Client, handle: str, op: str, timeout: float = 60
) -> tuple[list[list[Any]], str]:
    """Follow the result until a page carries rows: those rows and the next page's URI."""
    uri = f"/v4/sessions/{handle}/operations/{op}/result/0?rowFormat=JSON"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = http.get(uri)
        assert response.status_code == 200, response.text
        body = response.json()
        data = body.get("results", {}).get("data") or []
        assert body.get("nextResultUri"), f"the stream ended: {body}"
        uri = body["nextResultUri"]
        if data:
            return [row["fields"] for row in data], uri
    raise AssertionError(f"no rows in {timeout} s")


def gateway_queries(service: SparkGatewayService, handle: str) -> list[str]:
    """Names of the gateway's StreamingQueries active in a session's Spark session.

    Each gateway session runs on its own Spark session (``newSession``), whose
    StreamingQueryManager is its own: the shared session's ``streams`` never
    lists them.
    """
    spark = service._session(SessionHandle.parse(handle)).spark
    return [q.name for q in spark.streams.active if (q.name or "").startswith("sparkgate-")]


def query_name(op: str) -> str:
    return f"sparkgate-{OperationHandle.parse(op).identifier.hex[:12]}"


def generated(query: StreamingQuery) -> int:
    """Rows the query's datagen (rate) source produced in its completed micro-batches."""
    progress = query.lastProgress
    if not progress:
        return 0
    [source] = progress["sources"]
    offset = source["endOffset"]
    return int((json.loads(offset) if isinstance(offset, str) else offset)["offset"])


# -- tests ---------------------------------------------------------------------------


def test_stop_with_savepoint_and_resume_over_rest_is_exactly_once(
    spark: SparkSession, http: httpx.Client, tmp_path: Path
) -> None:
    rows = 100
    src, sink, pipeline = name("src"), name("sink"), name("rest-copy")
    path = tmp_path / "sink"
    first, other = open_session(http), open_session(http)
    try:
        for statement in (
            DATAGEN.format(t=src, options=sequence(0, rows - 1, 10)),
            f"CREATE TABLE {sink} (id BIGINT) WITH ('connector' = 'filesystem', "
            f"'path' = '{path}', 'format' = 'parquet')",
            "SET 'execution.runtime-mode' = 'streaming'",
            f"SET 'pipeline.name' = '{pipeline}'",
        ):
            assert rows_of(http, first, statement) == [["OK"]]
        names, result = table(http, first, f"INSERT INTO {sink} SELECT id FROM {src}")
        assert names == ["job id"]
        [[job_id]] = result
        assert wait_for(lambda: len(sink_ids(spark, path)) >= 10, 60)
        # The job is the gateway's: a second REST session sees and stops it.
        assert jobs(http, other)[job_id][1:3] == [pipeline, "RUNNING"]
        names, result = table(http, other, f"STOP JOB '{job_id}' WITH SAVEPOINT")
        assert names == ["savepoint path"]
        [[savepoint]] = result
        assert Path(savepoint).is_dir()
        # Stopped with a savepoint: FINISHED, as Flink reports it (a plain STOP JOB: CANCELED).
        assert status(http, other, job_id) == "FINISHED"
        before = sink_ids(spark, path)
        assert before == list(range(len(before))) and len(before) < rows

        assert rows_of(http, first, f"SET 'execution.savepoint.path' = '{savepoint}'") == [["OK"]]
        [[resumed]] = rows_of(http, first, f"INSERT INTO {sink} SELECT id FROM {src}")
        assert resumed != job_id
        assert wait_for(lambda: status(http, other, resumed) == "FINISHED", 90)
        # Every row exactly once, as Spark and as a batch SELECT over REST see the sink.
        assert sink_ids(spark, path) == list(range(rows))
        assert sorted(r[0] for r in rows_of(http, other, f"SELECT id FROM {sink}")) == list(
            range(rows)
        )
        names, [described] = table(http, other, f"DESCRIBE JOB '{resumed}'")
        info = dict(zip(names, described, strict=True))
        assert info["restored from"] == savepoint
        assert info["status"] == "FINISHED"
        assert info["job name"] == pipeline
    finally:
        close_session(http, first)
        close_session(http, other)


def test_a_job_outlives_the_rest_session_that_submitted_it(
    spark: SparkSession, http: httpx.Client, tmp_path: Path
) -> None:
    src, sink = name("src"), name("sink")
    path = tmp_path / "sink"
    submitter, other = open_session(http), open_session(http)
    try:
        # Far more rows than the test waits for: the job runs until it is stopped.
        rows_of(http, submitter, DATAGEN.format(t=src, options=sequence(0, 1_000_000, 20)))
        rows_of(
            http,
            submitter,
            f"CREATE TABLE {sink} (id BIGINT) WITH ('connector' = 'filesystem', "
            f"'path' = '{path}', 'format' = 'parquet')",
        )
        rows_of(http, submitter, "SET 'execution.runtime-mode' = 'streaming'")
        [[job_id]] = rows_of(http, submitter, f"INSERT INTO {sink} SELECT id FROM {src}")
        assert wait_for(lambda: len(sink_ids(spark, path)) > 0, 60)

        response = http.delete(f"/v4/sessions/{submitter}")
        assert response.status_code == 200, response.text
        assert http.get(f"/v4/sessions/{submitter}").status_code >= 400  # it is gone
        assert status(http, other, job_id) == "RUNNING"
        # Not only listed as running: it keeps committing rows.
        committed = len(sink_ids(spark, path))
        assert wait_for(lambda: len(sink_ids(spark, path)) > committed, 60)
        assert status(http, other, job_id) == "RUNNING"

        assert rows_of(http, other, f"STOP JOB '{job_id}'") == [["OK"]]
        assert status(http, other, job_id) == "CANCELED"
        ids = sink_ids(spark, path)
        assert ids == list(range(len(ids)))
    finally:
        close_session(http, submitter)
        close_session(http, other)


@pytest.mark.parametrize("how", ["close", "cancel"])
def test_ending_a_streaming_select_over_rest_stops_its_query(
    stream_service: SparkGatewayService, http: httpx.Client, how: str
) -> None:
    handle = open_session(http)
    try:
        gen, bounded = name("gen"), name("gen")
        rows_of(http, handle, f"CREATE TABLE {gen} (a INT) WITH ('connector' = 'datagen')")
        rows_of(http, handle, DATAGEN.format(t=bounded, options=sequence(1, 5, 20)))
        rows_of(http, handle, "SET 'execution.runtime-mode' = 'streaming'")
        op = submit(http, handle, f"SELECT a FROM {gen}")
        page, _ = first_rows(http, handle, op)
        assert page and all(isinstance(row[0], int) for row in page)
        assert gateway_queries(stream_service, handle) == [query_name(op)]

        base = f"/v4/sessions/{handle}/operations/{op}"
        if how == "close":
            response = http.delete(f"{base}/close")
            assert response.status_code == 200, response.text
            assert http.get(f"{base}/status").status_code >= 400  # the operation is gone
        else:
            response = http.post(f"{base}/cancel")
            assert response.status_code == 200, response.text
            assert response.json()["status"] == "CANCELED"
            assert http.get(f"{base}/status").json()["status"] == "CANCELED"
        assert wait_for(lambda: not gateway_queries(stream_service, handle), 30)

        # The session goes on: a new streaming query runs to its end.
        assert rows_of(http, handle, f"SELECT id FROM {bounded}") == [[i] for i in range(1, 6)]
        assert rows_of(http, handle, "SELECT 1") == [[1]]
        if how == "cancel":
            http.delete(f"{base}/close")
    finally:
        close_session(http, handle)


def test_a_slow_rest_reader_keeps_the_gateway_buffer_bounded(
    spark: SparkSession, data_dir: Path
) -> None:
    buffer_rows, page_rows, batch_rows, wanted = 50, 20, 40, 300
    # What Spark may have produced beyond what the reader took: the full buffer,
    # the micro-batch waiting in the hand-off slot, the one being buffered and the
    # page the endpoint read ahead of the reader.
    slack = buffer_rows + 2 * batch_rows + page_rows
    service = make_service(
        spark,
        **{
            "sql-gateway.data-dir": str(data_dir),
            "sql-gateway.result.buffer-rows": str(buffer_rows),
            "execution.checkpointing.interval": "200 ms",
            "execution.runtime-mode": "streaming",
        },
    )
    endpoint = RestEndpoint(service, settings(fetch_max_rows=page_rows))
    endpoint.start()
    try:
        with httpx.Client(base_url=endpoint.address, timeout=120) as http:
            handle = open_session(http)
            gen = name("gen")
            # 40 rows per 200 ms micro-batch; the sequence outlasts the test.
            rows_of(http, handle, DATAGEN.format(t=gen, options=sequence(0, 10_000_000, 200)))
            op = submit(http, handle, f"SELECT id FROM {gen}")
            page, uri = first_rows(http, handle, op)
            ids = [int(row[0]) for row in page]
            operation = service._operation(SessionHandle.parse(handle), OperationHandle.parse(op))
            buffer = operation._fetcher.buffer  # type: ignore[union-attr]
            spark_session = service._session(SessionHandle.parse(handle)).spark
            [query] = [q for q in spark_session.streams.active if q.name == query_name(op)]

            # The reader pauses for what the source makes in 3 s (600 rows): the
            # buffer fills up and the query waits instead of running ahead.
            assert wait_for(lambda: buffer.buffered_rows >= buffer_rows, 30)
            time.sleep(3)
            paused_at = generated(query)
            assert paused_at <= len(ids) + slack, (paused_at, len(ids))
            assert buffer.peak_rows <= buffer_rows

            # Then it reads on slowly: pages stay within the endpoint's page size,
            # the buffer within its bound, and Spark moves only as the reader does.
            while len(ids) < wanted:
                response = http.get(uri)
                assert response.status_code == 200, response.text
                body = response.json()
                data = body.get("results", {}).get("data") or []
                assert len(data) <= page_rows
                ids.extend(int(row["fields"][0]) for row in data)
                assert generated(query) <= len(ids) + slack, (generated(query), len(ids))
                uri = body["nextResultUri"]
                time.sleep(0.05)
            assert buffer.peak_rows <= buffer_rows
            assert generated(query) > paused_at
            # Nothing was lost or repeated while the query was held back.
            assert ids == list(range(len(ids)))

            assert http.delete(f"/v4/sessions/{handle}/operations/{op}/close").status_code == 200
            assert wait_for(lambda: not query.isActive, 30)
            close_session(http, handle)
    finally:
        endpoint.stop()
        service.stop()


def test_a_failing_job_shows_failed_with_its_cause_over_rest(http: httpx.Client) -> None:
    handle, other = open_session(http), open_session(http)
    try:
        src, sink = name("src"), name("hole")
        rows_of(http, handle, f"CREATE TABLE {src} (a INT) WITH ('connector' = 'datagen')")
        rows_of(http, handle, f"CREATE TABLE {sink} (a INT) WITH ('connector' = 'blackhole')")
        rows_of(http, handle, "SET 'execution.runtime-mode' = 'streaming'")
        [[job_id]] = rows_of(
            http,
            handle,
            f"INSERT INTO {sink} SELECT CASE WHEN a IS NOT NULL THEN raise_error('boom') END "
            f"FROM {src}",
        )
        assert wait_for(lambda: status(http, other, job_id) == "FAILED", 60)
        names, [described] = table(http, other, f"DESCRIBE JOB '{job_id}'")
        info = dict(zip(names, described, strict=True))
        assert info["status"] == "FAILED"
        assert "boom" in str(info["cause"])
        assert info["end time"]
        # Stopping a failed job is a clear error, not a crash.
        op = submit(http, other, f"STOP JOB '{job_id}'")
        response = http.get(f"/v4/sessions/{other}/operations/{op}/result/0")
        assert response.status_code >= 400
        assert f"job {job_id} is FAILED" in " ".join(response.json()["errors"])
        # The gateway and both sessions keep serving.
        assert rows_of(http, handle, "SELECT 1") == [[1]]
        assert rows_of(http, other, "SELECT 2") == [[2]]
    finally:
        close_session(http, handle)
        close_session(http, other)
