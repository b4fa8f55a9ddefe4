"""CREATE TABLE AS / REPLACE TABLE AS: a job that creates and writes a table.

The table is Spark's (``USING ...``, or the current catalog's default
format when Flink's form names no connector; any catalog: the built-in one,
a JDBC catalog, ...) or a Flink connector table (``WITH ('connector' =
...)``). Its columns are the query's. The job's own durable hook
(:mod:`sparkgate.service.statements.table_as`) creates it, and undoes what
the job made if it fails, is canceled or the gateway dies under it.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import TYPE_CHECKING

from sparkgate.api.catalog import quote_identifier
from sparkgate.api.errors import ExecutionError, UnsupportedStatementError
from sparkgate.service.catalog import quote_name
from sparkgate.service.catalogs.spark import qualified_name
from sparkgate.service.operation.operation import Execution
from sparkgate.service.spark.jobs import invalid, to_execution_error
from sparkgate.service.spark.plans import parse_plan, parse_statement
from sparkgate.service.spark.types import to_logical_type
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import TableAsSelect
from sparkgate.service.statements.results import job_result, ok_result
from sparkgate.service.statements.table_as import (
    TableAsSelectHook,
    database_exists,
    same_directory,
    sibling_directory,
    staging_directory,
    staging_name,
    table_exists,
)
from sparkgate.service.streaming.connectors import spark_type
from sparkgate.service.streaming.ddl import Column, Schema, TableDefinition
from sparkgate.service.streaming.resolve import lookup
from sparkgate.service.streaming.strategy import (
    InsertPlan,
    create_connector_table,
    invalidate_tables,
    query_frame,
    submit,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


__all__ = ["create_table_as"]

# Connectors a CTAS may write: the sinks.
_SINKS = ("filesystem", "print", "blackhole")


def _replaces_directory(spark: SparkSession, target: tuple[str, ...], path: str) -> bool:
    """Whether ``path`` is the directory of the ``target`` a REPLACE replaces."""
    old = lookup(spark, target)
    if old is None or old.connector != "filesystem" or old.temporary:
        return False
    return same_directory(spark, old.options["path"], path)


def create_table_as(context: StatementContext, statement: TableAsSelect) -> Execution:
    session = context.session
    spark = session.spark
    runtime = context.runtime
    parsed = parse_statement(spark, statement.spark_text)
    if parsed is None:
        try:
            parse_plan(spark, statement.spark_text)  # raises Spark's own parse error
        except Exception as exc:
            raise to_execution_error(exc) from exc
    ctas = parsed.table_as_select if parsed is not None else None
    if ctas is None:
        raise UnsupportedStatementError(
            f"Not a CREATE TABLE AS or REPLACE TABLE AS Spark can run: {statement.text}"
        )
    target = qualified_name(spark, ctas.name)
    shown = ".".join(target)
    if not database_exists(spark, target[:-1]):
        raise invalid(
            f"Database {'.'.join(target[:-1])} does not exist.",
            error_class="SCHEMA_NOT_FOUND",
            sql_state="42704",
        )
    exists = table_exists(spark, target)
    if exists and not statement.replace:
        if statement.if_not_exists:
            return ok_result()
        raise invalid(
            f"Table {shown} already exists.",
            error_class="TABLE_OR_VIEW_ALREADY_EXISTS",
            sql_state="42P07",
        )
    if statement.replace and not statement.create and not exists:
        raise invalid(
            f"Table {shown} does not exist: REPLACE TABLE AS replaces a table "
            "(CREATE OR REPLACE TABLE AS creates it when missing).",
            error_class="TABLE_OR_VIEW_NOT_FOUND",
            sql_state="42P01",
        )
    connector = statement.options.get("connector")
    if statement.options and connector not in _SINKS:
        what = f"connector '{connector}'" if connector else "WITH options without 'connector'"
        raise invalid(
            f"CREATE TABLE AS cannot write a table of {what}: it writes the sink connectors "
            f"{', '.join(_SINKS)}, or a table of the catalog (no WITH clause)."
        )
    query = statement.spark_text[ctas.query_start :].rstrip().rstrip(";").rstrip()
    frame, resolution = query_frame(session, query, runtime)
    declared: tuple[Column, ...] = ()
    if statement.schema is not None:
        if connector is None and (
            statement.schema.watermark is not None
            or statement.schema.primary_key
            or not all(c.is_physical for c in statement.schema.columns)
        ):
            raise UnsupportedStatementError(
                "Computed and metadata columns, WATERMARK and PRIMARY KEY in CREATE TABLE AS "
                "need a connector table (WITH ('connector' = ...))"
            )
        frame, declared = _shaped(frame, statement.schema)
    streaming = runtime.streaming or frame.isStreaming
    # A never-ending job has no end to publish at: streaming CTAS is not atomic,
    # and a streaming REPLACE swaps the tables as the job starts.
    atomic = not streaming and (runtime.ctas_atomic or exists)
    token = uuid.uuid4().hex[:16]

    sink: TableDefinition | None = None
    staging = staging_name(target, token)
    target_path = statement.options.get("path") if connector == "filesystem" else None
    staging_path: str | None = None
    backup_path: str | None = None
    if exists and target_path is not None and _replaces_directory(spark, target, target_path):
        backup_path = sibling_directory(spark, target_path, token, "replaced")
    finish = None
    if connector is not None:
        final = _sink_definition(ctas.name, frame, declared, statement)
        sink = final
        if atomic:
            # Rows go to a staging table (and directory) the job's last step publishes.
            if target_path is not None:
                staging_path = (
                    sibling_directory(spark, target_path, token)
                    if backup_path is not None
                    else staging_directory(spark, target_path, token)
                )
            options = dict(final.options)
            if staging_path is not None:
                options["path"] = staging_path
            sink = dataclasses.replace(final, name=staging, options=options)

            def finish() -> None:
                create_connector_table(session, final)

        def create(name: tuple[str, ...]) -> None:
            assert sink is not None
            create_connector_table(session, sink)

    else:
        columns = frame._jdf.schema().asNullable().toDDL()
        clauses = statement.clauses

        def create(name: tuple[str, ...]) -> None:
            spark.sql(f"CREATE TABLE {quote_name(name)} ({columns}) {clauses}").collect()
            invalidate_tables()

    hook = TableAsSelectHook(
        spark,
        token,
        target,
        atomic=atomic,
        replacing=exists,
        create=create,
        finish=finish,
        staging_path=staging_path,
        target_path=target_path,
        backup_path=backup_path,
    )
    written = sink.name if sink is not None else hook.written
    plan = InsertPlan(
        statement.text, frame, written, sink=sink, resolution=resolution, by_name=True
    )
    try:
        job_id = submit(
            session,
            context.operation,
            [plan],
            statement.text,
            runtime,
            hooks=[hook],
            last_step=hook.publish,
        )
    finally:
        invalidate_tables()
    if streaming and exists:
        hook.settle()  # the job runs: the replaced table goes
    return job_result(job_id)


def _shaped(frame: DataFrame, schema: Schema) -> tuple[DataFrame, tuple[Column, ...]]:
    """The query's rows in the table's columns (FLIP-463), and the new columns.

    Columns the query lacks come first (NULL in every row written), then the
    query's, each cast to the type the column list gives it; ``(c, b, a)``
    only reorders the query's columns.
    """
    fields = {f.name.lower(): f.name for f in frame.schema.fields}
    if schema.names_only:
        names = [c.name for c in schema.columns]
        if sorted(n.lower() for n in names) != sorted(fields):
            raise ExecutionError(
                f"The column list ({', '.join(names)}) must name each of the query's columns "
                f"({', '.join(fields.values())}) once"
            )
        return frame.select(*(quote_identifier(fields[n.lower()]) for n in names)), ()
    by_name = {c.name.lower(): c for c in schema.columns}
    for name in fields:
        column = by_name.get(name)
        if column is not None and not column.is_physical:
            raise ExecutionError(
                f"Column {column.name} is the query's: it cannot be computed or metadata"
            )
    new = tuple(c for c in schema.columns if c.name.lower() not in fields)
    exprs = [
        f"CAST(NULL AS {spark_type(c.type or '')}) AS {quote_identifier(c.name)}"
        for c in new
        if c.is_physical
    ]
    for name, original in fields.items():
        column = by_name.get(name)
        if column is not None and column.type:
            exprs.append(
                f"CAST({quote_identifier(original)} AS {spark_type(column.type)}) "
                f"AS {quote_identifier(column.name)}"
            )
        else:
            exprs.append(quote_identifier(original))
    try:
        return frame.selectExpr(*exprs), new
    except Exception as exc:
        raise to_execution_error(exc) from exc


def _sink_definition(
    name: tuple[str, ...],
    frame: DataFrame,
    declared: tuple[Column, ...],
    statement: TableAsSelect,
) -> TableDefinition:
    """The connector table: the new columns (computed and metadata ones too), then
    the query's, with the column list's watermark and primary key."""
    physical = {c.name.lower() for c in declared if c.is_physical}
    columns = [*declared] + [
        Column(field.name, type=str(to_logical_type(field.dataType)))
        for field in frame.schema.fields
        if field.name.lower() not in physical
    ]
    schema = statement.schema
    return TableDefinition(
        name=name,
        columns=tuple(columns),
        options=dict(statement.options),
        watermark=schema.watermark if schema is not None else None,
        comment=statement.comment,
        primary_key=schema.primary_key if schema is not None else (),
        partition_keys=statement.partition_keys,
        constraint=schema.constraint if schema is not None else None,
    )
