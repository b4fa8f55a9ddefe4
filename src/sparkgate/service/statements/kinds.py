"""The typed statements: one frozen dataclass per kind, each with exactly its fields.

:func:`~sparkgate.service.statements.parser.parse_statement` turns a
statement's text into one of these once; the registry picks the handler by
its type (docs/statements.md, "Adding a statement kind"). ``text`` is the
statement as written, without comments around it or a trailing ``;``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from sparkgate.service.materialized.definition import Freshness
from sparkgate.sql.quoting import quote_identifier, quote_string

if TYPE_CHECKING:
    from sparkgate.service.streaming.alter import TableAlteration
    from sparkgate.service.streaming.ddl import Schema, TableDefinition, TableLike

__all__ = [
    "AddJar",
    "AlterCatalog",
    "AlterDatabase",
    "AlterMaterializedTable",
    "AlterTable",
    "BeginStatementSet",
    "CompilePlan",
    "ConnectorTableCreate",
    "CreateCatalog",
    "CreateDatabase",
    "CreateMaterializedTable",
    "CreateView",
    "DescribeCatalog",
    "DescribeDatabase",
    "DescribeFunction",
    "DescribeJob",
    "DescribeTable",
    "Dml",
    "DropCatalog",
    "DropDatabase",
    "DropFunction",
    "DropMaterializedTable",
    "DropTemporaryTable",
    "DropView",
    "EndStatementSet",
    "ExecutePlan",
    "ExecuteStatementSet",
    "Explain",
    "ExplainPlan",
    "Freshness",
    "FunctionDefinition",
    "LikePattern",
    "LoadModule",
    "MetadataQuery",
    "Refused",
    "RemoveJar",
    "Reset",
    "Set",
    "ShowCatalogs",
    "ShowConfig",
    "ShowCreateCatalog",
    "ShowCreateMaterializedTable",
    "ShowCreateTable",
    "ShowCurrentCatalog",
    "ShowCurrentDatabase",
    "ShowDatabases",
    "ShowFunctions",
    "ShowJars",
    "ShowJobs",
    "ShowMaterializedTables",
    "ShowModules",
    "ShowProcedures",
    "ShowTables",
    "SparkCommand",
    "SparkQuery",
    "SparkSet",
    "Statement",
    "StopJob",
    "TableAsSelect",
    "UnloadModule",
    "Use",
    "UseModules",
]


def _no_options() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Statement:
    """What every statement has: its text."""

    text: str

    @property
    def is_query(self) -> bool:
        """Spark returns rows for it."""
        return False

    @property
    def allowed_in_configure_session(self) -> bool:
        """FLIP-91: SET/RESET/CREATE/DROP/ALTER/USE/ADD JAR/REMOVE JAR/LOAD/UNLOAD."""
        return False


class _ConfiguresSession(Statement):
    """Marks the kinds configure-session accepts."""

    @property
    def allowed_in_configure_session(self) -> bool:
        return True


# -- Spark SQL ---------------------------------------------------------------------


@dataclass(frozen=True)
class SparkQuery(Statement):
    """A statement Spark answers with rows: SELECT, SHOW, DESCRIBE, EXPLAIN, ...

    ``relational`` says it is a query in the SQL sense (SELECT / WITH /
    VALUES / FROM / TABLE / a parenthesised query): one that may read
    connector tables and whose result is a query result with a job id.
    """

    keyword: str
    relational: bool

    @property
    def is_query(self) -> bool:
        return True


@dataclass(frozen=True)
class MetadataQuery(SparkQuery):
    """A SHOW / DESCRIBE form Spark answers as it is: ``DESCRIBE EXTENDED t``,
    ``SHOW PARTITIONS t``, ``SHOW TBLPROPERTIES t``, ... The forms the gateway
    answers in the shape of the session's protocol are the subclasses below
    (docs/statements.md, "Statement forms")."""


@dataclass(frozen=True)
class LikePattern:
    """The name filter of a listing.

    ``sql`` for Flink's ``[NOT] [I]LIKE 'p'`` (SQL's ``%`` and ``_``); false
    for Spark's bare ``'p'`` (``*`` and ``|``), which only Spark applies.
    """

    pattern: str
    negated: bool = False
    case_insensitive: bool = False
    sql: bool = True

    def matches(self, name: str) -> bool:
        """Whether ``name`` passes the SQL ``LIKE`` filter."""
        regex = "".join(
            ".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in self.pattern
        )
        flags = re.DOTALL | (re.IGNORECASE if self.case_insensitive else 0)
        return (re.fullmatch(regex, name, flags) is None) == self.negated


@dataclass(frozen=True)
class ShowCurrentCatalog(MetadataQuery):
    pass


@dataclass(frozen=True)
class ShowCurrentDatabase(MetadataQuery):
    pass


@dataclass(frozen=True)
class ShowModules(MetadataQuery):
    """``SHOW [FULL] MODULES``."""

    full: bool = False


@dataclass(frozen=True)
class ShowCatalogs(MetadataQuery):
    """``SHOW CATALOGS [[NOT] [I]LIKE 'p']``; ``spark_form``: Spark's own pattern
    syntax, answered by Spark."""

    spark_form: bool = False
    like: LikePattern | None = None


@dataclass(frozen=True)
class ShowDatabases(MetadataQuery):
    """``SHOW DATABASES|SCHEMAS|NAMESPACES [FROM|IN catalog] [[NOT] [I]LIKE 'p']``;
    ``spark_form``: Spark's own pattern syntax, answered by Spark."""

    spark_form: bool = False
    catalog: tuple[str, ...] = ()
    like: LikePattern | None = None


