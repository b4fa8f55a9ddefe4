"""Finding endpoints by identifier and handing each its own options.

Endpoints are plug-ins registered under the entry-point group
``sparkgate.endpoints`` (the built-in ones too). ``sql-gateway.endpoint.type``
lists the ones to run; each gets the keys under
``sql-gateway.endpoint.<identifier>.`` with that prefix removed, as in Flink.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
from collections.abc import Mapping, Sequence
from importlib.metadata import entry_points
from typing import Any

from sparkgate.api.config import ConfigOption, Configuration, list_option
from sparkgate.api.endpoint import ENTRY_POINT_GROUP, Endpoint, EndpointContext, EndpointFactory
from sparkgate.api.errors import ConfigurationError, EndpointError
from sparkgate.api.service import GatewayService

__all__ = [
    "ENDPOINT_PREFIX",
    "ENDPOINT_TYPE",
    "create_endpoints",
    "discover_factories",
    "endpoint_options",
    "endpoint_type_option",
    "validate_endpoint_options",
]

log = logging.getLogger(__name__)

ENDPOINT_PREFIX = "sql-gateway.endpoint."

ENDPOINT_TYPE = list_option(
    "sql-gateway.endpoint.type",
    ("rest",),
    "The endpoints to start, by identifier, comma-separated (`;` works too, but a "
    "shell ends the command at an unquoted `;`), e.g. `rest` or `rest,hiveserver2`. "
    "Each endpoint reads its options from `sql-gateway.endpoint.<identifier>.*`.",
)


class _BrokenPlugin:
    """Stands in for a plug-in that failed to load; fails only when used."""

    def __init__(self, identifier: str, reason: str) -> None:
        self.identifier = identifier
        self.reason = reason

    def options(self) -> Sequence[ConfigOption[Any]]:
        raise EndpointError(self.reason)

    def create(self, context: EndpointContext) -> Endpoint:
        raise EndpointError(self.reason)


def discover_factories() -> dict[str, EndpointFactory]:
    """Every registered endpoint factory, by identifier.

    A plug-in that fails to load only fails start-up when it is asked for.
    """
    found: dict[str, EndpointFactory] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded: Any = entry.load()
            factory = loaded() if isinstance(loaded, type) else loaded
        except Exception as exc:
            reason = f"Endpoint plug-in {entry.name!r} ({entry.value}) failed to load: {exc}"
            log.warning("%s", reason)
            found[entry.name] = _BrokenPlugin(entry.name, reason)
            continue
        if not isinstance(factory, EndpointFactory):
            reason = f"Endpoint plug-in {entry.name!r} ({entry.value}) is not an EndpointFactory."
            found[entry.name] = _BrokenPlugin(entry.name, reason)
            continue
        found[factory.identifier] = factory
    return found


def _suggest(name: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, candidates, n=1)
    return f" Did you mean '{close[0]}'?" if close else ""


def endpoint_type_option(factories: Mapping[str, EndpointFactory]) -> ConfigOption[Any]:
    """:data:`ENDPOINT_TYPE`, refusing identifiers no plug-in registered."""

    def parse(text: str) -> tuple[str, ...]:
        identifiers = ENDPOINT_TYPE.parse(text)
        for identifier in identifiers:
            if identifier not in factories:
                raise ValueError(
                    f"there is no endpoint '{identifier}'; expected a comma-separated list of "
                    f"{', '.join(sorted(factories)) or 'no endpoints'}"
                    + _suggest(identifier, list(factories)).replace(" Did", "; did")
                )
        return identifiers

    return dataclasses.replace(ENDPOINT_TYPE, parser=parse)


def endpoint_options(factories: Mapping[str, EndpointFactory]) -> tuple[ConfigOption[Any], ...]:
    """Every loadable endpoint's options under their full keys, as users write them."""
    found: list[ConfigOption[Any]] = []
    for identifier, factory in factories.items():
        if isinstance(factory, _BrokenPlugin):
            continue  # reported if it is asked for
        prefix = f"{ENDPOINT_PREFIX}{identifier}."
        found += [dataclasses.replace(o, key=prefix + o.key) for o in factory.options()]
    return tuple(found)


def validate_endpoint_options(
    config: Configuration, factories: Mapping[str, EndpointFactory]
) -> None:
    """Unknown identifiers in keys, and unknown or bad endpoint options, fail start-up."""
    problems: list[str] = []
    for key in config:
        if not key.startswith(ENDPOINT_PREFIX) or key == ENDPOINT_TYPE.key:
            continue
        identifier, _, rest = key[len(ENDPOINT_PREFIX) :].partition(".")
        factory = factories.get(identifier)
        if factory is None:
            problems.append(
                f"{key}: there is no endpoint '{identifier}' (available: "
                f"{', '.join(sorted(factories)) or 'none'})."
                + _suggest(identifier, list(factories))
            )
            continue
        options = {option.key: option for option in factory.options()}
        option = options.get(rest)
        if option is None:
            known = [f"{ENDPOINT_PREFIX}{identifier}.{name}" for name in options]
            problems.append(f"Unknown option {key}." + _suggest(key, known))
            continue
        raw = config.get_raw(key) or ""
        try:
            option.parse(raw)
        except ValueError as exc:
            problems.append(f"Invalid value {raw!r} for option '{key}' ({option.type_name}): {exc}")
    if problems:
        raise ConfigurationError("\n".join(problems))


def create_endpoints(
    config: Configuration,
    service: GatewayService,
    factories: Mapping[str, EndpointFactory] | None = None,
) -> list[Endpoint]:
    """Build (not start) the endpoints ``sql-gateway.endpoint.type`` asks for."""
    factories = discover_factories() if factories is None else factories
    validate_endpoint_options(config, factories)
    endpoints: list[Endpoint] = []
    for identifier in config.get(ENDPOINT_TYPE):
        factory = factories.get(identifier)
        if factory is None:
            raise ConfigurationError(
                f"Unknown endpoint '{identifier}' in {ENDPOINT_TYPE.key} (available: "
                f"{', '.join(sorted(factories)) or 'none'})."
                + _suggest(identifier, list(factories))
            )
        context = EndpointContext(
            service=service,
            config=config.subset(f"{ENDPOINT_PREFIX}{identifier}."),
            gateway_config=config,
        )
        endpoints.append(factory.create(context))
    return endpoints
