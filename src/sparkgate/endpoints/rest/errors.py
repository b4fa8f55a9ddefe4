"""The one place where exceptions become HTTP status codes and ``{"errors": [...]}``.

Client mistakes (bad handles, JSON, tokens, formats) carry one message, as
Flink's ``RestHandlerException`` does. A statement that failed is a 500 whose
second entry is what Flink's ``AbstractHandler`` sends: a Java stack trace
between ``<Exception on server side:`` and ``End of exception on server
side>``. Its first line is Flink's outermost exception (``SqlGatewayException:
Failed to <action>.``), then one ``Caused by: <class>: <message>`` per cause,
each followed by stack-frame lines (``\tat ...``). The frames matter: Flink's
SQL client prints the text after the last ``Caused by:`` up to the first
``\tat ``, so the root cause's message must be followed by a frame line, or the
rest of the body (down to the ``]`` of the error list) would print with it.

Under the first line are the gateway's own frames where the failure surfaced
(innermost first, as Java prints them); the causes come from Spark's JVM
without their frames, so each has one ``at sparkgate.endpoints.rest.<action>
(Unknown Source)`` line.
"""

from __future__ import annotations

import logging
import os
import traceback
from collections.abc import Sequence

from starlette.responses import Response

from sparkgate.api.errors import (
    AuthenticationError,
    CatalogError,
    ConfigurationError,
    EngineUnavailableError,
    ExecutionError,
    FetchError,
    IllegalStateError,
    OperationNotFoundError,
    PermissionDeniedError,
    SessionLimitError,
    SessionNotFoundError,
    StatementError,
)
from sparkgate.endpoints.rest.responses import json_response
from sparkgate.sql.secrets import mask_secrets

__all__ = [
    "FLINK_GATEWAY_EXCEPTION",
    "SERVER_SIDE_END",
    "SERVER_SIDE_START",
    "RestError",
    "error_body",
    "error_response",
    "server_side_trace",
]

log = logging.getLogger(__name__)

FLINK_GATEWAY_EXCEPTION = "org.apache.flink.table.gateway.api.utils.SqlGatewayException"
"""The outermost class Flink's handlers report; clients may look for it."""

SERVER_SIDE_START = "<Exception on server side:"
SERVER_SIDE_END = "End of exception on server side>"
"""The lines around the stack trace in a 500's second entry, as Flink writes them."""

# Enough of the gateway's frames to place a failure; Java prints them all.
_MAX_FRAMES = 30

# Actions whose StatementError is a statement that failed while it ran (500),
# not a request the gateway refused up front (400).
_STATEMENT_RESULT_ACTIONS = frozenset({"fetchResults"})


class RestError(Exception):
    """A failure the endpoint itself detects, with its HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_body(*errors: str) -> dict[str, list[str]]:
    return {"errors": list(errors)}


def server_side_trace(action: str, causes: Sequence[str], frames: Sequence[str] = ()) -> str:
    """A 500's second entry: Flink's framed Java stack trace of a failure.

    ``causes`` are ``Class: message`` strings, outermost first; ``frames`` are
    ``module.function(file:line)`` places of the gateway, innermost first.
    Every message is followed by at least one ``\tat`` line, so that a
    client cutting a message at the first frame line gets it whole.
    """
    unknown = f"\tat sparkgate.endpoints.rest.{action}(Unknown Source)"
    lines = [SERVER_SIDE_START, f"{FLINK_GATEWAY_EXCEPTION}: Failed to {action}."]
    lines += [f"\tat {frame}" for frame in frames] or [unknown]
    for cause in causes:
        # Messages may quote the statement, or a value of it: secrets never leave.
        lines += [f"Caused by: {mask_secrets(cause.rstrip())}", unknown]
    # Java's trace ends with a line break, then Flink adds its own before the end marker.
    lines += ["", SERVER_SIDE_END]
    return "\n".join(lines)


def _gateway_frames(exc: BaseException) -> list[str]:
    """sparkgate's frames in ``exc``'s traceback, innermost first, as Java prints frames."""
    frames = []
    for frame, line in traceback.walk_tb(exc.__traceback__):
        module = str(frame.f_globals.get("__name__", ""))
        if module.partition(".")[0] != "sparkgate":
            continue
        code = frame.f_code
        name = getattr(code, "co_qualname", code.co_name)  # co_qualname: Python 3.11+
        frames.append(f"{module}.{name}({os.path.basename(code.co_filename)}:{line})")
    return frames[::-1][:_MAX_FRAMES]


def _server_error(action: str, causes: Sequence[str], exc: BaseException) -> Response:
    trace = server_side_trace(action, causes, _gateway_frames(exc))
    return json_response(error_body("Internal server error.", trace), 500)


def _status_for(exc: BaseException, action: str) -> int | None:
    """The 4xx/5xx for a known gateway error, or None for a failure (500 + chain)."""
    if isinstance(exc, AuthenticationError):
        return 401
    if isinstance(exc, PermissionDeniedError):
        return 403
    if isinstance(exc, (SessionNotFoundError, OperationNotFoundError)):
        return 404
    if isinstance(exc, EngineUnavailableError):
        return 503
    if isinstance(exc, SessionLimitError):
        # A capacity limit, not a fault: the same request succeeds once sessions close.
        return 503
    if isinstance(exc, FetchError):
        return 400
    if isinstance(exc, StatementError):
        return None if action in _STATEMENT_RESULT_ACTIONS else 400
    if isinstance(exc, ConfigurationError):
        return 400
    if isinstance(exc, IllegalStateError):
        return 409
    if isinstance(exc, CatalogError):
        return 404
    return None


def _challenges(schemes: Sequence[str]) -> list[str]:
    return [f'{scheme} realm="sparkgate"' for scheme in schemes or ("Basic",)]


def error_response(exc: BaseException, action: str) -> Response:
    """The response for anything a handler raised while doing ``action``."""
    if isinstance(exc, RestError):
        return json_response(error_body(exc.message), exc.status)
    status = _status_for(exc, action)
    if status is not None:
        log.debug("%s refused (%d): %s", action, status, exc)
        retry = exc.retry_after_s if isinstance(exc, EngineUnavailableError) else 5
        headers = {"Retry-After": str(retry)} if status == 503 else None
        if isinstance(exc, AuthenticationError):
            headers = {"WWW-Authenticate": ", ".join(_challenges(exc.schemes))}
        return json_response(error_body(mask_secrets(str(exc))), status, headers=headers)
    if isinstance(exc, ExecutionError):
        log.info("%s: statement failed: %s", action, exc.root_cause)
        return _server_error(action, exc.causes or (exc.message,), exc)
    if isinstance(exc, StatementError):
        return _server_error(action, (f"{type(exc).__name__}: {exc}",), exc)
    log.error("Unexpected failure in %s", action, exc_info=exc)
    name = f"{type(exc).__module__}.{type(exc).__qualname__}"
    return _server_error(action, (f"{name}: {exc}",), exc)
