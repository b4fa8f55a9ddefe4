"""The GatewayService double keeps up with the Protocol it stands in for."""

from __future__ import annotations

import inspect

import pytest

from sparkgate.api.service import GatewayService
from tests.doubles import FakeGatewayService

PROTOCOL_METHODS = sorted(
    name
    for name, value in vars(GatewayService).items()
    if callable(value) and not name.startswith("_")
)


def test_the_double_is_a_gateway_service() -> None:
    assert isinstance(FakeGatewayService(), GatewayService)


@pytest.mark.parametrize("name", PROTOCOL_METHODS)
def test_every_protocol_method_has_the_protocols_signature(name: str) -> None:
    expected = inspect.signature(getattr(GatewayService, name))
    actual = inspect.signature(getattr(FakeGatewayService, name))
    assert list(actual.parameters.values()) == list(expected.parameters.values()), name
    assert actual.return_annotation == expected.return_annotation, name
