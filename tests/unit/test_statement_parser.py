"""Classification of single statements and parsing of the gateway's own ones."""

from __future__ import annotations

from typing import Any

import pytest

from sparkgate.api.errors import SqlParseError
from sparkgate.service.statements import Statement, parse_statement
from sparkgate.service.statements import kinds as K

__all__: list[str] = []


@pytest.mark.parametrize(
    ("statement", "kind", "fields"),
    [
        # SET in all its gateway forms.
        ("SET 'k' = 'v'", K.Set, {"key": "k", "value": "v"}),
        ("SET k=v", K.Set, {"key": "k", "value": "v"}),
        (
            "SET spark.sql.shuffle.partitions = 4;",
            K.Set,
            {"key": "spark.sql.shuffle.partitions", "value": "4"},
        ),
        (
            "set sql-gateway.session.idle-timeout = 10 min",
            K.Set,
            {"key": "sql-gateway.session.idle-timeout", "value": "10 min"},
        ),
        ("SET k = a = b ", K.Set, {"key": "k", "value": "a = b"}),
        ("SET 'k'='it''s'", K.Set, {"key": "k", "value": "it's"}),
        ("SET 'k'='it\\'s'", K.Set, {"key": "k", "value": "it's"}),
        ('SET "k" = "v"', K.Set, {"key": "k", "value": "v"}),
        ("SET `k.x` = v", K.Set, {"key": "k.x", "value": "v"}),
        ("SET 'a=b' = 'c'", K.Set, {"key": "a=b", "value": "c"}),
        ("SET k = 'a' 'b'", K.Set, {"key": "k", "value": "'a' 'b'"}),
        ("SET k =", K.Set, {"key": "k", "value": ""}),
        ("SET k = v; -- trailing", K.Set, {"key": "k", "value": "v", "text": "SET k = v"}),
        ("SET k = v /* inner */ w", K.Set, {"key": "k", "value": "v /* inner */ w"}),
        ("/* lead */ SET k = v", K.Set, {"key": "k", "value": "v", "text": "SET k = v"}),
        ("SET", K.ShowConfig, {"key": None}),
        ("SET;", K.ShowConfig, {"key": None}),
        ("SET k", K.ShowConfig, {"key": "k"}),
        ("SET 'k'", K.ShowConfig, {"key": "k"}),
        ("SET -v", K.SparkQuery, {"relational": False}),
        # Spark's own SET statements go to Spark.
        ("SET TIME ZONE 'UTC'", K.SparkSet, {"keywords": ("SET", "TIME", "ZONE")}),
        ("SET TIME ZONE LOCAL", K.SparkSet, {}),
        ("SET VAR x = 1", K.SparkSet, {}),
        ("SET VARIABLE (a, b) = (SELECT 1, 2)", K.SparkSet, {}),
        ("SET CATALOG spark_catalog", K.SparkSet, {}),
        ("SET var = 1", K.Set, {"key": "var", "value": "1"}),
        # RESET
        ("RESET", K.Reset, {"key": None}),
        ("RESET 'k'", K.Reset, {"key": "k"}),
        ("RESET spark.sql.x;", K.Reset, {"key": "spark.sql.x"}),
        # jars
        ("ADD JAR '/tmp/a b.jar'", K.AddJar, {"path": "/tmp/a b.jar"}),
        ("add jar /tmp/x.jar", K.AddJar, {"path": "/tmp/x.jar"}),
        ("REMOVE JAR '/tmp/x.jar';", K.RemoveJar, {"path": "/tmp/x.jar"}),
        ("SHOW JARS", K.ShowJars, {}),
        ("ADD FILE '/tmp/x.txt'", K.SparkCommand, {"ddl": False}),
        # statement sets
        ("BEGIN STATEMENT SET", K.BeginStatementSet, {}),
        ("begin statement set;", K.BeginStatementSet, {}),
        ("END", K.EndStatementSet, {}),
        ("END;", K.EndStatementSet, {}),
        (
            (
                "EXECUTE STATEMENT SET BEGIN\n INSERT INTO a VALUES (1);\n"
                " INSERT INTO b SELECT ';' FROM c;\nEND;"
            ),
            K.ExecuteStatementSet,
            {"inner": ("INSERT INTO a VALUES (1)", "INSERT INTO b SELECT ';' FROM c")},
        ),
        (
            "EXECUTE STATEMENT SET BEGIN INSERT INTO a VALUES (1) END",
            K.ExecuteStatementSet,
            {"inner": ("INSERT INTO a VALUES (1)",)},
        ),
        # CREATE TABLE AS / REPLACE TABLE AS
        (
            "CREATE TABLE t AS SELECT 1",
            K.TableAsSelect,
            {"create": True, "replace": False, "if_not_exists": False, "clauses": ""},
        ),
        (
            "create or replace table a.`b c` USING parquet PARTITIONED BY (x) as select 1 x",
            K.TableAsSelect,
            {"create": True, "replace": True, "clauses": "USING parquet PARTITIONED BY ( x )"},
        ),
        (
            "REPLACE TABLE t AS WITH q AS (SELECT 1) SELECT * FROM q",
            K.TableAsSelect,
            {"create": False, "replace": True},
        ),
        (
            "CREATE TABLE t USING parquet AS (SELECT 1)",
            K.TableAsSelect,
            {"spark_text": "CREATE TABLE t USING parquet AS (SELECT 1)"},
        ),
        (
            "CREATE TABLE IF NOT EXISTS t COMMENT 'c'\nWITH ('connector' = 'print') AS VALUES (1)",
            K.TableAsSelect,
            {
                "if_not_exists": True,
                "options": {"connector": "print"},
                "clauses": "COMMENT 'c'",
                "spark_text": "CREATE TABLE IF NOT EXISTS t COMMENT 'c' AS VALUES (1)",
            },
        ),
        (
            "CREATE TABLE t (b, a) PARTITIONED BY (a) AS SELECT 1 a, 2 b",
            K.TableAsSelect,
            {
                "spark_text": "CREATE TABLE t PARTITIONED BY ( a ) AS SELECT 1 a, 2 b",
                "partition_keys": ("a",),
            },
        ),
        ("CREATE TABLE t (a INT) USING parquet", K.SparkCommand, {}),
        # views and databases: Flink's forms typed, Spark's own left to Spark
        ("CREATE VIEW v AS SELECT 1", K.CreateView, {"name": ("v",), "query": "SELECT 1"}),
        (
            "create temporary view if not exists c.d.v (a, `b`) comment 'x' as select 1, 2",
            K.CreateView,
            {
                "name": ("c", "d", "v"),
                "temporary": True,
                "if_not_exists": True,
                "columns": ("a", "b"),
                "comment": "x",
                "query": "select 1, 2",
            },
        ),
        ("CREATE OR REPLACE VIEW v AS SELECT 1", K.SparkCommand, {}),
        ("CREATE GLOBAL TEMPORARY VIEW v AS SELECT 1", K.SparkCommand, {}),
        ("CREATE VIEW v (a COMMENT 'c') AS SELECT 1", K.SparkCommand, {}),
        ("CREATE VIEW v TBLPROPERTIES ('k' = 'v') AS SELECT 1", K.SparkCommand, {}),
        ("DROP TEMPORARY VIEW IF EXISTS v", K.DropView, {"temporary": True, "if_exists": True}),
        ("DROP VIEW db.v", K.DropView, {"name": ("db", "v"), "temporary": False}),
        (
            "CREATE DATABASE IF NOT EXISTS d COMMENT 'c' WITH ('k' = 'v')",
            K.CreateDatabase,
            {"name": ("d",), "if_not_exists": True, "comment": "c", "options": {"k": "v"}},
        ),
        ("CREATE DATABASE d", K.SparkCommand, {}),
        ("CREATE DATABASE d COMMENT 'c'", K.CreateDatabase, {"comment": "c", "options": {}}),
        ("CREATE DATABASE d WITH DBPROPERTIES ('k' = 'v')", K.SparkCommand, {}),
        ("CREATE SCHEMA d LOCATION '/x'", K.SparkCommand, {}),
        ("ALTER DATABASE d SET ('k' = 'v')", K.AlterDatabase, {"options": {"k": "v"}}),
        ("ALTER DATABASE d SET DBPROPERTIES ('k' = 'v')", K.SparkCommand, {}),
        ("DROP DATABASE IF EXISTS d CASCADE", K.DropDatabase, {"if_exists": True, "cascade": True}),
        ("DROP SCHEMA d RESTRICT", K.DropDatabase, {"cascade": False}),
        # functions in Flink's forms; Spark's own (OR REPLACE, SQL functions) left to Spark
        (
            "CREATE TEMPORARY SYSTEM FUNCTION f AS 'a.B' LANGUAGE SCALA",
            K.FunctionDefinition,
            {"name": ("f",), "class_name": "a.B", "temporary": True, "system": True},
        ),
        (
            "CREATE FUNCTION IF NOT EXISTS db.f AS 'a.B' USING JAR '/x.jar', JAR '/y.jar'",
            K.FunctionDefinition,
            {"guarded": True, "jars": ("/x.jar", "/y.jar"), "language": "JAVA"},
        ),
        ("ALTER FUNCTION IF EXISTS f AS 'a.C'", K.FunctionDefinition, {"alter": True}),
        ("DROP TEMPORARY SYSTEM FUNCTION IF EXISTS f", K.DropFunction, {"if_exists": True}),
        ("CREATE OR REPLACE FUNCTION f AS 'a.B'", K.SparkCommand, {}),
        ("CREATE FUNCTION f(x INT) RETURNS INT RETURN x + 1", K.SparkCommand, {}),
        ("CREATE FUNCTION f AS 'a.B' USING FILE '/x.py'", K.SparkCommand, {}),
        # Flink's forms without a meaning on Spark: refused, saying why
        ("CREATE MODEL m WITH ('k' = 'v')", K.Refused, {"form": "CREATE MODEL"}),
        ("DESCRIBE MODEL m", K.Refused, {"form": "DESCRIBE MODEL"}),
        ("SHOW MODELS", K.Refused, {"form": "SHOW MODELS"}),
        # Flink's EXECUTE <DML> and EXECUTE <query> are the statement itself
        ("EXECUTE INSERT INTO t SELECT 1", K.Dml, {"text": "INSERT INTO t SELECT 1"}),
        ("EXECUTE SELECT * FROM t", K.SparkQuery, {"text": "SELECT * FROM t"}),
        (
            "execute with c AS (SELECT 1) SELECT * FROM c",
            K.SparkQuery,
            {"text": "with c AS (SELECT 1) SELECT * FROM c"},
        ),
        # listings with SQL's LIKE, and Spark's own pattern forms
        ("SHOW USER FUNCTIONS FROM db LIKE 'f%'", K.ShowFunctions, {"scope": "USER"}),
        ("SHOW FUNCTIONS 'a*'", K.ShowFunctions, {"spark_form": True}),
        ("SHOW PROCEDURES IN c.d NOT LIKE 'p%'", K.ShowProcedures, {"database": ("c", "d")}),
        ("SHOW DATABASES FROM c ILIKE 'D%'", K.ShowDatabases, {"catalog": ("c",)}),
        ("SHOW DATABASES LIKE 'd*'", K.ShowDatabases, {"spark_form": False}),
        ("SHOW SCHEMAS 'd*|e*'", K.ShowDatabases, {"spark_form": True}),
        ("SHOW CATALOGS LIKE 'c%'", K.ShowCatalogs, {"spark_form": False}),
        # jobs
        ("SHOW JOBS", K.ShowJobs, {}),
        (
            "STOP JOB 'abc'",
            K.StopJob,
            {"job_id": "abc", "with_savepoint": False, "with_drain": False},
        ),
        (
            "STOP JOB 'abc' WITH SAVEPOINT",
            K.StopJob,
            {"job_id": "abc", "with_savepoint": True, "with_drain": False},
        ),
        (
            "stop job 'abc' with savepoint with drain;",
            K.StopJob,
            {"job_id": "abc", "with_savepoint": True, "with_drain": True},
        ),
        (
            "STOP JOB 'abc' WITH DRAIN",
            K.StopJob,
            {"job_id": "abc", "with_savepoint": False, "with_drain": True},
        ),
        ("DESCRIBE JOB 'abc'", K.DescribeJob, {"job_id": "abc"}),
        ("DESC JOB 'abc'", K.DescribeJob, {"job_id": "abc"}),
        ("DESCRIBE job", K.DescribeTable, {"keyword": "DESCRIBE", "table": ("job",)}),
        # catalogs and modules
        (
            "CREATE CATALOG c WITH ('type' = 'hive', 'hive.uri' = 'thrift://h:9083')",
            K.CreateCatalog,
            {
                "name": "c",
                "options": {"type": "hive", "hive.uri": "thrift://h:9083"},
                "if_not_exists": False,
            },
        ),
        (
            "CREATE CATALOG IF NOT EXISTS `my cat` WITH (type = 'x', n = 1)",
            K.CreateCatalog,
            {"name": "my cat", "options": {"type": "x", "n": "1"}, "if_not_exists": True},
        ),
        ("CREATE CATALOG c WITH ()", K.CreateCatalog, {"options": {}}),
        ("LOAD MODULE hive", K.LoadModule, {"name": "hive", "options": {}}),
        (
            "LOAD MODULE hive WITH ('hive-version' = '3.1.3')",
            K.LoadModule,
            {"name": "hive", "options": {"hive-version": "3.1.3"}},
        ),
        ("UNLOAD MODULE core", K.UnloadModule, {"name": "core"}),
        # USE
        ("USE db", K.Use, {"names": ("db",), "catalog": False}),
        ("USE DATABASE db", K.Use, {"names": ("db",)}),
        ("USE NAMESPACE a.b", K.Use, {"names": ("a", "b")}),
        ("USE c.`my db`", K.Use, {"names": ("c", "my db")}),
        ("USE CATALOG c", K.Use, {"names": ("c",), "catalog": True}),
        ("USE database", K.Use, {"names": ("database",)}),
        ("USE IDENTIFIER('db')", K.SparkCommand, {}),
        ("USE MODULES hive, core", K.UseModules, {"names": ("hive", "core")}),
        # queries
        ("SELECT 1", K.SparkQuery, {"keyword": "SELECT", "relational": True}),
        ("select 1;", K.SparkQuery, {"text": "select 1"}),
        ("WITH c AS (SELECT 1) SELECT * FROM c", K.SparkQuery, {"keyword": "WITH"}),
        ("VALUES (1), (2)", K.SparkQuery, {}),
        ("TABLE t", K.SparkQuery, {}),
        ("FROM t SELECT a", K.SparkQuery, {}),
        ("(SELECT 1) UNION (SELECT 2)", K.SparkQuery, {"keyword": "(", "relational": True}),
        ("EXPLAIN SELECT 1", K.Explain, {"details": ()}),
        ("EXPLAIN EXTENDED SELECT 1", K.SparkQuery, {"relational": False}),
        (
            "EXPLAIN (CHANGELOG_MODE, PLAN_ADVICE) SELECT 1",
            K.Explain,
            {"details": ("CHANGELOG_MODE", "PLAN_ADVICE")},
        ),
        ("EXPLAIN EXTENDED INSERT INTO t VALUES (1)", K.SparkQuery, {}),
        # SHOW / DESCRIBE: one kind per form the gateway shapes, else Spark's own
        ("DESCRIBE TABLE t", K.DescribeTable, {"relational": False, "table": ("t",)}),
        ("DESC c.db.`my t`", K.DescribeTable, {"table": ("c", "db", "my t"), "columns": False}),
        ("DESCRIBE table", K.DescribeTable, {"table": ("table",)}),
        ("DESCRIBE extended", K.DescribeTable, {"table": ("extended",)}),
        ("DESCRIBE EXTENDED t", K.MetadataQuery, {"keyword": "DESCRIBE"}),
        ("DESCRIBE t id", K.MetadataQuery, {}),
        ("DESCRIBE DATABASE db", K.DescribeDatabase, {"database": ("db",), "extended": False}),
        (
            "DESC SCHEMA EXTENDED c.d",
            K.DescribeDatabase,
            {"database": ("c", "d"), "extended": True},
        ),
        ("DESCRIBE DATABASE extended", K.DescribeDatabase, {"database": ("extended",)}),
        ("DESCRIBE FUNCTION f", K.DescribeFunction, {"function": ("f",), "extended": False}),
        ("DESC FUNCTION EXTENDED db.f", K.DescribeFunction, {"function": ("db", "f")}),
        ("DESCRIBE FUNCTION EXTENDED f", K.DescribeFunction, {"extended": True}),
        ("DESCRIBE FUNCTION extended", K.DescribeFunction, {"function": ("extended",)}),
        ("DESCRIBE FUNCTION f g", K.MetadataQuery, {}),
        ("DESCRIBE t PARTITION (p = 1)", K.MetadataQuery, {}),
        ("SHOW COLUMNS FROM t", K.DescribeTable, {"table": ("t",), "columns": True, "like": None}),
        (
            "show columns in db.t not like 'i%'",
            K.DescribeTable,
            {"table": ("db", "t"), "like": K.LikePattern("i%", negated=True)},
        ),
        ("SHOW COLUMNS FROM t IN db", K.MetadataQuery, {}),
        ("SHOW TABLES", K.ShowTables, {"database": (), "like": None, "views": False}),
        (
            "SHOW TABLES FROM c.db LIKE 'a%'",
            K.ShowTables,
            {"database": ("c", "db"), "like": K.LikePattern("a%")},
        ),
        (
            "SHOW VIEWS IN db ILIKE 'A_'",
            K.ShowTables,
            {"views": True, "like": K.LikePattern("A_", case_insensitive=True)},
        ),
        ("SHOW TABLES 'a*|b*'", K.ShowTables, {"like": K.LikePattern("a*|b*", sql=False)}),
        ("SHOW TABLES LIKE 'a' AND x", K.MetadataQuery, {}),
        ("SHOW TABLE EXTENDED LIKE 't'", K.MetadataQuery, {}),
        ("SHOW CREATE TABLE t", K.ShowCreateTable, {"table": ("t",), "view": False}),
        ("SHOW CREATE VIEW db.v", K.ShowCreateTable, {"table": ("db", "v"), "view": True}),
        ("SHOW CREATE TABLE t AS SERDE", K.MetadataQuery, {}),
        ("SHOW CURRENT CATALOG", K.ShowCurrentCatalog, {}),
        ("show current database;", K.ShowCurrentDatabase, {}),
        ("SHOW MODULES", K.ShowModules, {"full": False}),
        ("SHOW FULL MODULES", K.ShowModules, {"full": True}),
        ("SHOW CATALOGS", K.ShowCatalogs, {}),
        ("SHOW SCHEMAS IN c", K.ShowDatabases, {}),
        ("SHOW USER FUNCTIONS", K.ShowFunctions, {}),
        ("SHOW FUNCTIONS LIKE 'a*'", K.ShowFunctions, {}),
        ("SHOW PARTITIONS t", K.MetadataQuery, {}),
        ("SHOW TBLPROPERTIES t", K.MetadataQuery, {}),
        ("LIST JAR", K.SparkQuery, {}),
        ("LIST FILE", K.SparkQuery, {}),
        (
            "/*+ not a hint here */ SELECT /*+ COALESCE(1) */ a FROM t",
            K.SparkQuery,
            {"text": "SELECT /*+ COALESCE(1) */ a FROM t"},
        ),
        # DML
        ("INSERT INTO t VALUES (1)", K.Dml, {"verb": "INSERT", "insert": True}),
        ("INSERT OVERWRITE t SELECT 1", K.Dml, {}),
        ("WITH c AS (SELECT 1) INSERT INTO t SELECT * FROM c", K.Dml, {"verb": "WITH"}),
        ("FROM s INSERT INTO t SELECT a INSERT INTO u SELECT b", K.Dml, {}),
        ("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", K.Dml, {}),
        ("UPDATE t SET a = 1", K.Dml, {"insert": False}),
        ("DELETE FROM t WHERE a = 1", K.Dml, {}),
        ("LOAD DATA LOCAL INPATH '/tmp/x' INTO TABLE t", K.Dml, {"verb": "LOAD"}),
        # DDL
        ("CREATE TABLE t (a INT)", K.SparkCommand, {"keyword": "CREATE", "ddl": True}),
        ("DROP TABLE t", K.SparkCommand, {}),
        ("ALTER TABLE t ADD COLUMN b INT", K.SparkCommand, {}),
        ("TRUNCATE TABLE t", K.SparkCommand, {}),
        ("MSCK REPAIR TABLE t", K.SparkCommand, {}),
        ("REPAIR TABLE t", K.SparkCommand, {}),
        ("REFRESH TABLE t", K.SparkCommand, {}),
        ("CACHE TABLE t", K.SparkCommand, {}),
        ("UNCACHE TABLE t", K.SparkCommand, {}),
        ("CLEAR CACHE", K.SparkCommand, {"keyword": "CLEAR"}),
        ("ANALYZE TABLE t COMPUTE STATISTICS", K.SparkCommand, {}),
        ("COMMENT ON TABLE t IS 'x'", K.SparkCommand, {}),
        ("DECLARE VARIABLE v INT DEFAULT 1", K.SparkCommand, {}),
        # anything else is Spark's business
        ("CALL sys.proc()", K.SparkCommand, {"ddl": False}),
        ("EXECUTE IMMEDIATE 'SELECT 1'", K.SparkCommand, {}),
        ("BEGIN SELECT 1; SELECT 2; END", K.SparkCommand, {"keyword": "BEGIN"}),
        ("END x", K.SparkCommand, {}),
        ("LOAD x", K.SparkCommand, {}),
        ("CLEAR x", K.SparkCommand, {}),
    ],
)
def test_parse_statement(statement: str, kind: type[Statement], fields: dict[str, Any]) -> None:
    parsed = parse_statement(statement)
    assert type(parsed) is kind
    for name, value in fields.items():
        if name == "inner":
            assert isinstance(parsed, K.ExecuteStatementSet)
            assert tuple(inner.text for inner in parsed.statements) == value
            continue
        assert getattr(parsed, name) == value, name
    if "text" not in fields:
        assert parsed.text == statement.strip().rstrip(";").strip()


