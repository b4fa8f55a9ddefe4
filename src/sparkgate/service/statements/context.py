"""What a handler gets besides its statement: the session, the operation and
the options this one statement runs with."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING

from sparkgate.service.session.context import SessionContext
from sparkgate.service.streaming.strategy import RuntimeOptions

if TYPE_CHECKING:
    from sparkgate.service.operation.operation import Operation
    from sparkgate.service.session.session import Session

__all__ = ["StatementContext"]


def _no_overlay() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass
class StatementContext:
    """One execution of one statement.

    ``overlay`` holds the statement's own options (REST ``executionConfig``,
    HiveServer2 ``confOverlay``); they win over the session's for this
    statement only, for the gateway's options as for Spark's.
    """

    session: Session
    operation: Operation
    overlay: Mapping[str, str] = field(default_factory=_no_overlay)

    @property
    def state(self) -> SessionContext:
        """The session's state: configuration, statement set, jobs, ..."""
        return self.session.context

    def get(self, key: str) -> str | None:
        """An option's value for this statement: its own, else the session's."""
        if key in self.overlay:
            return self.overlay[key]
        return self.session.get(key)

    def options(self) -> dict[str, str]:
        """Every option of this statement: the session's configuration with the
        statement's own over it."""
        merged = self.session.config()
        merged.update(self.overlay)
        return merged

    @cached_property
    def runtime(self) -> RuntimeOptions:
        return RuntimeOptions(self.get, self.options)
