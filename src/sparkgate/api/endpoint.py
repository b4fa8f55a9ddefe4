"""The endpoint plug-in contract (FLIP-91 "Pluggable Endpoint").

An endpoint is a stateless translator between one wire protocol and the
:class:`~sparkgate.api.service.GatewayService`. Endpoints are found through
the entry-point group ``sparkgate.endpoints``: each entry point names an
:class:`EndpointFactory`; the built-in ones register the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from sparkgate.api.config import ConfigOption, Configuration
from sparkgate.api.service import GatewayService

__all__ = ["ENTRY_POINT_GROUP", "Endpoint", "EndpointContext", "EndpointFactory"]

ENTRY_POINT_GROUP = "sparkgate.endpoints"


@dataclass(frozen=True)
class EndpointContext:
    """What an endpoint is given: the service, and its own options.

    ``config`` holds the endpoint's options with the
    ``sql-gateway.endpoint.<identifier>.`` prefix removed;
    ``gateway_config`` is the whole configuration, read-only.
    """

    service: GatewayService
    config: Configuration
    gateway_config: Configuration


@runtime_checkable
class Endpoint(Protocol):
    def start(self) -> None:
        """Start serving; return once the endpoint accepts connections."""

    def stop(self) -> None:
        """Stop accepting, finish or drop what is in flight; idempotent."""

    @property
    def address(self) -> str:
        """Where clients reach it, e.g. ``http://127.0.0.1:8083``."""


@runtime_checkable
class EndpointFactory(Protocol):
    #: The identifier used in ``sql-gateway.endpoint.type`` and option keys.
    identifier: str

    def options(self) -> Sequence[ConfigOption[Any]]:
        """The endpoint's options, keys without the endpoint prefix."""

    def create(self, context: EndpointContext) -> Endpoint: ...
