"""SHOW / DESCRIBE forms: in the session protocol's shape, else as Spark answers.

Each form's shaping function (:mod:`sparkgate.service.statements.metadata`)
returns None where Spark's own answer is the right one for the session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from sparkgate.service.operation.operation import Execution
from sparkgate.service.statements import function_info, metadata
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.handlers.query import run_query
from sparkgate.service.statements.kinds import MetadataQuery

if TYPE_CHECKING:
    from sparkgate.service.session.session import Session

__all__ = [
    "describe_database",
    "describe_function",
    "describe_table",
    "show_catalogs",
    "show_create_table",
    "show_current_catalog",
    "show_current_database",
    "show_databases",
    "show_functions",
    "show_modules",
    "show_procedures",
    "show_tables",
]

M = TypeVar("M", bound=MetadataQuery)


def _or_spark(
    shape: Callable[[Session, M], Execution | None],
) -> Callable[[StatementContext, M], Execution]:
    def handle(context: StatementContext, statement: M) -> Execution:
        shaped = shape(context.session, statement)
        return shaped if shaped is not None else run_query(context, statement)

    handle.__name__ = shape.__name__
    handle.__doc__ = shape.__doc__
    return handle


show_current_catalog = _or_spark(metadata.show_current_catalog)
show_current_database = _or_spark(metadata.show_current_database)
show_modules = _or_spark(metadata.show_modules)
show_catalogs = _or_spark(metadata.show_catalogs)
show_databases = _or_spark(metadata.show_databases)
show_functions = _or_spark(metadata.show_functions)
show_procedures = _or_spark(metadata.show_procedures)
show_tables = _or_spark(metadata.show_tables)
show_create_table = _or_spark(metadata.show_create_table)
describe_table = _or_spark(metadata.describe_table)
describe_database = _or_spark(metadata.describe_database)
describe_function = _or_spark(function_info.describe_function)
