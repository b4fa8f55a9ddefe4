"""Secret option values never leave the gateway: session config, SET, logs."""

from __future__ import annotations

import logging

import httpx
import pytest
from pyspark.sql import SparkSession

from sparkgate.api.session import SessionEnvironment
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.sql.secrets import HIDDEN
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