@pytest.mark.parametrize(
    ("statement", "allowed"),
    [
        ("SET 'k' = 'v'", True),
        ("SET k = v", True),
        ("RESET", True),
        ("RESET k", True),
        ("SET TIME ZONE 'UTC'", True),
        ("CREATE TABLE t (a INT)", True),
        ("CREATE TABLE t AS SELECT 1", False),  # a job, as INSERT
        ("CREATE CATALOG c WITH ('type' = 'x')", True),
        ("DROP VIEW v", True),
        ("ALTER TABLE t RENAME TO u", True),
        ("USE db", True),
        ("USE CATALOG c", True),
        ("ADD JAR 'x.jar'", True),
        ("REMOVE JAR 'x.jar'", True),
        ("LOAD MODULE hive", True),
        ("UNLOAD MODULE hive", True),
        ("SET", False),
        ("SET k", False),
        ("SELECT 1", False),
        ("INSERT INTO t VALUES (1)", False),
        ("SHOW TABLES", False),
        ("SHOW JARS", False),
        ("EXPLAIN SELECT 1", False),
        ("DESCRIBE t", False),
        ("BEGIN STATEMENT SET", False),
        ("END", False),
        ("EXECUTE STATEMENT SET BEGIN INSERT INTO t VALUES (1); END", False),
        ("TRUNCATE TABLE t", False),
        ("LOAD DATA INPATH 'x' INTO TABLE t", False),
        ("SHOW JOBS", False),
        ("STOP JOB 'x'", False),
        ("CALL p()", False),
    ],
)
def test_allowed_in_configure_session(statement: str, allowed: bool) -> None:
    assert parse_statement(statement).allowed_in_configure_session is allowed


