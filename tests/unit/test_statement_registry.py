"""Adding a statement kind: a dataclass, a handler and one registry line.

The dispatcher finds the handler by the statement's type (or its nearest
registered base class); a kind without a handler is refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

import pytest

from sparkgate.api.errors import UnsupportedStatementError
from sparkgate.service.operation.operation import Execution
from sparkgate.service.session.context import SessionContext
from sparkgate.service.spark.host_access import HOST_STATEMENTS
from sparkgate.service.statements import dispatch, handlers, kinds
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.results import table_result

__all__: list[str] = []


@dataclass(frozen=True)
class ShowPlans(kinds.Statement):
    """A kind the next issues add: its own fields only."""

    like: str | None


@dataclass(frozen=True)
class ShowFullPlans(ShowPlans):
    pass


def show_plans(context: StatementContext, statement: ShowPlans) -> Execution:
    plans = ["daily", "hourly"]
    matching = [p for p in plans if statement.like is None or p.startswith(statement.like)]
    return table_result(["plan name"], [[p] for p in matching])


def _context(statement_set: list[Any] | None = None) -> StatementContext:
    state = SessionContext(jobs=cast(Any, None), statement_set=statement_set)
    # Nothing refused: every host statement allowed, no path confinement.
    session = SimpleNamespace(
        context=state,
        get=lambda key: None,
        host_statements=frozenset(HOST_STATEMENTS),
        path_roots=None,
    )
    return StatementContext(cast(Any, session), cast(Any, None))


def _rows(execution: Execution) -> list[list[Any]]:
    [(batch, _)] = list(execution.batches)
    return [list(row.values()) for row in batch.to_pylist()]


def test_a_new_kind_runs_once_its_handler_is_registered() -> None:
    registry = handlers.REGISTRY.copy()
    with pytest.raises(UnsupportedStatementError, match="No handler for ShowPlans"):
        dispatch.execute(_context(), ShowPlans("SHOW PLANS", None), registry)
    registry.register(ShowPlans, show_plans)
    execution = dispatch.execute(_context(), ShowPlans("SHOW PLANS LIKE 'd'", "d"), registry)
    assert _rows(execution) == [["daily"]]
    # A subclass without its own line runs its base class's handler.
    full = dispatch.execute(_context(), ShowFullPlans("SHOW FULL PLANS", None), registry)
    assert _rows(full) == [["daily"], ["hourly"]]
    # The shared registry is untouched.
    with pytest.raises(UnsupportedStatementError):
        handlers.REGISTRY.handler_for(ShowPlans("SHOW PLANS", None))


def test_every_parsed_kind_has_a_handler() -> None:
    for name in kinds.__all__:
        kind = getattr(kinds, name)
        if kind is kinds.Statement or not issubclass(kind, kinds.Statement):
            continue
        handler = handlers.REGISTRY._handlers.get(kind)
        assert handler is not None or any(
            base in handlers.REGISTRY._handlers
            for base in kind.__mro__[1:]
            if base is not kinds.Statement
        ), name


def test_statement_set_in_progress_takes_inserts_only() -> None:
    buffered: list[Any] = []
    context = _context(statement_set=buffered)
    insert = kinds.Dml("INSERT INTO t VALUES (1)", "INSERT")
    dispatch.execute(context, insert)
    assert buffered == [insert]
    with pytest.raises(UnsupportedStatementError, match="Only INSERT statements"):
        dispatch.execute(context, kinds.ShowJobs("SHOW JOBS"))
