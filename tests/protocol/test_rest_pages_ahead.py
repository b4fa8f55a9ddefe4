"""The REST endpoint reads and encodes the next page while its client reads one."""

from __future__ import annotations

import time
from typing import Any

import pyarrow as pa

from sparkgate.api.errors import ExecutionError
from sparkgate.api.types import INT, ResultSchema
from sparkgate.endpoints.rest.results import ARROW_MEDIA_TYPE
from tests.doubles import Canned, FakeGatewayService, InProcessClient

SCHEMA = ResultSchema.of(("id", INT))
ROWS = [(i,) for i in range(6)]


def submit(http: InProcessClient, session: str, statement: str = "SELECT rows") -> str:
    response = http.post(f"/v4/sessions/{session}/statements", json={"statement": statement})
    assert response.status_code == 200, response.text
    return str(response.json()["operationHandle"])


def tokens_asked(service: FakeGatewayService) -> list[int]:
    return [call.args[2] for call in service.called("fetch_results")]


def asked_for(service: FakeGatewayService, token: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if token in tokens_asked(service):
            return True
        time.sleep(0.01)
    return False


def page(http: InProcessClient, session: str, op: str, token: int, fmt: str = "JSON") -> list[int]:
    response = http.get(f"/v4/sessions/{session}/operations/{op}/result/{token}?rowFormat={fmt}")
    assert response.status_code == 200, response.text
    if fmt == "ARROW":
        assert response.headers["content-type"].startswith(ARROW_MEDIA_TYPE)
        table = pa.ipc.open_stream(response.content).read_all()
        return [int(v) for v in table.column("id").to_pylist()]
    return [row["fields"][0] for row in response.json()["results"]["data"]]


def past_the_first_page(http: InProcessClient, service: FakeGatewayService, session: str) -> str:
    """A statement of three 2-row pages whose first page the client has read; the
    endpoint has asked for the second meanwhile."""
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS, page_rows=2)
    op = submit(http, session)
    assert page(http, session, op, 0) == [0, 1]
    assert asked_for(service, 1)
    return op


def test_the_next_page_is_fetched_before_the_client_asks(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    op = past_the_first_page(http, service, session)  # page 1 asked for already
    assert page(http, session, op, 1) == [2, 3]
    assert page(http, session, op, 2) == [4, 5]
    body = http.get(f"/v4/sessions/{session}/operations/{op}/result/3").json()
    assert body["resultType"] == "EOS"
    # Each page was fetched from the service once: the client's requests took the
    # pages read ahead; nothing is read after the end of the stream.
    assert tokens_asked(service) == [0, 1, 2, 3]


def test_a_page_asked_again_is_the_same_page(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    op = past_the_first_page(http, service, session)
    assert page(http, session, op, 0) == [0, 1]  # a lost response, asked again
    assert page(http, session, op, 1) == [2, 3]
    assert page(http, session, op, 1) == [2, 3]
    assert page(http, session, op, 2) == [4, 5]


def test_another_row_format_gets_the_same_rows(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    op = past_the_first_page(http, service, session)
    assert page(http, session, op, 1, "ARROW") == [2, 3]
    assert page(http, session, op, 2, "ARROW") == [4, 5]


def test_closing_drops_the_page_read_ahead(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    op = past_the_first_page(http, service, session)
    response = http.delete(f"/v4/sessions/{session}/operations/{op}/close")
    assert response.status_code == 200, response.text
    gone = http.get(f"/v4/sessions/{session}/operations/{op}/result/1")
    assert gone.status_code == 404, gone.text


def test_a_failure_while_reading_ahead_reaches_the_client(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS, page_rows=2)
    op = submit(http, session)
    fetch = service.fetch_results

    def second_page_lost(session: Any, operation: Any, token: int, *args: Any, **kw: Any) -> Any:
        if token == 1:
            raise ExecutionError("the engine lost the result")
        return fetch(session, operation, token, *args, **kw)

    service.fetch_results = second_page_lost  # type: ignore[method-assign]
    assert page(http, session, op, 0) == [0, 1]
    failed = http.get(f"/v4/sessions/{session}/operations/{op}/result/1")
    assert failed.status_code == 500 and "the engine lost the result" in failed.text


def test_nothing_is_read_ahead_of_a_result_not_ready(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.results["SELECT rows"] = Canned.query(SCHEMA, ROWS, page_rows=2, not_ready=1)
    op = submit(http, session)
    body = http.get(f"/v4/sessions/{session}/operations/{op}/result/0").json()
    assert body["resultType"] == "NOT_READY"
    time.sleep(0.2)
    assert tokens_asked(service) == [0]