@pytest.mark.parametrize(
    ("statement", "is_query"),
    [
        ("SELECT 1", True),
        ("SHOW TABLES", True),
        ("DESCRIBE t", True),
        ("SHOW JOBS", False),
        ("SET", False),
        ("INSERT INTO t VALUES (1)", False),
        ("CREATE TABLE t (a INT)", False),
    ],
)
def test_is_query(statement: str, is_query: bool) -> None:
    assert parse_statement(statement).is_query is is_query


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("", "^no statement$"),
        ("  ;  ", "^no statement$"),
        ("-- just a comment\n/* and another */;", "^no statement$"),
        ("SELECT 1; SELECT 2", "^expected one statement, found 2$"),
        ("SET a = 1; SET b = 2; SET c = 3;", "^expected one statement, found 3$"),
        ("SELECT 'abc", "unterminated string literal starting at line 1, column 8"),
        ("SELECT 1,\n  `abc", "unterminated quoted identifier starting at line 2, column 3"),
        ("SELECT 1 /* open", "unterminated block comment starting at line 1, column 10"),
        ("SET a b = c", "SET expects one name or a quoted string at line 1, column 5"),
        ("SET = c", "SET needs a key before '='"),
        ("RESET a b", "RESET expects one name"),
        ("ADD JAR", "ADD JAR needs a path at end of statement"),
        ("ADD JAR 'a.jar' 'b.jar'", "ADD JAR takes one path at line 1, column 17"),
        ("STOP JOB abc", "STOP JOB expects a quoted job id at line 1, column 10"),
        ("STOP JOB 'abc' WITH NOTHING", "expected WITH SAVEPOINT or WITH DRAIN"),
        ("STOP JOB 'abc' WITH DRAIN WITH DRAIN", "expected WITH SAVEPOINT or WITH DRAIN"),
        ("DESCRIBE JOB 'abc' x", "unexpected input in DESCRIBE JOB"),
        ("SHOW JOBS x", "unexpected input in SHOW JOBS"),
        ("BEGIN STATEMENT SET x", "unexpected input in BEGIN STATEMENT SET"),
        ("EXECUTE STATEMENT SET INSERT INTO t VALUES (1)", "expected BEGIN"),
        ("EXECUTE STATEMENT SET BEGIN INSERT INTO t VALUES (1);", "missing its END"),
        ("CREATE CATALOG c", "CREATE CATALOG expects WITH"),
        (
            "CREATE TABLE t WITH ('a' = 'b') COMMENT 'x' AS SELECT 1",
            "expected AS <query> after WITH",
        ),
        ("CREATE CATALOG c WITH ('a' = 'b'", "expected ',' or '\\)' at end of statement"),
        ("CREATE CATALOG c WITH ('a' 'b')", "expected '=' at line 1, column 28"),
        ("CREATE CATALOG c WITH ('a' = 'b', 'a' = 'c')", "duplicate option 'a'"),
        ("CREATE CATALOG c WITH ('a' = 'b') extra", "unexpected input in CREATE CATALOG"),
        ("LOAD MODULE", "expected an identifier"),
        ("USE CATALOG a.b", "unexpected input in USE CATALOG"),
    ],
)
def test_parse_errors(statement: str, message: str) -> None:
    with pytest.raises(SqlParseError, match=message):
        parse_statement(statement)


