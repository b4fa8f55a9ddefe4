"""Checking, before Spark's slow start, that the endpoints' ports can be bound.

Endpoints bind when they start, which is after Spark has started (10 s or
more): a port in use would be reported only then. The launcher calls
:func:`check_ports` first; each port is bound for a moment and released.
Only the built-in endpoints' options are known here; a plug-in endpoint's
ports are checked when it starts.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import Iterator

from sparkgate.api.config import Configuration
from sparkgate.api.errors import ConfigurationError
from sparkgate.endpoints.hiveserver2.options import OPTION_PREFIX as HS2_PREFIX
from sparkgate.endpoints.hiveserver2.options import HiveServer2Settings
from sparkgate.endpoints.rest.options import OPTION_PREFIX as REST_PREFIX
from sparkgate.endpoints.rest.options import RestSettings
from sparkgate.server.endpoints import ENDPOINT_TYPE
from sparkgate.service import options

__all__ = ["check_ports", "check_unauthenticated_binds"]


def _wanted(identifier: str, config: Configuration) -> Iterator[tuple[str, str, int, int]]:
    """(option key, host, first port, last port) each endpoint will bind."""
    if identifier == "rest":
        rest = RestSettings.from_config(config.subset(REST_PREFIX))
        key = "bind-port" if f"{REST_PREFIX}bind-port" in config else "port"
        yield REST_PREFIX + key, rest.bind_address, *rest.bind_ports
    elif identifier == "hiveserver2":
        hs2 = HiveServer2Settings.from_config(config.subset(HS2_PREFIX))
        if hs2.serves_binary:
            yield HS2_PREFIX + "port", hs2.host, hs2.port, hs2.port
        if hs2.serves_http:
            yield HS2_PREFIX + "http.port", hs2.host, hs2.http_port, hs2.http_port


def _bindable(host: str, low: int, high: int) -> OSError | None:
    """None if some port of ``low..high`` on ``host`` can be bound, else the last error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    error: OSError | None = None
    for port in range(low, high + 1):
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do
            try:
                sock.bind((host, port))
            except OSError as exc:
                error = exc
                if exc.errno != errno.EADDRINUSE:
                    break
                continue
            return None
    return error


def check_ports(config: Configuration) -> None:
    """Raise :class:`ConfigurationError` naming each port that cannot be bound."""
    problems: list[str] = []
    seen: dict[tuple[str, int], str] = {}
    for identifier in config.get(ENDPOINT_TYPE):
        for key, host, low, high in _wanted(identifier, config):
            value = str(low) if low == high else f"{low}-{high}"
            if low == high != 0 and (host, low) in seen:
                problems.append(
                    f"Invalid value '{value}' for option '{key}': '{seen[host, low]}' "
                    "uses the same port; give each endpoint its own port"
                )
                continue
            seen[host, low] = key
            if low == high == 0:
                continue
            error = _bindable(host, low, high)
            if error is None:
                continue
            if error.errno == errno.EADDRINUSE:
                reason = f"{host}:{value} is in use; choose a free port (0: any free port)"
            else:
                reason = f"cannot bind {host}:{value}: {error.strerror or error}"
            problems.append(f"Invalid value '{value}' for option '{key}': {reason}")
    if problems:
        raise ConfigurationError("\n".join(problems))


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def check_unauthenticated_binds(config: Configuration) -> None:
    """Without authentication, refuse endpoints bound beyond the loopback unless
    ``sql-gateway.authentication.none-on-any-address`` allows it."""
    names: tuple[str, ...] = config.get(options.AUTHENTICATION)
    if tuple(n.strip().lower() for n in names if n.strip()) not in ((), ("none",)):
        return
    if config.get(options.AUTHENTICATION_NONE_ANY_ADDRESS):
        return
    exposed = [
        f"{host}:{low if low == high else f'{low}-{high}'} ({key})"
        for identifier in config.get(ENDPOINT_TYPE)
        for key, host, low, high in _wanted(identifier, config)
        if not _loopback(host)
    ]
    if exposed:
        raise ConfigurationError(
            "sql-gateway.authentication is none, so anybody who reaches a port runs SQL as "
            "the gateway's OS user, and an endpoint is bound beyond the loopback: "
            f"{', '.join(exposed)}. "
            "Turn authentication on (docs/security.md), bind to 127.0.0.1, or set "
            f"'{options.AUTHENTICATION_NONE_ANY_ADDRESS.key}: true' to allow it."
        )
