"""What an endpoint tells the service when it opens a session."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["EndpointVersion", "SessionEnvironment"]


@dataclass(frozen=True, slots=True)
class EndpointVersion:
    """The protocol version a session speaks on its endpoint (FLIP-91).

    ``endpoint`` is the endpoint's identifier (``rest``, ``hiveserver2``),
    ``version`` its own version name (``V4``, ``HIVE_CLI_SERVICE_PROTOCOL_V10``).
    """

    endpoint: str
    version: str

    def __str__(self) -> str:
        return f"{self.endpoint}:{self.version}"


@dataclass(frozen=True)
class SessionEnvironment:
    session_name: str | None = None
    endpoint_version: EndpointVersion | None = None
    config: Mapping[str, str] = field(default_factory=dict)
    jars: tuple[str, ...] = ()
    user: str | None = None
