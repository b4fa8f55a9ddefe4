"""The endpoint's lifecycle, binding and options (no Spark work)."""

from __future__ import annotations

import socket
from datetime import timedelta
from typing import Any

import httpx
import pytest

from sparkgate.api.config import Configuration
from sparkgate.api.endpoint import Endpoint, EndpointContext
from sparkgate.api.errors import ConfigurationError, EndpointError
from sparkgate.endpoints.rest.factory import RestEndpointFactory
from sparkgate.endpoints.rest.options import FETCH_TIMEOUT, RestSettings, parse_port_range
from sparkgate.endpoints.rest.server import RestEndpoint, bind_socket
from sparkgate.server.docs import generated_docs
from sparkgate.service.gateway import SparkGatewayService

from .conftest import settings


def test_start_reports_real_port_and_stop_is_idempotent(
    rest_service: SparkGatewayService,
) -> None:
    endpoint = RestEndpoint(rest_service, settings())
    assert isinstance(endpoint, Endpoint)
    endpoint.start()
    endpoint.start()  # already running: nothing happens
    try:
        assert endpoint.port > 0 and endpoint.address == f"http://127.0.0.1:{endpoint.port}"
        assert httpx.get(endpoint.address + "/v1/api_versions").status_code == 200
    finally:
        endpoint.stop()
    endpoint.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(endpoint.address + "/v1/api_versions")


def test_port_range_takes_the_first_free_port(rest_service: SparkGatewayService) -> None:
    busy = bind_socket("127.0.0.1", (0, 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        endpoint = RestEndpoint(rest_service, settings(bind_ports=(port, port + 5)))
        endpoint.start()
        try:
            assert port < endpoint.port <= port + 5
        finally:
            endpoint.stop()
        with pytest.raises(EndpointError, match="could not bind"):
            RestEndpoint(rest_service, settings(bind_ports=(port, port))).start()
    finally:
        busy.close()


def test_factory_builds_from_prefixless_options(rest_service: SparkGatewayService) -> None:
    config = Configuration({"address": "localhost", "port": "0", "fetch-timeout": "250 ms"})
    context = EndpointContext(rest_service, config, Configuration())
    endpoint = RestEndpointFactory().create(context)
    assert isinstance(endpoint, RestEndpoint)
    assert endpoint.settings.fetch_timeout == 0.25
    endpoint.start()
    try:
        assert endpoint.address.startswith("http://localhost:")
        with httpx.Client(base_url=endpoint.address) as http:
            assert http.get("/info").json()["productName"] == "sparkgate"
    finally:
        endpoint.stop()


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({}, {"bind_address": "127.0.0.1", "bind_ports": (8083, 8083), "fetch_max_rows": 10000}),
        ({"address": "10.0.0.5"}, {"bind_address": "10.0.0.5"}),
        ({"address": "h", "bind-address": "0.0.0.0"}, {"address": "h", "bind_address": "0.0.0.0"}),
        ({"port": "9000"}, {"port": 9000, "bind_ports": (9000, 9000)}),
        ({"port": "9000", "bind-port": "9100-9105"}, {"port": 9000, "bind_ports": (9100, 9105)}),
        ({"max-body-size": "1 mb", "fetch-max-rows": "5"}, {"max_body_size": 1 << 20}),
        ({"fetch-timeout": "0 ms"}, {"fetch_timeout": 0.0}),
    ],
)
def test_settings_from_config(values: dict[str, str], expected: dict[str, Any]) -> None:
    resolved = RestSettings.from_config(Configuration(values))
    for key, value in expected.items():
        assert getattr(resolved, key) == value


@pytest.mark.parametrize(
    "values",
    [
        {"port": "-1"},
        {"bind-port": "90-80"},
        {"bind-port": "70000"},
        {"bind-port": "http"},
        {"fetch-max-rows": "0"},
        {"fetch-timeout": "-1 s"},
        {"max-body-size": "lots"},
    ],
)
def test_bad_option_values(values: dict[str, str]) -> None:
    with pytest.raises(ConfigurationError):
        RestSettings.from_config(Configuration(values))


def test_port_range_parser() -> None:
    assert parse_port_range("8083") == (8083, 8083)
    assert parse_port_range(" 8083-8090 ") == (8083, 8090)
    assert FETCH_TIMEOUT.default == timedelta(seconds=3)


def test_options_are_documented_with_their_full_keys() -> None:
    page = generated_docs()
    assert "## REST endpoint" in page
    for key in (
        "address",
        "port",
        "bind-address",
        "bind-port",
        "fetch-timeout",
        "max-body-size",
        "fetch-max-rows",
    ):
        assert f"| `sql-gateway.endpoint.rest.{key}` |" in page


def test_bind_socket_closes_on_failure() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(EndpointError):
            bind_socket("127.0.0.1", (port, port))


def test_listening_socket_is_tcp_so_connections_get_nodelay() -> None:
    # asyncio turns TCP_NODELAY on for accepted connections only when the
    # listening socket says IPPROTO_TCP; otherwise keep-alive responses stall on
    # the client's delayed ACK.
    import socket

    from sparkgate.endpoints.rest.server import bind_socket

    sock = bind_socket("127.0.0.1", (0, 0))
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()
