"""Result spooling (``sql-gateway.result.spool``): kept results, fetched again.

With it on, any page handed out can be fetched again by its token, a result
can be read again from its first row, and (with persistent sessions) a result
can be fetched after a restart; bounded by size and by age. Off (the
default), only the last page can be fetched again.
"""

from __future__ import annotations

import json
import os
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import ExecutionError, InvalidTokenError
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import FetchOrientation, ResultKind, ResultType
from sparkgate.api.session import SessionEnvironment
from sparkgate.api.types import ResultSchema
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.result.spool import SpoolStore

from .conftest import service_on

SPOOL = {"sql-gateway.result.spool": "true"}


def ids(
    service: SparkGatewayService,
    session: SessionHandle,
    op: OperationHandle,
    token: int,
    rows: int = 10,
) -> tuple[list[Any], int | None]:
    page = service.fetch_results(session, op, token, rows, wait=30)
    return [r[0] for r in page.rows()], page.next_token


def started(service: SparkGatewayService, statement: str) -> tuple[SessionHandle, OperationHandle]:
    session = service.open_session(SessionEnvironment(session_name="spool"))
    return session, service.execute_statement(session, statement)


def kept_files(data_dir: Path) -> list[str]:
    root = data_dir / "results"
    return sorted(p.name for p in root.glob("*/*")) if root.exists() else []


def read_to_end(
    service: SparkGatewayService, session: SessionHandle, op: OperationHandle, rows: int = 10
) -> list[list[Any]]:
    """Every page of the result, as handed out (a page may hold fewer rows than asked)."""
    pages, token = [], 0
    while True:
        page, token_ = ids(service, session, op, token, rows)
        if token_ is None:
            return pages
        pages.append(page)
        token = token_


def test_a_kept_result_gives_any_page_again(spark: SparkSession, tmp_path: Path) -> None:
    with service_on(spark, tmp_path, **SPOOL) as service:
        session, op = started(service, "SELECT id FROM range(25)")
        pages = read_to_end(service, session, op)
        assert [i for page in pages for i in page] == list(range(25))
        assert len(pages) >= 3
        # Any page again, in any order, with the token after it.
        for token in (0, len(pages) - 1, 1, 0):
            assert ids(service, session, op, token) == (pages[token], token + 1)
        end = service.fetch_results(session, op, len(pages), 10)
        assert end.result_type is ResultType.EOS and end.next_token is None
        with pytest.raises(InvalidTokenError):
            service.fetch_results(session, op, len(pages) + 5, 10)
        # From the first row again (FETCH_FIRST), then on where the result had got to.
        first = service.fetch_results_by_orientation(session, op, FetchOrientation.FIRST, 12)
        assert [r[0] for r in first.rows()] == list(range(12))
        forward = service.fetch_results_by_orientation(session, op, FetchOrientation.FORWARD, 20)
        assert [r[0] for r in forward.rows()] == list(range(12, 25))
        tail = service.fetch_results_by_orientation(session, op, FetchOrientation.FORWARD, 20)
        assert tail.result_type is ResultType.EOS
        assert len(kept_files(tmp_path)) == 2  # its rows and its pages
        service.close_operation(session, op)
        assert kept_files(tmp_path) == []
        other, op = started(service, "SELECT 1")
        read_to_end(service, other, op)  # at its end, its producer is done writing
        assert len(kept_files(tmp_path)) == 2
        service.close_session(other)
        assert kept_files(tmp_path) == []


def test_a_producer_finishing_after_the_close_leaves_no_file(tmp_path: Path) -> None:
    # The client may close the operation between its first page and the producer's
    # end: what the producer does after the discard must not bring the files back.
    store = SpoolStore(tmp_path / "results", max_bytes=1 << 20, retention_s=3600)
    spool = store.create("s", "op", ResultSchema.from_json([]), ResultKind.SUCCESS_WITH_CONTENT)
    batch = pa.record_batch({"id": pa.array([1, 2, 3], pa.int64())})
    spool.write(batch)
    spool.paged(3, end=False)
    assert len(kept_files(tmp_path)) == 2
    spool.discard()
    spool.write(batch)
    spool.paged(3, end=True)
    spool.finish()
    assert kept_files(tmp_path) == []