def test_windows_line_endings_and_positions() -> None:
    parsed = parse_statement("-- header\r\nSET k = v w\r\n;\r\n")
    assert parsed == K.Set("SET k = v w", "k", "v w")
    with pytest.raises(SqlParseError, match="line 2, column 6"):
        parse_statement("SELECT 1,\r\nfoo, 'x")


def test_parsed_statement_is_frozen_and_hashable() -> None:
    parsed = parse_statement("CREATE CATALOG c WITH ('type' = 'x')")
    assert isinstance(parsed, K.CreateCatalog)
    with pytest.raises(AttributeError):
        parsed.name = "d"  # type: ignore[misc]
    with pytest.raises(TypeError):
        parsed.options["type"] = "y"  # type: ignore[index]
    assert hash(parsed) == hash(parse_statement("CREATE CATALOG c WITH ('type' = 'x')"))
    assert parsed == parse_statement("CREATE CATALOG c WITH ('type' = 'x')")


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        (K.LikePattern("a%"), "abc", True),
        (K.LikePattern("a%"), "Abc", False),
        (K.LikePattern("a%", case_insensitive=True), "Abc", True),
        (K.LikePattern("a_c"), "abc", True),
        (K.LikePattern("a_c"), "abbc", False),
        (K.LikePattern("a.c"), "abc", False),
        (K.LikePattern("a%", negated=True), "abc", False),
        (K.LikePattern("a%", negated=True), "bc", True),
    ],
)
def test_like_pattern_is_sql_like(pattern: K.LikePattern, name: str, matches: bool) -> None:
    assert pattern.matches(name) is matches
