"""The gateway's exception tree.

Every error the service raises is a :class:`GatewayError`; endpoints map the
subclasses to protocol status in exactly one module each::

    GatewayError
    ├── ConfigurationError         bad option value or unknown key (start-up)
    ├── JavaNotFoundError          no usable Java for Spark
    ├── SessionError
    │   ├── SessionNotFoundError   unknown or expired session handle
    │   └── SessionLimitError      more than sql-gateway.session.max-num
    ├── OperationError
    │   ├── OperationNotFoundError unknown or closed operation handle
    │   └── IllegalStateError      an operation cannot do this in its state
    ├── FetchError
    │   └── InvalidTokenError      a fetch token that is neither next nor previous
    ├── StatementError
    │   ├── SqlParseError          the statement could not be parsed
    │   ├── UnsupportedStatementError  a statement not allowed here
    │   └── StatementTooLongError  longer than sql-gateway.statement.max-length
    ├── EngineUnavailableError     the engine is down or restarting (REST 503, Retry-After)
    ├── AuthenticationError        no or wrong credentials (REST 401, WWW-Authenticate)
    ├── PermissionDeniedError      a session, job or table of another user (REST 403)
    ├── CatalogError               missing catalog, database, table or function
    ├── ExecutionError             the statement failed while running (carries the
    │   │                          cause chain and Spark's error class)
    │   └── PlanError              a compiled plan that cannot be written, read or run
    └── EndpointError              endpoint discovery or start-up failed

``IllegalTransitionError`` (an :class:`AssertionError`) is not part of the tree:
an illegal operation-state transition is a bug, not a user error.
"""

from __future__ import annotations

__all__ = [
    "AuthenticationError",
    "CatalogError",
    "ConfigurationError",
    "EndpointError",
    "EngineUnavailableError",
    "ExecutionError",
    "FetchError",
    "GatewayError",
    "IllegalStateError",
    "IllegalTransitionError",
    "InvalidTokenError",
    "JavaNotFoundError",
    "OperationError",
    "OperationNotFoundError",
    "PermissionDeniedError",
    "PlanError",
    "SessionError",
    "SessionLimitError",
    "SessionNotFoundError",
    "SqlParseError",
    "StatementError",
    "StatementTooLongError",
    "UnsupportedStatementError",
]


class GatewayError(Exception):
    """Base of every error the gateway reports to a user."""


class ConfigurationError(GatewayError):
    """An option has a bad value, or an unknown key was given."""


class JavaNotFoundError(GatewayError):
    """No Java that Spark supports could be found."""


class SessionError(GatewayError):
    pass


class SessionNotFoundError(SessionError):
    pass


class SessionLimitError(SessionError):
    pass


class OperationError(GatewayError):
    pass


class OperationNotFoundError(OperationError):
    pass


class IllegalStateError(OperationError):
    pass


class FetchError(GatewayError):
    pass


class InvalidTokenError(FetchError):
    pass


class StatementError(GatewayError):
    pass


class SqlParseError(StatementError):
    pass


class UnsupportedStatementError(StatementError):
    pass


class StatementTooLongError(StatementError):
    """The statement is longer than ``sql-gateway.statement.max-length``; nothing parsed it."""


class EngineUnavailableError(GatewayError):
    """The engine is down or restarting; the same call succeeds once it is back."""

    def __init__(self, message: str, retry_after_s: int = 5) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class AuthenticationError(GatewayError):
    """The caller's credentials are missing or prove nothing. The message says which
    (never what was wrong with a password); ``schemes`` are the HTTP
    authentication schemes the gateway takes (``Basic``, ``Bearer``)."""

    def __init__(self, message: str, schemes: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.schemes = schemes


class PermissionDeniedError(GatewayError):
    """The caller may not touch this: a session, operation, job or materialized
    table of another user, for one who is not an admin."""


class CatalogError(GatewayError):
    pass


class EndpointError(GatewayError):
    pass


class ExecutionError(GatewayError):
    """A statement failed while it ran.

    ``causes`` is the cause chain, outermost first, as ``Class: message``
    strings; ``error_class`` is Spark's error class when Spark gave one.
    """

    def __init__(
        self,
        message: str,
        *,
        causes: tuple[str, ...] = (),
        error_class: str | None = None,
        sql_state: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.causes = causes
        self.error_class = error_class
        self.sql_state = sql_state

    @property
    def root_cause(self) -> str:
        return self.causes[-1] if self.causes else self.message


class PlanError(ExecutionError):
    """A compiled plan (COMPILE / EXECUTE / EXPLAIN PLAN) is missing, malformed,
    of an unknown version, or names what no longer resolves; the message names
    the node or field."""


class IllegalTransitionError(AssertionError):
    """An operation was moved along an edge its state machine does not have."""
