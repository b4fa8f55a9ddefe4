"""The handlers of the statement kinds, one small module per noun, and the
registry that maps each kind to its handler.

Adding a statement kind: a dataclass in ``kinds.py``, its parsing in
``parser.py``, a handler module here and one line in :data:`REGISTRY`
(docs/statements.md, "Adding a statement kind").
"""

from __future__ import annotations

from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.handlers import (
    catalog,
    command,
    config,
    connector_table,
    database,
    dml,
    explain,
    function,
    jars,
    jobs,
    materialized,
    metadata,
    module,
    plan,
    query,
    refused,
    statement_set,
    table_as,
    view,
)
from sparkgate.service.statements.registry import Registry

__all__ = ["REGISTRY"]

REGISTRY = Registry(
    {
        k.SparkQuery: query.run_query,
        k.ShowCurrentCatalog: metadata.show_current_catalog,
        k.ShowCurrentDatabase: metadata.show_current_database,
        k.ShowModules: metadata.show_modules,
        k.ShowCatalogs: metadata.show_catalogs,
        k.ShowDatabases: metadata.show_databases,
        k.ShowFunctions: metadata.show_functions,
        k.ShowProcedures: metadata.show_procedures,
        k.ShowTables: metadata.show_tables,
        k.ShowCreateTable: metadata.show_create_table,
        k.DescribeTable: metadata.describe_table,
        k.DescribeDatabase: metadata.describe_database,
        k.DescribeFunction: metadata.describe_function,
        k.SparkCommand: command.run_command,
        k.Dml: dml.run_dml,
        k.TableAsSelect: table_as.create_table_as,
        k.Set: config.set_option,
        k.ShowConfig: config.show_config,
        k.Reset: config.reset,
        k.AddJar: jars.add_jar,
        k.RemoveJar: jars.remove_jar,
        k.ShowJars: jars.show_jars,
        k.Use: catalog.use,
        k.CreateCatalog: catalog.create_catalog,
        k.AlterCatalog: catalog.alter_catalog,
        k.DropCatalog: catalog.drop_catalog,
        k.DescribeCatalog: catalog.describe_catalog,
        k.ShowCreateCatalog: catalog.show_create_catalog,
        k.LoadModule: module.load_module,
        k.UnloadModule: module.unload_module,
        k.UseModules: module.use_modules,
        k.ConnectorTableCreate: connector_table.create,
        k.DropTemporaryTable: connector_table.drop_temporary,
        k.AlterTable: connector_table.alter,
        k.Explain: explain.explain,
        k.FunctionDefinition: function.define_function,
        k.DropFunction: function.drop_function,
        k.Refused: refused.refuse,
        k.CreateView: view.create_view,
        k.DropView: view.drop_view,
        k.CreateDatabase: database.create_database,
        k.AlterDatabase: database.alter_database,
        k.DropDatabase: database.drop_database,
        k.BeginStatementSet: statement_set.begin,
        k.EndStatementSet: statement_set.end,
        k.ExecuteStatementSet: statement_set.execute,
        k.CreateMaterializedTable: materialized.create_materialized_table,
        k.AlterMaterializedTable: materialized.alter_materialized_table,
        k.DropMaterializedTable: materialized.drop_materialized_table,
        k.ShowMaterializedTables: materialized.show_materialized_tables,
        k.ShowCreateMaterializedTable: materialized.show_create_materialized_table,
        k.CompilePlan: plan.compile_plan,
        k.ExecutePlan: plan.execute_plan,
        k.ExplainPlan: plan.explain_plan,
        k.ShowJobs: jobs.show_jobs,
        k.DescribeJob: jobs.describe_job,
        k.StopJob: jobs.stop_job,
    }
)
