"""The plug-in entry point: ``sparkgate.endpoints`` -> ``rest``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sparkgate.api.config import ConfigOption
from sparkgate.api.endpoint import Endpoint, EndpointContext
from sparkgate.endpoints.rest.handlers import ENDPOINT_ID
from sparkgate.endpoints.rest.options import REST_OPTIONS, RestSettings
from sparkgate.endpoints.rest.server import RestEndpoint

__all__ = ["RestEndpointFactory"]


class RestEndpointFactory:
    """Builds the Flink-compatible REST endpoint from its (prefix-less) options."""

    identifier = ENDPOINT_ID

    def options(self) -> Sequence[ConfigOption[Any]]:
        return REST_OPTIONS

    def create(self, context: EndpointContext) -> Endpoint:
        return RestEndpoint(context.service, RestSettings.from_config(context.config))
