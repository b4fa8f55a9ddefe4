"""The one place where exceptions become Thrift ``TStatus`` values.

HiveServer2 reports a failed call inside its response (``status`` with
``ERROR_STATUS``, a message and a SQL state), not as a Thrift exception, so
every handler method runs through :func:`guarded`, which turns whatever the
call raised into the response's status. Clients show ``errorMessage`` (and
beeline ``state=<sqlState>``); ``infoMessages`` stay unset because the Hive
JDBC driver parses them as a serialised Java stack trace (an empty list makes
it fail on its own parsing and hide the message).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from TCLIService import ttypes

from sparkgate.api.errors import (
    CatalogError,
    ExecutionError,
    GatewayError,
    OperationNotFoundError,
    SessionNotFoundError,
    SqlParseError,
    StatementError,
)
from sparkgate.sql.secrets import mask_secrets

__all__ = [
    "TIMEOUT_SQL_STATE",
    "HiveServer2Error",
    "error_message",
    "error_status",
    "guarded",
    "success_status",
]

log = logging.getLogger(__name__)

R = TypeVar("R")

#: ODBC's "timeout expired" state, reported with a timed-out operation.
TIMEOUT_SQL_STATE = "HYT00"


class HiveServer2Error(Exception):
    """A failure the endpoint itself detects (unsupported call, bad request)."""

    def __init__(self, message: str, sql_state: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.sql_state = sql_state


def success_status() -> ttypes.TStatus:
    return ttypes.TStatus(statusCode=ttypes.TStatusCode.SUCCESS_STATUS)


def _sql_state(exc: BaseException) -> str | None:
    if isinstance(exc, HiveServer2Error):
        return exc.sql_state
    if isinstance(exc, ExecutionError):
        return exc.sql_state
    if isinstance(exc, SqlParseError):
        return "42000"
    if isinstance(exc, CatalogError):
        return "42S02"
    if isinstance(exc, (SessionNotFoundError, OperationNotFoundError)):
        return "HY010"
    if isinstance(exc, StatementError):
        return "42000"
    return None


def error_message(exc: BaseException) -> str:
    """What a client shows for ``exc`` (secret values masked: messages may quote
    the statement)."""
    return mask_secrets(_error_message(exc))


def _error_message(exc: BaseException) -> str:
    if isinstance(exc, HiveServer2Error):
        return exc.message
    if isinstance(exc, ExecutionError):
        return exc.message
    if isinstance(exc, GatewayError):
        return str(exc)
    if isinstance(exc, ValueError):
        return str(exc)
    return f"Internal error: {type(exc).__name__}: {exc}"


def error_status(exc: BaseException) -> ttypes.TStatus:
    """The ``TStatus`` of a call that raised ``exc``."""
    if not isinstance(exc, (GatewayError, HiveServer2Error, ValueError)):
        log.exception("HiveServer2 call failed unexpectedly", exc_info=exc)
    return ttypes.TStatus(
        statusCode=ttypes.TStatusCode.ERROR_STATUS,
        errorMessage=error_message(exc),
        sqlState=_sql_state(exc),
        errorCode=0,
        infoMessages=None,
    )


def guarded(response: Callable[..., R], call: Callable[[], Any]) -> R:
    """Run ``call``; a response built from its result, or an error response.

    ``call`` returns a dict of the response's fields (without ``status``).
    """
    try:
        fields = call()
    except Exception as exc:
        return response(status=error_status(exc))
    return response(status=success_status(), **fields)
