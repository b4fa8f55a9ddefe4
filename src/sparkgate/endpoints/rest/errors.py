"""The one place where exceptions become HTTP status codes and ``{"errors": [...]}``.

Client mistakes (bad handles, JSON, tokens, formats) carry one message, as
Flink's ``RestHandlerException`` does. A statement that failed is a 500 whose
second entry is a Java-style chain under Flink's outermost exception; it ends
with ``Caused by: <root cause>`` because Flink's clients show the text after
the last ``Caused by: `` (Flink wraps the chain in ``<Exception on server
side: ... End of exception on server side>``; the trailer is left out so that
the root cause really is the end of the text).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from starlette.responses import Response

from sparkgate.api.errors import (
    CatalogError,
    ConfigurationError,
    ExecutionError,
    FetchError,
    IllegalStateError,
    OperationNotFoundError,
    SessionLimitError,
    SessionNotFoundError,
    StatementError,
)
from sparkgate.endpoints.rest.responses import json_response

__all__ = [
    "FLINK_GATEWAY_EXCEPTION",
    "RestError",
    "cause_chain",
    "error_body",
    "error_response",
]

log = logging.getLogger(__name__)

FLINK_GATEWAY_EXCEPTION = "org.apache.flink.table.gateway.api.utils.SqlGatewayException"
"""The outermost class Flink's handlers report; clients may look for it."""

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


def cause_chain(action: str, causes: Sequence[str]) -> str:
    """``SqlGatewayException: Failed to <action>.`` then one ``Caused by:`` per cause."""
    lines = [f"{FLINK_GATEWAY_EXCEPTION}: Failed to {action}."]
    lines += [f"Caused by: {cause}" for cause in causes]
    return "\n".join(lines)


def _server_error(action: str, causes: Sequence[str]) -> Response:
    return json_response(error_body("Internal server error.", cause_chain(action, causes)), 500)


def _status_for(exc: BaseException, action: str) -> int | None:
    """The 4xx/5xx for a known gateway error, or None for a failure (500 + chain)."""
    if isinstance(exc, (SessionNotFoundError, OperationNotFoundError)):
        return 404
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


def error_response(exc: BaseException, action: str) -> Response:
    """The response for anything a handler raised while doing ``action``."""
    if isinstance(exc, RestError):
        return json_response(error_body(exc.message), exc.status)
    status = _status_for(exc, action)
    if status is not None:
        log.debug("%s refused (%d): %s", action, status, exc)
        headers = {"Retry-After": "5"} if status == 503 else None
        return json_response(error_body(str(exc)), status, headers=headers)
    if isinstance(exc, ExecutionError):
        log.info("%s: statement failed: %s", action, exc.root_cause)
        return _server_error(action, exc.causes or (exc.message,))
    if isinstance(exc, StatementError):
        return _server_error(action, (f"{type(exc).__name__}: {exc}",))
    log.error("Unexpected failure in %s", action, exc_info=exc)
    name = f"{type(exc).__module__}.{type(exc).__qualname__}"
    return _server_error(action, (f"{name}: {exc}",))