@dataclass(frozen=True)
class ShowFunctions(MetadataQuery):
    """``SHOW [USER|SYSTEM|ALL] FUNCTIONS [FROM|IN db] [[NOT] [I]LIKE 'p']``.

    ``spark_form``: a form with Spark's own pattern syntax (``'a*|b*'``), which
    Spark answers as written."""

    spark_form: bool = False
    scope: str | None = None
    database: tuple[str, ...] = ()
    like: LikePattern | None = None


@dataclass(frozen=True)
class DescribeFunction(MetadataQuery):
    """``DESCRIBE|DESC FUNCTION [EXTENDED] name``."""

    function: tuple[str, ...] = ()
    extended: bool = False


@dataclass(frozen=True)
class ShowProcedures(MetadataQuery):
    """``SHOW PROCEDURES [FROM|IN catalog.db] [[NOT] [I]LIKE 'p']``."""

    database: tuple[str, ...] = ()
    like: LikePattern | None = None


@dataclass(frozen=True)
class ShowTables(MetadataQuery):
    """``SHOW TABLES|VIEWS [FROM|IN name] [filter]``; ``database`` is empty for
    the current one."""

    database: tuple[str, ...] = ()
    like: LikePattern | None = None
    views: bool = False


@dataclass(frozen=True)
class ShowCreateTable(MetadataQuery):
    """``SHOW CREATE TABLE|VIEW name`` (not ``AS SERDE``: that is Spark's)."""

    table: tuple[str, ...] = ()
    view: bool = False


@dataclass(frozen=True)
class DescribeDatabase(MetadataQuery):
    """``DESCRIBE DATABASE|SCHEMA|NAMESPACE [EXTENDED] name``: Spark's answer, or
    the comment and properties a catalog of the gateway keeps itself."""

    database: tuple[str, ...] = ()
    extended: bool = False


@dataclass(frozen=True)
class DescribeTable(MetadataQuery):
    """``DESCRIBE [TABLE] name``, ``DESC name`` and ``SHOW COLUMNS FROM|IN name
    [filter]`` (``columns``): the columns of one table."""

    table: tuple[str, ...] = ()
    like: LikePattern | None = None
    columns: bool = False


@dataclass(frozen=True)
class SparkCommand(Statement):
    """Spark SQL that is neither a query nor DML: DDL and anything else Spark runs.

    ``keywords`` are its first (up to three) upper-cased words; ``ddl`` says
    it changes the catalog (CREATE, DROP, ALTER, TRUNCATE, ...).
    """

    keywords: tuple[str, ...]
    ddl: bool

    @property
    def keyword(self) -> str:
        return self.keywords[0] if self.keywords else ""

    @property
    def allowed_in_configure_session(self) -> bool:
        return self.ddl and self.keyword in ("CREATE", "DROP", "ALTER")


