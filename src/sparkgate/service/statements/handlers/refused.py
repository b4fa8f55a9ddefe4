"""Flink statement forms that have no meaning on Spark: refused, naming the
statement and why (never a parse error pointing at a keyword)."""

from __future__ import annotations

from typing import NoReturn

from sparkgate.api.errors import UnsupportedStatementError
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import Refused

__all__ = ["refuse"]


def refuse(_context: StatementContext, statement: Refused) -> NoReturn:
    raise UnsupportedStatementError(
        f"{statement.form} is not supported on Spark: {statement.reason}."
    )
