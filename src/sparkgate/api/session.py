"""What an endpoint tells the service when it opens a session."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from sparkgate.api.auth import Principal

__all__ = ["RESOURCE_SCHEME", "EndpointVersion", "SessionEnvironment", "is_resource_name"]


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
    #: Who the gateway's authentication proved opened it (None: authentication is
    #: off); its jobs and materialized tables are theirs.
    principal: Principal | None = None
    #: The address the client connected from, as its endpoint saw it (the audit log).
    client_address: str | None = None


RESOURCE_SCHEME = "sparkgate-resource"
"""``sparkgate-resource:<name>`` in a statement names a file the client put
in the session (``put_session_resource``), wherever the gateway keeps it."""

_RESOURCE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


def is_resource_name(name: str) -> bool:
    """A session resource's name: one file name of letters, digits, '.', '_', '-'."""
    return bool(_RESOURCE_NAME.fullmatch(name)) and ".." not in name