@dataclass(frozen=True)
class SparkSet(SparkCommand):
    """Spark's own SET forms: SET TIME ZONE, SET VAR, SET CATALOG."""

    @property
    def allowed_in_configure_session(self) -> bool:
        return True


@dataclass(frozen=True)
class Dml(Statement):
    """Spark DML: INSERT, MERGE, UPDATE, DELETE, LOAD DATA, ``WITH ... INSERT``,
    ``FROM t INSERT ...``; it runs as a job. ``verb`` is its first word."""

    verb: str

    @property
    def insert(self) -> bool:
        """An ``INSERT INTO|OVERWRITE``: what statement sets and streaming take apart."""
        return self.verb == "INSERT"


@dataclass(frozen=True)
class TableAsSelect(Statement):
    """``CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t ... AS <query>`` and
    ``REPLACE TABLE t ... AS <query>``: Spark's form (``USING``, ``OPTIONS``,
    ``PARTITIONED BY``, ...) or Flink's (``WITH (...)``); a job.

    ``spark_text`` is the statement as Spark's parser reads it (Flink's
    ``WITH`` clause taken out into ``options``); ``create`` / ``replace`` say
    which of CREATE, REPLACE or CREATE OR REPLACE it is; ``clauses`` are the
    table's clauses between its name and ``AS`` (``USING``, ``PARTITIONED BY``,
    ``COMMENT``, ...; not Flink's ``WITH``), as Spark SQL.
    """

    spark_text: str
    clauses: str
    create: bool
    replace: bool
    if_not_exists: bool = False
    options: Mapping[str, str] = field(default_factory=_no_options, hash=False)
    # Flink's column list (FLIP-463), and its COMMENT and PARTITIONED BY.
    schema: Schema | None = field(default=None, hash=False)
    comment: str | None = None
    partition_keys: tuple[str, ...] = ()

    @property
    def allowed_in_configure_session(self) -> bool:
        return False


# -- materialized tables (FLIP-435) ------------------------------------------------


@dataclass(frozen=True)
class CreateMaterializedTable(_ConfiguresSession):
    """``CREATE [OR ALTER] MATERIALIZED TABLE t [(PRIMARY KEY (k) NOT ENFORCED)]
    [COMMENT '...'] [PARTITIONED BY (c)] [WITH (...)] [FRESHNESS = INTERVAL ...]
    [REFRESH_MODE = CONTINUOUS|FULL] AS <query>``."""

    name: tuple[str, ...]
    query: str
    or_alter: bool = False
    primary_key: tuple[str, ...] = ()
    comment: str | None = None
    partition_keys: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=_no_options, hash=False)
    freshness: Freshness | None = None
    refresh_mode: str | None = None


@dataclass(frozen=True)
class AlterMaterializedTable(_ConfiguresSession):
    """``ALTER MATERIALIZED TABLE t SUSPEND | RESUME [WITH (...)] |
    REFRESH [PARTITION (k = 'v', ...)] | AS <query>``; ``action`` is the verb."""

    name: tuple[str, ...]
    action: str
    options: Mapping[str, str] = field(default_factory=_no_options, hash=False)
    partition: Mapping[str, str] = field(default_factory=_no_options, hash=False)
    query: str | None = None


@dataclass(frozen=True)
class DropMaterializedTable(_ConfiguresSession):
    name: tuple[str, ...]
    if_exists: bool = False


@dataclass(frozen=True)
class ShowMaterializedTables(Statement):
    """``SHOW MATERIALIZED TABLES [FROM|IN db] [[NOT] LIKE 'p']``."""

    database: tuple[str, ...] = ()
    like: LikePattern | None = None

    @property
    def is_query(self) -> bool:
        return True


@dataclass(frozen=True)
class ShowCreateMaterializedTable(Statement):
    name: tuple[str, ...]

    @property
    def is_query(self) -> bool:
        return True


# -- the gateway's configuration ---------------------------------------------------


