"""Values checked before Spark starts: ports, enums, endpoint types and a few Spark keys.

Each bad value is reported in one line naming the key, the value, where it
came from and what is allowed, through the gateway's configuration loader.
"""

from __future__ import annotations

import pytest

from sparkgate.api.errors import ConfigurationError
from sparkgate.server.launcher import load_gateway_configuration
from sparkgate.service.spark.checks import local_cores


def problem(key: str, value: str) -> str:
    with pytest.raises(ConfigurationError) as info:
        load_gateway_configuration(None, {key: value})
    message = str(info.value)
    assert "\n" not in message, message
    assert f"'{value}'" in message and f"'{key}'" in message and f"-D{key}" in message
    return message


@pytest.mark.parametrize(
    "key",
    [
        "sql-gateway.endpoint.rest.port",
        "sql-gateway.endpoint.hiveserver2.port",
        "sql-gateway.endpoint.hiveserver2.http.port",
        "spark.ui.port",
    ],
)
@pytest.mark.parametrize("value", ["99999", "65536", "-1", "http"])
def test_ports_outside_0_to_65535_are_refused(key: str, value: str) -> None:
    assert "expected a port number from 0 to 65535" in problem(key, value)


def test_port_range_bounds_are_accepted() -> None:
    config = load_gateway_configuration(
        None,
        {"sql-gateway.endpoint.rest.port": "65535", "sql-gateway.endpoint.hiveserver2.port": "0"},
    )
    assert config.get_raw("sql-gateway.endpoint.rest.port") == "65535"


def test_runtime_mode_is_an_enum() -> None:
    assert "expected one of 'batch', 'streaming'" in problem("execution.runtime-mode", "stream")
    config = load_gateway_configuration(None, {"execution.runtime-mode": "STREAMING"})
    from sparkgate.service.options import RUNTIME_MODE

    assert config.get(RUNTIME_MODE) == "streaming"


def test_hiveserver2_enums_are_checked() -> None:
    message = problem("sql-gateway.endpoint.hiveserver2.transport-mode", "tcp")
    assert "binary, http, all" in message


def test_unknown_endpoint_type_is_refused_with_a_suggestion() -> None:
    message = problem("sql-gateway.endpoint.type", "rest,hiveserve")
    assert "there is no endpoint 'hiveserve'" in message
    assert "did you mean 'hiveserver2'" in message


@pytest.mark.parametrize("value", ["rest,hiveserver2", "rest;hiveserver2", "rest, hiveserver2"])
def test_endpoint_type_lists_take_commas_or_semicolons(value: str) -> None:
    from sparkgate.server.endpoints import ENDPOINT_TYPE

    config = load_gateway_configuration(None, {"sql-gateway.endpoint.type": value})
    assert config.get(ENDPOINT_TYPE) == ("rest", "hiveserver2")


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [
        ("spark.master", "locl[2]", "local[N]"),
        ("spark.master", "local[0]", "local[N]"),
        ("spark.sql.shuffle.partitions", "0", "a positive integer"),
        ("spark.sql.shuffle.partitions", "eight", "a positive integer"),
        ("spark.driver.memory", "2x", "a JVM memory size"),
        ("spark.ui.enabled", "yes", "'true' or 'false'"),
    ],
)
def test_spark_values_spark_would_refuse_fail_before_it_starts(
    key: str, value: str, allowed: str
) -> None:
    assert allowed in problem(key, value)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("spark.master", "local"),
        ("spark.master", "local[*]"),
        ("spark.master", "local[4, 2]"),
        ("spark.master", "spark://host:7077"),
        ("spark.master", "yarn"),
        ("spark.master", "k8s://https://host:443"),
        ("spark.driver.memory", "512m"),
        ("spark.driver.memory", "4gb"),
        ("spark.ui.enabled", "FALSE"),
        ("spark.sql.shuffle.partitions", "8"),
    ],
)
def test_spark_values_spark_accepts_pass(key: str, value: str) -> None:
    assert load_gateway_configuration(None, {key: value}).get_raw(key) == value


def test_local_cores() -> None:
    assert local_cores("local", 8) == 1
    assert local_cores("local[*]", 8) == 8
    assert local_cores("local[3]", 8) == 3
    assert local_cores("local[3,2]", 8) == 3
    assert local_cores("spark://h:7077", 8) is None
    assert local_cores("yarn", 8) is None