def test_without_spooling_only_the_last_two_pages_come_again(
    spark: SparkSession, tmp_path: Path
) -> None:
    with service_on(spark, tmp_path) as service:
        session, op = started(service, "SELECT id FROM range(25)")
        first = ids(service, session, op, 0)
        second = ids(service, session, op, 1)
        assert ids(service, session, op, 1) == second
        assert ids(service, session, op, 0) == first  # the page before the last, too
        ids(service, session, op, 2)
        with pytest.raises(InvalidTokenError, match="expecting 3"):
            service.fetch_results(session, op, 0, 10)
        with pytest.raises(InvalidTokenError, match=r"sql-gateway\.result\.spool"):
            service.fetch_results_by_orientation(session, op, FetchOrientation.FIRST, 10)
        assert kept_files(tmp_path) == []


def test_kept_results_are_fetched_after_a_restart(spark: SparkSession, tmp_path: Path) -> None:
    options = {**SPOOL, "sql-gateway.session.persistent": "true"}
    with service_on(spark, tmp_path, **options) as first:
        session, half_read = started(
            first, "SELECT id, CAST(id AS DECIMAL(10, 2)) AS d FROM range(25)"
        )
        before = [ids(first, session, half_read, token)[0] for token in (0, 1)]
        unread = first.execute_statement(
            session, "SELECT 'x' AS s, TIMESTAMP '2026-01-02 03:04:05'"
        )
        first.get_operation_result_schema(session, unread, timeout=30)
        time.sleep(0.5)  # the producer has put its one row in the file
    with service_on(spark, tmp_path, **options) as second:
        assert ids(second, session, half_read, 0) == (before[0], 1)
        assert ids(second, session, half_read, 1) == (before[1], 2)
        rest, token = [], 2
        while token is not None:
            page = second.fetch_results(session, half_read, token, 10)
            rest += page.rows()
            token = page.next_token
        start = len(before[0]) + len(before[1])
        assert rest == [(i, Decimal(f"{i}.00")) for i in range(start, 25)]
        schema = second.get_operation_result_schema(session, half_read)
        assert [c.name for c in schema] == ["id", "d"]
        [(text, stamp)] = second.fetch_results(session, unread, 0, 10).rows()
        assert text == "x" and str(stamp).startswith("2026-01-02 03:04:05")
        second.close_session(session)
        assert kept_files(tmp_path) == []


def test_the_spool_is_bounded_by_size(spark: SparkSession, tmp_path: Path) -> None:
    bounded = {
        **SPOOL,
        "sql-gateway.result.spool.max-size": "4kb",
        "sql-gateway.result.batch-rows": "100",
    }
    with service_on(spark, tmp_path, **bounded) as service:
        session, op = started(service, "SELECT id FROM range(5000)")
        pages = read_to_end(service, session, op, 100)
        assert [i for page in pages for i in page] == list(range(5000))  # live: all of it
        assert ids(service, session, op, 0, 100)[0] == pages[0]  # kept: the first
        with pytest.raises(InvalidTokenError):
            service.fetch_results(session, op, len(pages) - 2, 100)  # past the bound
        sizes = [p.stat().st_size for p in (tmp_path / "results").glob("*/*.arrow")]
        assert sizes and max(sizes) <= 4096 + 1024  # the bound, and the stream's header


def test_kept_results_past_their_retention_are_gone(spark: SparkSession, tmp_path: Path) -> None:
    options = {
        **SPOOL,
        "sql-gateway.session.persistent": "true",
        "sql-gateway.result.spool.retention": "1 min",
    }
    with service_on(spark, tmp_path, **options) as first:
        session, op = started(first, "SELECT 7")
        read_to_end(first, session, op)
        record = tmp_path / "state" / "sessions" / f"{session.identifier.hex}.json"
        deadline = time.monotonic() + 30
        while json.loads(record.read_text())["operations"][str(op)]:  # still working
            assert time.monotonic() < deadline
            time.sleep(0.05)
    for path in (tmp_path / "results").glob("*/*"):
        old = time.time() - 120
        os.utime(path, (old, old))
    with service_on(spark, tmp_path, **options) as second:
        assert kept_files(tmp_path) == []
        with pytest.raises(ExecutionError, match=r"did not keep this statement\'s result"):
            second.fetch_results(session, op, 0, 10)