@dataclass(frozen=True)
class Set(_ConfiguresSession):
    key: str
    value: str


@dataclass(frozen=True)
class ShowConfig(Statement):
    """``SET`` (every key) or ``SET key`` (one)."""

    key: str | None


@dataclass(frozen=True)
class Reset(_ConfiguresSession):
    key: str | None


@dataclass(frozen=True)
class AddJar(_ConfiguresSession):
    path: str


@dataclass(frozen=True)
class RemoveJar(_ConfiguresSession):
    path: str


@dataclass(frozen=True)
class ShowJars(Statement):
    pass


@dataclass(frozen=True)
class Use(_ConfiguresSession):
    """``USE [CATALOG] name``: ``catalog`` for USE CATALOG, else a database."""

    names: tuple[str, ...]
    catalog: bool


@dataclass(frozen=True)
class CreateCatalog(_ConfiguresSession):
    """``CREATE CATALOG [IF NOT EXISTS] name [COMMENT '...'] WITH (...)``."""

    name: str
    options: Mapping[str, str] = field(default_factory=_no_options, hash=False)
    if_not_exists: bool = False
    comment: str | None = None


@dataclass(frozen=True)
class AlterCatalog(_ConfiguresSession):
    """``ALTER CATALOG name SET (...)`` / ``RESET ('k', ...)`` / ``COMMENT '...'``."""

    name: str
    set_options: Mapping[str, str] = field(default_factory=_no_options, hash=False)
    reset_keys: tuple[str, ...] = ()
    comment: str | None = None


@dataclass(frozen=True)
class DropCatalog(_ConfiguresSession):
    """``DROP CATALOG [IF EXISTS] name``."""

    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class DescribeCatalog(Statement):
    """``DESCRIBE|DESC CATALOG [EXTENDED] name``."""

    name: str
    extended: bool = False


@dataclass(frozen=True)
class ShowCreateCatalog(Statement):
    """``SHOW CREATE CATALOG name``."""

    name: str


@dataclass(frozen=True)
class LoadModule(_ConfiguresSession):
    name: str
    options: Mapping[str, str] = field(default_factory=_no_options, hash=False)


@dataclass(frozen=True)
class UnloadModule(_ConfiguresSession):
    name: str


@dataclass(frozen=True)
class UseModules(_ConfiguresSession):
    """``USE MODULES a, b``: the modules in use, in resolution order."""

    names: tuple[str, ...]


# -- connector tables --------------------------------------------------------------


@dataclass(frozen=True)
class ConnectorTableCreate(_ConfiguresSession):
    """Flink's ``CREATE [TEMPORARY] TABLE ... WITH ('connector' = ...)``, or
    ``... LIKE source [(like options)]``: ``definition`` is then the statement's
    own part, merged over the source's when it runs."""

    definition: TableDefinition = field(hash=False)
    like: TableLike | None = field(default=None, hash=False)


@dataclass(frozen=True)
class AlterTable(_ConfiguresSession):
    """One of Flink's ``ALTER TABLE`` forms (Spark's own are a ``SparkCommand``)."""

    alteration: TableAlteration = field(hash=False)


@dataclass(frozen=True)
class DropTemporaryTable(_ConfiguresSession):
    """Flink's ``DROP TEMPORARY TABLE [IF EXISTS] name`` (one-part name)."""

    name: str
    if_exists: bool


# -- functions and refused forms ---------------------------------------------------


@dataclass(frozen=True)
class FunctionDefinition(_ConfiguresSession):
    """Flink's ``CREATE`` or ``ALTER [TEMPORARY [SYSTEM]] FUNCTION [IF [NOT] EXISTS]
    name AS 'class' [LANGUAGE ...] [USING JAR '...', ...]``; ``guarded`` is the
    IF [NOT] EXISTS."""

    name: tuple[str, ...]
    class_name: str
    alter: bool = False
    temporary: bool = False
    system: bool = False
    guarded: bool = False
    language: str = "JAVA"
    jars: tuple[str, ...] = ()

    @property
    def spark_text(self) -> str:
        """Spark's ``CREATE [TEMPORARY] FUNCTION`` of it: what the host checks read."""
        temporary = "TEMPORARY " if self.temporary else ""
        name = ".".join(quote_identifier(part) for part in self.name)
        return f"CREATE {temporary}FUNCTION {name} AS {quote_string(self.class_name)}"


