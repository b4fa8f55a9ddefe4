"""CREATE / ALTER / DROP / SHOW [CREATE] MATERIALIZED TABLE(S) (FLIP-435).

The work is the gateway's materialized-table manager's
(:mod:`sparkgate.service.materialized.manager`); these handlers read the
statement, call it and answer in the session protocol's shape.
"""

from __future__ import annotations

from sparkgate.api.errors import ExecutionError
from sparkgate.service.catalog import quote_name
from sparkgate.service.materialized.definition import MaterializedTable
from sparkgate.service.materialized.manager import MaterializedTableManager, Refresh
from sparkgate.service.operation.operation import Execution
from sparkgate.service.session.session import may_act_on
from sparkgate.service.spark.jobs import invalid, to_execution_error
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import (
    AlterMaterializedTable,
    CreateMaterializedTable,
    DropMaterializedTable,
    ShowCreateMaterializedTable,
    ShowMaterializedTables,
)
from sparkgate.service.statements.metadata import (
    flink_expanded,
    flink_literal,
    flink_path,
    flink_shapes,
)
from sparkgate.service.statements.results import job_result, ok_result, table_result
from sparkgate.sql.quoting import quote_identifier
from sparkgate.sql.secrets import masked_options

__all__ = [
    "alter_materialized_table",
    "create_materialized_table",
    "drop_materialized_table",
    "show_create_materialized_table",
    "show_create_text",
    "show_materialized_tables",
]


def _manager(context: StatementContext) -> MaterializedTableManager:
    manager = context.state.materialized
    if manager is None:
        raise ExecutionError("Materialized tables are not available in this gateway")
    return manager


def _guarded(error: BaseException) -> ExecutionError:
    return to_execution_error(error)


def _owned(context: StatementContext, name: tuple[str, ...]) -> MaterializedTable | None:
    """The table ``name`` names, once its owner (or an admin) is the one asking."""
    manager = _manager(context)
    spark = context.session.spark
    try:
        existing = manager.read(spark, manager.identifier(spark, name))
    except Exception as exc:
        raise _guarded(exc) from exc
    if existing is not None:
        may_act_on(context.session, existing.owner, "materialized table", existing.name)
    return existing


def _owner(context: StatementContext) -> str | None:
    principal = context.session.environment.principal
    return principal.name if principal is not None and principal.authenticated else None


def create_materialized_table(
    context: StatementContext, statement: CreateMaterializedTable
) -> Execution:
    manager = _manager(context)
    spark = context.session.spark
    existing = _owned(context, statement.name) if statement.or_alter else None
    try:
        if statement.or_alter and existing is not None:
            mode = statement.refresh_mode
            if mode is not None and mode != existing.mode.value:
                raise invalid(
                    f"Materialized table {existing.name} is refreshed {existing.mode.value}: "
                    "CREATE OR ALTER cannot change its refresh mode (drop and create it)"
                )
            if statement.query != existing.query:
                manager.alter_query(spark, statement.name, statement.query)
            if statement.freshness is not None:
                manager.alter_freshness(spark, statement.name, statement.freshness)
            return ok_result()
        manager.create(
            spark,
            statement.name,
            statement.query,
            primary_key=statement.primary_key,
            partition_keys=statement.partition_keys,
            comment=statement.comment,
            options=statement.options,
            freshness=statement.freshness,
            refresh_mode=statement.refresh_mode,
            session_config=context.state.properties,
            owner=_owner(context),
        )
    except Exception as exc:
        raise _guarded(exc) from exc
    return ok_result()


def alter_materialized_table(
    context: StatementContext, statement: AlterMaterializedTable
) -> Execution:
    manager = _manager(context)
    spark = context.session.spark
    _owned(context, statement.name)  # before the try: a refusal stays a refusal (403)
    try:
        if statement.action == "SUSPEND":
            manager.suspend(spark, statement.name)
        elif statement.action == "RESUME":
            manager.resume(spark, statement.name, statement.options)
        elif statement.action == "AS":
            assert statement.query is not None
            manager.alter_query(spark, statement.name, statement.query)
        else:
            runtime = context.runtime
            job = manager.refresh(
                spark,
                statement.name,
                Refresh(static_partitions=dict(statement.partition)),
                wait=runtime.dml_sync and not runtime.streaming,
            )
            return job_result(job.id)
    except Exception as exc:
        raise _guarded(exc) from exc
    return ok_result()


def drop_materialized_table(
    context: StatementContext, statement: DropMaterializedTable
) -> Execution:
    _owned(context, statement.name)
    try:
        _manager(context).drop(context.session.spark, statement.name, statement.if_exists)
    except Exception as exc:
        raise _guarded(exc) from exc
    return ok_result()


def show_materialized_tables(
    context: StatementContext, statement: ShowMaterializedTables
) -> Execution:
    try:
        names = _manager(context).list(context.session.spark, statement.database)
    except Exception as exc:
        raise _guarded(exc) from exc
    like = statement.like
    names = [n for n in names if like is None or like.matches(n)]
    column = "table name" if flink_shapes(context.session) else "tableName"
    return table_result([column], [[name] for name in names])


def show_create_text(
    table: MaterializedTable,
    columns: list[tuple[str, str]],
    *,
    flink: bool = True,
    query: str | None = None,
) -> str:
    """``CREATE MATERIALIZED TABLE`` as SHOW CREATE prints it: as Flink's does with
    ``flink`` (Flink's names of the first catalog and database, no columns, which
    the query gives, and ``query``, the query expanded, when given); else with
    Spark's names and the columns."""
    lines = [] if flink else [f"  {quote_identifier(n)} {type_text}" for n, type_text in columns]
    if table.primary_key:
        listed = ", ".join(quote_identifier(k) for k in table.primary_key)
        constraint = quote_identifier("PK_" + "_".join(table.primary_key))
        lines.append(f"  CONSTRAINT {constraint} PRIMARY KEY ({listed}) NOT ENFORCED")
    name = quote_name(flink_path(table.identifier)) if flink else table.name
    text = f"CREATE MATERIALIZED TABLE {name}\n"
    if lines:
        text = f"CREATE MATERIALIZED TABLE {name} (\n" + ",\n".join(lines) + "\n)\n"
    if table.comment:
        text += f"COMMENT {flink_literal(table.comment)}\n"
    if table.partition_keys:
        text += f"PARTITIONED BY ({', '.join(quote_identifier(k) for k in table.partition_keys)})\n"
    if table.options:
        text += "WITH (\n"
        text += ",\n".join(
            f"  {flink_literal(k)} = {flink_literal(v)}"
            for k, v in masked_options(table.options).items()
        )
        text += "\n)\n"
    text += f"FRESHNESS = {table.freshness}\n"
    text += f"REFRESH_MODE = {table.mode.value}\n"
    return text + f"AS {query or table.query}\n"


def show_create_materialized_table(
    context: StatementContext, statement: ShowCreateMaterializedTable
) -> Execution:
    spark = context.session.spark
    try:
        table = _manager(context).require(spark, statement.name)
        assert table is not None
        fields = spark.table(table.name).schema.fields
    except Exception as exc:
        raise _guarded(exc) from exc
    from sparkgate.service.spark.types import to_logical_type

    columns = [(f.name, str(to_logical_type(f.dataType)).upper()) for f in fields]
    flink = flink_shapes(context.session)
    column = "result" if flink else "createtab_stmt"
    home = (table.identifier[0], table.identifier[1])
    query = flink_expanded(context.session, table.query, home) if flink else None
    text = show_create_text(table, columns, flink=flink, query=query)
    return table_result([column], [[text]])
