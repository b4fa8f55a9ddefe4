"""Flink statements the gateway parses but does not carry out yet."""

from __future__ import annotations

from typing import NoReturn

from sparkgate.api.errors import UnsupportedStatementError
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import CreateCatalog, LoadModule, Statement, UnloadModule

__all__ = ["not_yet"]

_NAMES: dict[type[Statement], str] = {
    CreateCatalog: "CREATE CATALOG",
    LoadModule: "LOAD MODULE",
    UnloadModule: "UNLOAD MODULE",
}


def not_yet(context: StatementContext, statement: Statement) -> NoReturn:
    name = _NAMES.get(type(statement), type(statement).__name__)
    raise UnsupportedStatementError(f"{name} is not supported by sparkgate yet: {statement.text}")