@dataclass(frozen=True)
class DropFunction(_ConfiguresSession):
    """Flink's ``DROP [TEMPORARY [SYSTEM]] FUNCTION [IF EXISTS] name``."""

    name: tuple[str, ...]
    temporary: bool = False
    system: bool = False
    if_exists: bool = False


@dataclass(frozen=True)
class Refused(Statement):
    """A Flink statement form that has no meaning on Spark: refused, saying why."""

    form: str
    reason: str


# -- EXPLAIN -------------------------------------------------------------------------


@dataclass(frozen=True)
class Explain(Statement):
    """``EXPLAIN [PLAN FOR | detail, ...] <statement>``: the statement's plans, in
    Flink's sections; it is never run."""

    details: tuple[str, ...]
    statement: Statement = field(hash=False)


# -- views and databases (Flink's forms) --------------------------------------------


@dataclass(frozen=True)
class CreateView(_ConfiguresSession):
    """Flink's ``CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(columns)]
    [COMMENT '...'] AS query``."""

    name: tuple[str, ...]
    query: str
    temporary: bool = False
    if_not_exists: bool = False
    columns: tuple[str, ...] = ()
    comment: str | None = None


@dataclass(frozen=True)
class DropView(_ConfiguresSession):
    """``DROP [TEMPORARY] VIEW [IF EXISTS] name``."""

    name: tuple[str, ...]
    temporary: bool = False
    if_exists: bool = False


@dataclass(frozen=True)
class CreateDatabase(_ConfiguresSession):
    """Flink's ``CREATE DATABASE [IF NOT EXISTS] name [COMMENT '...'] WITH (...)``."""

    name: tuple[str, ...]
    if_not_exists: bool = False
    comment: str | None = None
    options: Mapping[str, str] = field(default_factory=_no_options, hash=False)


@dataclass(frozen=True)
class AlterDatabase(_ConfiguresSession):
    """Flink's ``ALTER DATABASE name SET ('k' = 'v', ...)``."""

    name: tuple[str, ...]
    options: Mapping[str, str] = field(default_factory=_no_options, hash=False)


@dataclass(frozen=True)
class DropDatabase(_ConfiguresSession):
    """``DROP DATABASE [IF EXISTS] name [RESTRICT | CASCADE]``."""

    name: tuple[str, ...]
    if_exists: bool = False
    cascade: bool = False


# -- statement sets and jobs -------------------------------------------------------


@dataclass(frozen=True)
class BeginStatementSet(Statement):
    pass


@dataclass(frozen=True)
class EndStatementSet(Statement):
    pass


@dataclass(frozen=True)
class ExecuteStatementSet(Statement):
    """``EXECUTE STATEMENT SET BEGIN ...; END``: its statements, parsed."""

    statements: tuple[Statement, ...]


@dataclass(frozen=True)
class ShowJobs(Statement):
    pass


@dataclass(frozen=True)
class DescribeJob(Statement):
    job_id: str


@dataclass(frozen=True)
class StopJob(Statement):
    job_id: str
    with_savepoint: bool = False
    with_drain: bool = False


# -- compiled plans (FLIP-190, FLIP-292) --------------------------------------------


@dataclass(frozen=True)
class CompilePlan(Statement):
    """``COMPILE [AND EXECUTE] PLAN '<uri>' [IF NOT EXISTS] FOR <INSERT | statement set>``.

    ``inserts`` are the INSERT statements compiled (one, or a set's).
    """

    uri: str
    if_not_exists: bool
    execute: bool
    inserts: tuple[Statement, ...]


@dataclass(frozen=True)
class ExecutePlan(Statement):
    """``EXECUTE PLAN '<uri>'``: run a plan file as a job."""

    uri: str


@dataclass(frozen=True)
class ExplainPlan(Statement):
    """``EXPLAIN PLAN '<uri>'``: check a plan file and draw its operator graph."""

    uri: str
