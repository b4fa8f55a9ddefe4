"""Gateway handles <-> Thrift handles, without state in the endpoint.

A ``TSessionHandle`` carries the session's UUID as its GUID. A
``TOperationHandle`` carries the operation's UUID as its GUID and the
*session's* UUID as its secret: every service call names the session first,
and HiveServer2 clients echo the whole handle back, so the endpoint needs no
operation -> session table.
"""

from __future__ import annotations

import uuid

from TCLIService import ttypes

from sparkgate.api.handles import OperationHandle, SessionHandle

__all__ = [
    "operation_handle",
    "parse_operation",
    "parse_session",
    "session_handle",
]

_SESSION_SECRET = b"\x00" * 16


def _uuid(kind: str, raw: object) -> uuid.UUID:
    if not isinstance(raw, bytes) or len(raw) != 16:
        raise ValueError(f"Invalid {kind} handle: expected a 16-byte identifier.")
    return uuid.UUID(bytes=raw)


def session_handle(handle: SessionHandle) -> ttypes.TSessionHandle:
    return ttypes.TSessionHandle(
        sessionId=ttypes.THandleIdentifier(guid=handle.identifier.bytes, secret=_SESSION_SECRET)
    )


def parse_session(handle: ttypes.TSessionHandle | None) -> SessionHandle:
    if handle is None or handle.sessionId is None:
        raise ValueError("Invalid session handle: none was given.")
    return SessionHandle(_uuid("session", handle.sessionId.guid))


def operation_handle(
    session: SessionHandle,
    operation: OperationHandle,
    operation_type: int,
    has_result_set: bool = True,
) -> ttypes.TOperationHandle:
    return ttypes.TOperationHandle(
        operationId=ttypes.THandleIdentifier(
            guid=operation.identifier.bytes, secret=session.identifier.bytes
        ),
        operationType=operation_type,
        hasResultSet=has_result_set,
    )


def parse_operation(
    handle: ttypes.TOperationHandle | None,
) -> tuple[SessionHandle, OperationHandle]:
    if handle is None or handle.operationId is None:
        raise ValueError("Invalid operation handle: none was given.")
    ident = handle.operationId
    return (
        SessionHandle(_uuid("operation", ident.secret)),
        OperationHandle(_uuid("operation", ident.guid)),
    )
