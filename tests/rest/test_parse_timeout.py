"""A parse past ``sql-gateway.statement.parse-timeout`` fails with an error naming it.

The gateway's parser stops at its deadline; Spark's parser (which nothing can
stop) is left to finish in the JVM while its statement fails, and other
sessions are served meanwhile.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import pytest

from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.statements import dispatch
from sparkgate.service.statements.kinds import SparkQuery
from sparkgate.service.statements.parse_limit import ParseLimit, ParseTimeoutError
from sparkgate.service.statements.parser import parse_statement
from sparkgate.sql.deadline import check_deadline, parse_deadline
from tests.service.conftest import make_service

from .conftest import rows, settings, submit, walk

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

OPTION = "sql-gateway.statement.parse-timeout"


def _wide(columns: int, name: str = "a") -> str:
    """``SELECT a, a, ...``: Spark's parser takes seconds on 100k columns (a 2 MiB one:
    half a minute), the gateway's about a second."""
    return "SELECT " + ", ".join([name] * columns)


def test_the_gateway_parser_stops_at_its_deadline() -> None:
    statement = _wide(100_000)
    started = time.monotonic()
    with pytest.raises(ParseTimeoutError, match=OPTION) as failure:
        ParseLimit(0.001).parse(statement)
    assert "the gateway's parser was stopped" in str(failure.value)
    assert time.monotonic() - started < 30
    # Without a limit (0) it parses; the deadline does not leak out of a parse.
    assert isinstance(ParseLimit(0).parse(statement), SparkQuery)
    check_deadline()
    assert isinstance(parse_statement("SELECT 1"), SparkQuery)


def test_an_earlier_enclosing_deadline_stays_in_force() -> None:
    with parse_deadline(0.001, "outer"):
        time.sleep(0.01)
        with parse_deadline(60, "inner"), pytest.raises(ParseTimeoutError, match="outer"):
            check_deadline()


def test_a_timeout_is_not_taken_for_an_incomplete_statement() -> None:
    """The parser reports a statement with an open '(' as incomplete (the Flink client
    then reads on); a timeout in it must stay a timeout."""
    statement = "SELECT (" + ", ".join(["a"] * 100_000)
    with pytest.raises(ParseTimeoutError):
        ParseLimit(0.001).parse(statement)


def test_spark_parse_past_the_limit_fails_while_others_are_served(spark: SparkSession) -> None:
    limit = ParseLimit(0.2)
    slow = _wide(100_000, "slow_a")
    started = time.monotonic()
    with pytest.raises(ParseTimeoutError, match=OPTION) as failure:
        limit.spark_parse(spark, slow)
    assert time.monotonic() - started < 10, "the statement fails at the limit, not at the end"
    assert "Spark's parser was stopped" in str(failure.value)
    # Spark still parses that one: another session is served meanwhile (a limit of its
    # own: a first parse in a new session sets up its state, and the machine may be busy).
    other = spark.newSession()
    started = time.monotonic()
    plan = ParseLimit(60).spark_parse(other, "SELECT x FROM t")
    assert plan is not None and [r.name for r in plan.reads] == [("t",)]
    assert time.monotonic() - started < 30
    # The same text again is timed again, not answered from the parse cache that the
    # parse left running fills: it fails again.
    with pytest.raises(ParseTimeoutError):
        limit.spark_parse(spark, slow)


def test_a_text_slow_once_is_served_when_it_parses_in_time(spark: SparkSession) -> None:
    """A slow moment (a cold JVM, a busy machine) does not refuse a text for ever."""
    text = "SELECT 42 AS slow_once"
    with pytest.raises(ParseTimeoutError):
        ParseLimit(1e-6).spark_parse(spark, text)
    plan = ParseLimit(60).spark_parse(spark, text)
    assert plan is not None and plan.kind == "Project"


def test_past_the_abandoned_parses_allowed_a_parse_keeps_its_worker(spark: SparkSession) -> None:
    """With enough parses left running in the JVM, a slow one runs to its end on the
    caller's thread, and still fails."""
    with pytest.raises(ParseTimeoutError, match=OPTION) as failure:
        ParseLimit(0.01, max_abandoned=0).spark_parse(spark, _wide(20_000, "inline_a"))
    assert "background" not in str(failure.value)
    assert ParseLimit(60, max_abandoned=0).spark_parse(spark, "SELECT 1") is not None


def _first_page(client: httpx.Client, session: str, operation: str) -> httpx.Response:
    uri = f"/v4/sessions/{session}/operations/{operation}/result/0"
    deadline = time.monotonic() + 60
    response = client.get(uri)
    while response.status_code == 200 and response.json().get("resultType") == "NOT_READY":
        assert time.monotonic() < deadline, "no first page in time"
        response = client.get(uri)
    return response


def _first_answer(client: httpx.Client, session: str, statement: str) -> httpx.Response:
    """A statement's refusal as it is submitted, else its first result page."""
    response = client.post(f"/v4/sessions/{session}/statements", json={"statement": statement})
    if response.status_code != 200:
        return response
    return _first_page(client, session, response.json()["operationHandle"])


_WIRED = "parse_limit" in inspect.signature(dispatch.statement_executor).parameters


@pytest.fixture(scope="module")
def limited_service(spark: SparkSession) -> Iterator[SparkGatewayService]:
    # A limit a busy machine keeps for a short statement, and room for a long one.
    service = make_service(
        spark, **{OPTION: "3 s", "sql-gateway.statement.max-length": str(8 << 20)}
    )
    yield service
    service.stop()


@pytest.mark.skipif(not _WIRED, reason="ParseLimit not wired into the gateway and dispatch yet")
def test_a_statement_past_the_limit_fails_and_other_sessions_are_served(
    limited_service: SparkGatewayService,
) -> None:
    endpoint = RestEndpoint(limited_service, settings(max_body_size=16 << 20))
    endpoint.start()
    try:
        with httpx.Client(base_url=endpoint.address, timeout=60) as client:
            sessions = [
                client.post("/v4/sessions", json={}).json()["sessionHandle"] for _ in range(2)
            ]
            # The other session has set up its state in Spark (a first statement does; on a
            # cold JVM that may take longer than the limit once).
            for _ in range(3):
                warm = _first_answer(client, sessions[1], "SELECT 0")
                if warm.status_code == 200:
                    break
            assert warm.status_code == 200, warm.text
            # 500k columns: seconds for the gateway's parser (it stops at the limit), and
            # far longer for Spark's, should the gateway's be done in time.
            slow = _wide(500_000, "rest_a")
            answers: list[httpx.Response] = []
            reader = threading.Thread(
                target=lambda: answers.append(_first_answer(client, sessions[0], slow))
            )
            reader.start()
            # The other session is served meanwhile.
            fast = submit(client, sessions[1], "SELECT 1 AS one")
            first = f"/v4/sessions/{sessions[1]}/operations/{fast}/result/0"
            assert rows(walk(client, first, timeout=60)) == [[1]]
            reader.join(60)
            [failed] = answers
            # Refused as it is submitted (400), or failed when it ran (500 on fetch).
            assert failed.status_code in (400, 500), failed.text
            assert OPTION in failed.text and "took longer than" in failed.text
    finally:
        endpoint.stop()
