"""HiveServer2's connection-level failures, logged at most once per kind per minute.

A client that fails its connections in a loop (a scanner, a client of the
wrong protocol or authentication mode, a password guesser, HTTP garbage) wrote
a line per connection, some with a traceback. These are the kinds the
transports report, by logger; :mod:`sparkgate.endpoints.log_limits` does the
limiting. Only ``failed`` (an error of the gateway, not the client's doing)
keeps its level and its first traceback.
"""

from __future__ import annotations

from sparkgate.endpoints.log_limits import Kind, flush_all, limit

__all__ = ["flush_connection_logs", "limit_connection_logs"]

_PACKAGE = "sparkgate.endpoints.hiveserver2"

# Logger -> the kinds of connection failure it reports (message templates' starts).
_CONNECTION_FAILURES: dict[str, tuple[Kind, ...]] = {
    f"{_PACKAGE}.transport": (
        Kind("HiveServer2 connection from %s refused"),
        Kind("HiveServer2 connection from %s sent no Thrift"),
        Kind("HiveServer2 connection from %s sent a malformed"),
        Kind("HiveServer2 connection from %s ended"),
        Kind("HiveServer2 connection from %s: no handshake in time"),
        Kind("HiveServer2 connection from %s: TLS handshake failed"),
        Kind("HiveServer2 connection from %s starts a TLS handshake"),
        Kind("HiveServer2: %s holds %d connections already"),
        Kind("HiveServer2 connection from %s failed", expected=False),
    ),
    f"{_PACKAGE}.sasl": (Kind("HiveServer2 login refused"),),
    f"{_PACKAGE}.endpoint": (Kind("HiveServer2 connection ended"),),
    f"{_PACKAGE}.http": (
        # http.server's log_error: a request line or headers it cannot read.
        Kind("HiveServer2 HTTP %s: code "),
        Kind("HiveServer2 HTTP call from %s could not be read"),
        Kind("HiveServer2 HTTP: %s holds %d connections already"),
        Kind("HiveServer2 HTTP connection from %s ended"),
        Kind("HiveServer2 HTTP connection from %s failed", expected=False),
        Kind("HiveServer2 HTTP call failed", expected=False),
    ),
}


def limit_connection_logs() -> None:
    """Rate-limit the endpoint's connection-failure logs (idempotent)."""
    for name, kinds in _CONNECTION_FAILURES.items():
        limit(name, kinds)


def flush_connection_logs() -> None:
    """Log the counts held back now (the endpoint stops)."""
    flush_all(_CONNECTION_FAILURES)
