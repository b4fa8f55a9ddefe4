"""Module statements: LOAD MODULE, UNLOAD MODULE, USE MODULES (the session's
:class:`~sparkgate.service.modules.SessionModules`; SHOW [FULL] MODULES is with
the other listings)."""

from __future__ import annotations

from sparkgate.service.modules import FunctionSetter, ModuleError
from sparkgate.service.operation.operation import Execution
from sparkgate.service.spark.jobs import invalid, to_execution_error
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import LoadModule, UnloadModule, UseModules
from sparkgate.service.statements.results import ok_result
from sparkgate.sql.quoting import quote_identifier as quote
from sparkgate.sql.quoting import quote_string

__all__ = ["load_module", "unload_module", "use_modules"]


def _function_setter(context: StatementContext) -> FunctionSetter:
    spark = context.session.spark

    def set_function(name: str, implementation: str | None) -> None:
        if implementation is None:
            text = f"DROP TEMPORARY FUNCTION IF EXISTS {quote(name)}"
        else:
            text = (
                f"CREATE OR REPLACE TEMPORARY FUNCTION {quote(name)} "
                f"AS {quote_string(implementation)}"
            )
        try:
            spark.sql(text)
        except Exception as exc:
            raise to_execution_error(exc) from exc

    return set_function


def load_module(context: StatementContext, statement: LoadModule) -> Execution:
    state = context.state
    try:
        state.modules.load(
            statement.name, statement.options, state.module_factories, _function_setter(context)
        )
    except ModuleError as exc:
        raise invalid(str(exc)) from None
    return ok_result()


def unload_module(context: StatementContext, statement: UnloadModule) -> Execution:
    try:
        context.state.modules.unload(statement.name, _function_setter(context))
    except ModuleError as exc:
        raise invalid(str(exc)) from None
    return ok_result()


def use_modules(context: StatementContext, statement: UseModules) -> Execution:
    try:
        context.state.modules.use(list(statement.names), _function_setter(context))
    except ModuleError as exc:
        raise invalid(str(exc)) from None
    return ok_result()
