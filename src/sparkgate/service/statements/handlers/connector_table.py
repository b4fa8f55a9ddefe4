"""Flink's connector DDL: CREATE [TEMPORARY] TABLE ... WITH ('connector' = ...)
and DROP TEMPORARY TABLE."""

from __future__ import annotations

from sparkgate.service.operation.operation import Execution
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import ConnectorTableCreate, DropTemporaryTable
from sparkgate.service.statements.results import ok_result
from sparkgate.service.streaming import strategy

__all__ = ["create", "drop_temporary"]


def create(context: StatementContext, statement: ConnectorTableCreate) -> Execution:
    strategy.create_connector_table(context.session, statement.definition)
    return ok_result()


def drop_temporary(context: StatementContext, statement: DropTemporaryTable) -> Execution:
    strategy.drop_temporary_table(context.session, statement.name, statement.if_exists)
    return ok_result()
