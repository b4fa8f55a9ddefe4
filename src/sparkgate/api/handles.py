"""Handles that name sessions and operations across every endpoint.

A handle is an opaque random UUID: it is the only thing a client holds, so it
must be unguessable. Parsing a malformed handle raises :class:`ValueError`;
an endpoint turns that into its "bad request" status.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

__all__ = ["OperationHandle", "SessionHandle"]


def _parse_uuid(kind: str, text: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(text))
    except (ValueError, AttributeError, TypeError) as exc:
        raise ValueError(f"Invalid {kind} handle {text!r}: not a UUID.") from exc


@dataclass(frozen=True, slots=True)
class SessionHandle:
    identifier: uuid.UUID

    @classmethod
    def create(cls) -> SessionHandle:
        return cls(uuid.uuid4())

    @classmethod
    def parse(cls, text: str) -> SessionHandle:
        return cls(_parse_uuid("session", text))

    def __str__(self) -> str:
        return str(self.identifier)


@dataclass(frozen=True, slots=True)
class OperationHandle:
    identifier: uuid.UUID

    @classmethod
    def create(cls) -> OperationHandle:
        return cls(uuid.uuid4())

    @classmethod
    def parse(cls, text: str) -> OperationHandle:
        return cls(_parse_uuid("operation", text))

    def __str__(self) -> str:
        return str(self.identifier)
