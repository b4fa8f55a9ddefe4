"""The paths a statement of any kind names, for confinement (``spark.confinement``).

Spark SQL's come from Spark's plans (``plans.statement_paths``) and the
``path`` of its Flink OPTIONS hints; the gateway's own statements carry theirs
in their fields: a connector table's or a CREATE TABLE AS's ``path`` option, a
materialized table's query and options, the jar of ``ADD JAR``, the file of
``COMPILE`` / ``EXECUTE`` / ``EXPLAIN PLAN``, and the INSERTs a compiled plan
holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sparkgate.api.session import RESOURCE_SCHEME
from sparkgate.service.spark.confinement import PathUse
from sparkgate.service.spark.plans import statement_paths
from sparkgate.service.statements.kinds import (
    AddJar,
    AlterMaterializedTable,
    CompilePlan,
    ConnectorTableCreate,
    CreateMaterializedTable,
    CreateView,
    Dml,
    ExecutePlan,
    ExecuteStatementSet,
    Explain,
    ExplainPlan,
    FunctionDefinition,
    SparkCommand,
    SparkQuery,
    Statement,
    TableAsSelect,
)
from sparkgate.sql.dynamic_options import without_hints

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["paths_of"]


def _option_path(options: Mapping[str, str], use: str) -> tuple[PathUse, ...]:
    path = options.get("path")
    return (PathUse(path, use),) if path else ()


def _plan_file(uri: str) -> tuple[PathUse, ...]:
    # A session resource is the client's own file, put in the session: not the host's.
    if uri.partition(":")[0] == RESOURCE_SCHEME:
        return ()
    return (PathUse(uri, "a compiled plan file"),)


def paths_of(spark: SparkSession, statement: Statement) -> tuple[PathUse, ...]:
    """Every path ``statement`` names."""
    if isinstance(statement, TableAsSelect):
        return statement_paths(spark, statement.spark_text) + _option_path(
            statement.options, "a table's files"
        )
    if isinstance(statement, SparkQuery | SparkCommand | Dml):
        # Spark's parser sees the text without Flink's OPTIONS hints; a hint's path
        # is the files a connector table reads or writes in its stead.
        text, hints = without_hints(statement.text)
        return statement_paths(spark, text) + tuple(
            use
            for hint in hints.values()
            for use in _option_path(hint.options, "a table's files (an OPTIONS hint)")
        )
    if isinstance(statement, ConnectorTableCreate):
        return _option_path(statement.definition.options, "a connector table's files")
    if isinstance(statement, CreateMaterializedTable | AlterMaterializedTable):
        found = _option_path(statement.options, "a materialized table's files")
        return found + (statement_paths(spark, statement.query) if statement.query else ())
    if isinstance(statement, AddJar):
        return (PathUse(statement.path, "ADD JAR"),)
    if isinstance(statement, CompilePlan):
        found = _plan_file(statement.uri)
        for insert in statement.inserts:
            found += paths_of(spark, insert)
        return found
    if isinstance(statement, ExecutePlan | ExplainPlan):
        return _plan_file(statement.uri)
    if isinstance(statement, CreateView):
        return statement_paths(spark, statement.query)
    if isinstance(statement, FunctionDefinition):
        return tuple(PathUse(jar, "a function's jar") for jar in statement.jars)
    if isinstance(statement, Explain | ExecuteStatementSet):
        return tuple(use for inner in inner_statements(statement) for use in paths_of(spark, inner))
    return ()


def inner_statements(statement: Statement) -> tuple[Statement, ...]:
    """The statements an EXPLAIN or a statement set holds (checked as themselves)."""
    if isinstance(statement, Explain):
        return (statement.statement,)
    if isinstance(statement, ExecuteStatementSet):
        return statement.statements
    return ()
