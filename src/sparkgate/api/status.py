"""The operation state machine (FLIP-91), as data.

``TRANSITIONS`` is the whole machine: an operation moves only along these
edges, and only :meth:`Operation._transition` moves it. Terminal states keep
their results fetchable until the operation is closed.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from sparkgate.api.errors import IllegalTransitionError

__all__ = ["TRANSITIONS", "OperationStatus", "OperationType", "check_transition"]


class OperationStatus(enum.Enum):
    INITIALIZED = "INITIALIZED"
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    CANCELED = "CANCELED"
    CLOSED = "CLOSED"
    ERROR = "ERROR"
    TIMEOUT = "TIMEOUT"

    @property
    def is_terminal(self) -> bool:
        """No more work will be done (results may still be fetched)."""
        return self in _TERMINAL


_TERMINAL = frozenset(
    {
        OperationStatus.FINISHED,
        OperationStatus.CANCELED,
        OperationStatus.CLOSED,
        OperationStatus.ERROR,
        OperationStatus.TIMEOUT,
    }
)

_S = OperationStatus
# Flink's OperationStatus#isValidStatusTransition. FINISHED may still be
# cancelled or time out: a finished query can be streaming its result.
TRANSITIONS: Mapping[OperationStatus, frozenset[OperationStatus]] = {
    _S.INITIALIZED: frozenset({_S.PENDING, _S.CANCELED, _S.CLOSED, _S.TIMEOUT, _S.ERROR}),
    _S.PENDING: frozenset({_S.RUNNING, _S.CANCELED, _S.CLOSED, _S.TIMEOUT, _S.ERROR}),
    _S.RUNNING: frozenset({_S.FINISHED, _S.CANCELED, _S.CLOSED, _S.TIMEOUT, _S.ERROR}),
    _S.FINISHED: frozenset({_S.CANCELED, _S.CLOSED, _S.TIMEOUT, _S.ERROR}),
    _S.CANCELED: frozenset({_S.CLOSED}),
    _S.TIMEOUT: frozenset({_S.CLOSED}),
    _S.ERROR: frozenset({_S.CLOSED}),
    _S.CLOSED: frozenset(),
}


def check_transition(source: OperationStatus, target: OperationStatus) -> None:
    """Raise :class:`IllegalTransitionError` unless ``source -> target`` is an edge."""
    if target not in TRANSITIONS[source]:
        raise IllegalTransitionError(
            f"Operation status cannot move from {source.value} to {target.value}."
        )


class OperationType(enum.Enum):
    EXECUTE_STATEMENT = "EXECUTE_STATEMENT"
    GET_INFO = "GET_INFO"
    UNKNOWN = "UNKNOWN"
