"""The registry ``{statement type: handler}`` the dispatcher runs statements by.

A handler takes the :class:`~.context.StatementContext` and its typed
statement and returns the :class:`Execution` that produces the result. The
handler of a type is the one registered for it or, failing that, for its
nearest registered base class (a ``MetadataQuery`` is a ``SparkQuery``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from sparkgate.api.errors import UnsupportedStatementError
from sparkgate.service.operation.operation import Execution
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import Statement

__all__ = ["Handler", "Registry"]

S = TypeVar("S", bound=Statement)
Handler = Callable[[StatementContext, Any], Execution]


class Registry:
    """Handlers by statement type; :meth:`register` adds or replaces one."""

    def __init__(self, handlers: Mapping[type[Statement], Handler] | None = None) -> None:
        self._handlers: dict[type[Statement], Handler] = dict(handlers or {})

    def register(self, kind: type[S], handler: Callable[[StatementContext, S], Execution]) -> None:
        self._handlers[kind] = handler

    def copy(self) -> Registry:
        return Registry(self._handlers)

    def handler_for(self, statement: Statement) -> Handler:
        for kind in type(statement).__mro__:
            handler = self._handlers.get(kind)
            if handler is not None:
                return handler
        raise UnsupportedStatementError(
            f"No handler for {type(statement).__name__} statements: {statement.text}"
        )

    def run(self, context: StatementContext, statement: Statement) -> Execution:
        return self.handler_for(statement)(context, statement)
