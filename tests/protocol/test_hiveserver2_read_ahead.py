"""HiveServer2 reads and encodes the next page while its client decodes one."""

from __future__ import annotations

import time
from typing import Any

from TCLIService import ttypes

from sparkgate.api.types import INT, ResultSchema
from tests.doubles import Canned, FakeGatewayService, hiveserver2_handler
from tests.protocol.test_hiveserver2_calls import FIRST, NEXT, execute, open_session, rows_of

SCHEMA = ResultSchema.of(("id", INT))
ROWS = [(i,) for i in range(10)]


def reads(service: FakeGatewayService) -> int:
    return len(service.called("fetch_results_by_orientation"))


def read_ahead(service: FakeGatewayService, count: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if reads(service) >= count:
            return True
        time.sleep(0.01)
    return False


def fetch(handler: Any, op: Any, max_rows: int, orientation: int = NEXT) -> Any:
    return handler.FetchResults(
        ttypes.TFetchResultsReq(operationHandle=op, orientation=orientation, maxRows=max_rows)
    )


def started(service: FakeGatewayService, **kw: Any) -> tuple[Any, Any]:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS, **kw)
    handler = hiveserver2_handler(service, fetch_max_rows=1000, fetch_first_max_rows=0)
    session = open_session(handler).sessionHandle
    return handler, execute(handler, session, "SELECT rows")


def test_after_a_full_page_the_next_is_read_before_the_client_asks() -> None:
    service = FakeGatewayService()
    handler, op = started(service)
    first = fetch(handler, op, 4)
    assert rows_of(first.results) == ROWS[:4] and first.hasMoreRows
    assert read_ahead(service, 2)  # the client has not asked for rows 4..7
    second = fetch(handler, op, 4)
    assert rows_of(second.results) == ROWS[4:8]
    assert second.results.startRowOffset == 4
    third = fetch(handler, op, 4)
    assert rows_of(third.results) == ROWS[8:]
    last = fetch(handler, op, 4)
    assert rows_of(last.results) == [] and not last.hasMoreRows


def test_a_smaller_page_asked_next_loses_no_row() -> None:
    service = FakeGatewayService()
    handler, op = started(service)
    assert rows_of(fetch(handler, op, 4).results) == ROWS[:4]
    assert read_ahead(service, 2)
    got: list[Any] = []
    for _ in range(10):
        page = fetch(handler, op, 3)
        got += rows_of(page.results)
        if not page.hasMoreRows:
            break
    assert got == ROWS[4:]


def test_fetch_first_after_a_page_read_ahead_is_refused_and_the_rows_stay() -> None:
    service = FakeGatewayService()
    handler, op = started(service)
    assert rows_of(fetch(handler, op, 4).results) == ROWS[:4]
    assert read_ahead(service, 2)
    refused = fetch(handler, op, 4, FIRST)
    assert refused.status.statusCode == ttypes.TStatusCode.ERROR_STATUS
    assert "FETCH_FIRST" in refused.status.errorMessage
    assert rows_of(fetch(handler, op, 4).results) == ROWS[4:8]


def test_no_read_ahead_after_a_page_that_was_not_full() -> None:
    service = FakeGatewayService()
    handler, op = started(service, page_rows=2)
    assert rows_of(fetch(handler, op, 4).results) == ROWS[:2]
    time.sleep(0.2)
    assert reads(service) == 1
