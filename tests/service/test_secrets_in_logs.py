"""Secret values stay out of what the gateway writes and returns: its own log
records, the operation logs clients fetch and error messages (Spark's echo the
statement), while ordinary values still show."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import GatewayError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.results import FetchOrientation
from sparkgate.api.session import SessionEnvironment
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.service.gateway import SparkGatewayService
from tests.rest.conftest import settings

from .conftest import fetch_all, make_service, run

START = "AKIA-start-4711-xyz"  # the gateway's configuration
OPENED = "opened-secret-4712-xyz"  # a session property given at open
SET_VALUE = "set-secret-4713-xyz"
WITH_VALUE = "with-secret-4714-xyz"
OPTIONS_VALUE = "options-secret-4715-xyz"
URL_VALUE = "url-secret-4716-xyz"
PATH_VALUE = "path-secret-4717-xyz"
PARSE_VALUE = "parse-secret-4718-xyz"
ORDINARY = "blue-4719-xyz"


@pytest.fixture
def service(spark: SparkSession) -> Iterator[SparkGatewayService]:
    service = make_service(spark, **{"spark.hadoop.fs.s3a.secret.key": START})
    try:
        yield service
    finally:
        service.stop()


def outcome(
    service: SparkGatewayService, session: SessionHandle, statement: str
) -> tuple[str, str]:
    """What running ``statement`` shows: its error (message and causes, or ``""``)
    and its operation log as a client fetches it."""
    operation = service.execute_statement(session, statement)
    error = ""
    try:
        fetch_all(service, session, operation)
    except GatewayError as exc:
        error = "\n".join([str(exc), *getattr(exc, "causes", ())])
    page = service.fetch_log(session, operation, FetchOrientation.BACKWARD, 100_000)
    service.close_operation(session, operation)
    return error, "\n".join(str(row[0]) for row in page.rows())


def test_secrets_in_statements_are_masked_in_logs_and_errors(
    service: SparkGatewayService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    session = service.open_session(SessionEnvironment())
    shown: list[str] = []
    for statement in (
        f"SET 'spark.hadoop.fs.s3a.access.key' = '{SET_VALUE}'",
        # Refused (datagen has no such option), and the refusal is logged.
        "CREATE TEMPORARY TABLE g (id INT) WITH "
        f"('connector' = 'datagen', 'password' = '{WITH_VALUE}')",
        # Spark's JDBC source fails (no driver): its message and the URL.
        "CREATE TEMPORARY VIEW j USING jdbc OPTIONS (url "
        f"'jdbc:postgresql://127.0.0.1:1/db?user=u&password={URL_VALUE}', "
        f"dbtable 't', password '{OPTIONS_VALUE}')",
        # Spark's errors quote the path, and the statement.
        f"SELECT * FROM json.`/nonexistent/{ORDINARY}/password={PATH_VALUE}`",
        f"SELEC 'password' = '{PARSE_VALUE}'",
        # A value seen under a secret key is masked where it shows without it.
        f"SELECT * FROM `{SET_VALUE}`",
        f"SELECT * FROM `{WITH_VALUE}`",
    ):
        error, log = outcome(service, session, statement)
        shown += [error, log]
    # Spark's error about the path, and the log lines about it, still say what it was.
    assert any(ORDINARY in text for text in shown)
    assert ORDINARY in caplog.text
    shown.append(caplog.text)
    shown += [r.getMessage() for r in caplog.records]
    for secret in (SET_VALUE, WITH_VALUE, OPTIONS_VALUE, URL_VALUE, PATH_VALUE, PARSE_VALUE):
        assert not [text for text in shown if secret in text], secret
    # The ones the statements failed with say where it failed, secrets masked.
    assert "password=******" in "\n".join(shown)


def test_a_failure_over_rest_does_not_show_the_secret(service: SparkGatewayService) -> None:
    endpoint = RestEndpoint(service, settings())
    endpoint.start()
    try:
        with httpx.Client(base_url=endpoint.address, timeout=60) as http:
            session = http.post("/v1/sessions", json={}).json()["sessionHandle"]
            statement = f"SELEC 'fs.s3a.secret.key' = '{PARSE_VALUE}'"
            submitted = http.post(
                f"/v1/sessions/{session}/statements", json={"statement": statement}
            ).json()
            result = f"/v1/sessions/{session}/operations/{submitted['operationHandle']}/result/0"
            for _ in range(100):
                page = http.get(result)
                if page.status_code != 200 or page.json().get("resultType") != "NOT_READY":
                    break
            assert page.status_code == 500
            assert PARSE_VALUE not in page.text and "SELEC 'fs.s3a.secret.key'" in page.text
    finally:
        endpoint.stop()


def test_secret_values_given_as_configuration_are_masked_where_echoed(
    service: SparkGatewayService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    session = service.open_session(SessionEnvironment(config={"my.api.token": OPENED}))
    shown: list[str] = []
    for secret in (START, OPENED):
        # Pasted into a statement by mistake: Spark's errors quote it, at analysis
        # (a name) and at run time (a value, raised while the result streams).
        shown += outcome(service, session, f"SELECT * FROM `{secret}`")
        shown += outcome(service, session, f"SELECT CAST('{secret}' AS INT)")
    run(service, session, f"SET 'my.session.password' = '{SET_VALUE}'")
    shown += outcome(service, session, f"SELECT CAST('{SET_VALUE}' AS INT)")
    # Spark redacts its own secret settings where it substitutes them.
    run(service, session, f"SET 'spark.my.secret' = '{OPENED}'")
    shown += outcome(service, session, "SELECT CAST('${spark.my.secret}' AS INT)")
    shown.append(caplog.text)
    for secret in (START, OPENED, SET_VALUE):
        assert not [text for text in shown if secret in text], secret
