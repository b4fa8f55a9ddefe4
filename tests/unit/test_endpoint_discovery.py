"""Endpoint plug-in discovery and option hand-off, with fake factories."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from sparkgate.api.config import ConfigOption, Configuration, int_option, string_option
from sparkgate.api.endpoint import EndpointContext, EndpointFactory
from sparkgate.api.errors import ConfigurationError
from sparkgate.server.endpoints import create_endpoints, discover_factories


@dataclass
class FakeEndpoint:
    context: EndpointContext
    started: bool = False

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.started = False

    @property
    def address(self) -> str:
        return f"fake://{self.context.config.get_raw('port')}"


@dataclass
class FakeFactory:
    identifier: str
    created: list[FakeEndpoint] = field(default_factory=list)

    def options(self) -> Sequence[ConfigOption[Any]]:
        return (int_option("port", 1, "port"), string_option("address", "x", "address"))

    def create(self, context: EndpointContext) -> FakeEndpoint:
        endpoint = FakeEndpoint(context)
        self.created.append(endpoint)
        return endpoint


FACTORIES: dict[str, EndpointFactory] = {
    "rest": FakeFactory("rest"),
    "thrift": FakeFactory("thrift"),
}
SERVICE: Any = object()


def test_each_endpoint_gets_its_own_options_without_prefix() -> None:
    config = Configuration(
        {
            "sql-gateway.endpoint.type": "rest;thrift",
            "sql-gateway.endpoint.rest.port": "8083",
            "sql-gateway.endpoint.thrift.port": "10000",
            "spark.master": "local[1]",
        }
    )
    endpoints = create_endpoints(config, SERVICE, FACTORIES)
    assert [e.address for e in endpoints] == ["fake://8083", "fake://10000"]
    assert endpoints[0].context.config.to_dict() == {"port": "8083"}  # type: ignore[attr-defined]
    assert endpoints[0].context.service is SERVICE  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sql-gateway.endpoint.type": "rset"}, "Unknown endpoint 'rset'.*Did you mean 'rest'"),
        (
            {"sql-gateway.endpoint.rest.prot": "1"},
            "Unknown option sql-gateway.endpoint.rest.prot.*port",
        ),
        (
            {"sql-gateway.endpoint.rest.port": "eighty"},
            "Invalid value 'eighty' for option 'sql-gateway.endpoint.rest.port'",
        ),
        ({"sql-gateway.endpoint.hive.port": "1"}, "no endpoint 'hive'"),
    ],
)
def test_bad_endpoint_configuration_is_a_clear_error(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        create_endpoints(Configuration(options), SERVICE, FACTORIES)


def test_no_endpoint_is_allowed() -> None:
    assert (
        create_endpoints(Configuration({"sql-gateway.endpoint.type": ""}), SERVICE, FACTORIES) == []
    )


def test_registered_factories_are_endpoint_factories() -> None:
    for identifier, factory in discover_factories().items():
        assert factory.identifier == identifier
        assert isinstance(factory, EndpointFactory)


def test_a_broken_plugin_fails_only_when_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    from sparkgate.api.errors import EndpointError
    from sparkgate.server import endpoints

    broken = EntryPoint("ghost", "no_such_module:Factory", "sparkgate.endpoints")
    monkeypatch.setattr(endpoints, "entry_points", lambda group: [broken])
    factories = endpoints.discover_factories()
    assert (
        create_endpoints(Configuration({"sql-gateway.endpoint.type": ""}), SERVICE, factories) == []
    )
    with pytest.raises(EndpointError, match=r"'ghost'.*failed to load"):
        create_endpoints(Configuration({"sql-gateway.endpoint.type": "ghost"}), SERVICE, factories)
