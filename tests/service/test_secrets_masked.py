"""Secret option values never leave the gateway: session config, SET, logs."""

from __future__ import annotations

import logging

import httpx
import pytest
from pyspark.sql import SparkSession

from sparkgate.api.session import SessionEnvironment
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.sql.secrets import HIDDEN, configure_redaction
from tests.rest.conftest import settings

from .conftest import make_service, run

SECRET = "AKIA-do-not-show-4711"


def test_secret_values_are_masked_everywhere_they_are_shown(
    spark: SparkSession, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="sparkgate")
    service = make_service(spark, **{"spark.hadoop.fs.s3a.secret.key": SECRET})
    endpoint = RestEndpoint(service, settings())
    endpoint.start()
    try:
        handle = service.open_session(
            SessionEnvironment(config={"spark.hadoop.fs.s3a.access.key": SECRET})
        )
        config = service.get_session_config(handle)
        assert config["spark.hadoop.fs.s3a.secret.key"] == HIDDEN
        assert config["spark.hadoop.fs.s3a.access.key"] == HIDDEN
        run(service, handle, f"SET 'my.api.token' = '{SECRET}'")
        listing = dict(run(service, handle, "SET"))
        assert listing["my.api.token"] == HIDDEN
        assert listing["spark.hadoop.fs.s3a.secret.key"] == HIDDEN
        assert run(service, handle, "SET 'my.api.token'") == [("my.api.token", HIDDEN)]
        # Ordinary values are shown as set.
        run(service, handle, "SET 'my.color' = 'blue'")
        assert dict(run(service, handle, "SET"))["my.color"] == "blue"
        with httpx.Client(base_url=endpoint.address, timeout=60) as http:
            rest = http.post("/v1/sessions", json={"properties": {"a.password": SECRET}})
            shown = http.get(f"/v1/sessions/{rest.json()['sessionHandle']}").text
            assert SECRET not in shown and HIDDEN in shown
        assert SECRET not in caplog.text
    finally:
        endpoint.stop()
        service.stop()


def test_the_configured_redaction_regex_decides_what_is_masked(spark: SparkSession) -> None:
    service = make_service(spark, **{"spark.redaction.regex": "(?i)secret|password|mykey"})
    endpoint = RestEndpoint(service, settings())
    endpoint.start()
    try:
        with httpx.Client(base_url=endpoint.address, timeout=60) as http:
            properties = {"spark.app.mykey": SECRET, "spark.app.color": "blue-or-green"}
            rest = http.post("/v1/sessions", json={"properties": properties})
            shown = http.get(f"/v1/sessions/{rest.json()['sessionHandle']}").json()
        config = shown["properties"]
        assert config["spark.app.mykey"] == HIDDEN  # Spark's default would show it
        assert config["spark.app.color"] == "blue-or-green"
        handle = service.open_session(SessionEnvironment())
        run(service, handle, f"SET 'other.mykey' = '{SECRET}-2'")
        assert run(service, handle, "SET 'other.mykey'") == [("other.mykey", HIDDEN)]
    finally:
        endpoint.stop()
        service.stop()
        configure_redaction({})  # the process's pattern: Spark's default for later tests
