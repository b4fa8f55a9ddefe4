"""Classification of single statements and parsing of the gateway's own ones."""

from __future__ import annotations

from typing import Any

import pytest

from sparkgate.api.errors import SqlParseError
from sparkgate.service.statements import ParsedStatement, StatementKind, parse_statement

__all__: list[str] = []

K = StatementKind


@pytest.mark.parametrize(
    ("statement", "kind", "fields"),
    [
        # SET in all its gateway forms.
        ("SET 'k' = 'v'", K.SET, {"key": "k", "value": "v"}),
        ("SET k=v", K.SET, {"key": "k", "value": "v"}),
        ("SET spark.sql.shuffle.partitions = 4;", K.SET,
         {"key": "spark.sql.shuffle.partitions", "value": "4"}),
        ("set sql-gateway.session.idle-timeout = 10 min", K.SET,
         {"key": "sql-gateway.session.idle-timeout", "value": "10 min"}),
        ("SET k = a = b ", K.SET, {"key": "k", "value": "a = b"}),
        ("SET 'k'='it''s'", K.SET, {"key": "k", "value": "it's"}),
        ("SET 'k'='it\\'s'", K.SET, {"key": "k", "value": "it's"}),
        ('SET "k" = "v"', K.SET, {"key": "k", "value": "v"}),
        ("SET `k.x` = v", K.SET, {"key": "k.x", "value": "v"}),
        ("SET 'a=b' = 'c'", K.SET, {"key": "a=b", "value": "c"}),
        ("SET k = 'a' 'b'", K.SET, {"key": "k", "value": "'a' 'b'"}),
        ("SET k =", K.SET, {"key": "k", "value": ""}),
        ("SET k = v; -- trailing", K.SET, {"key": "k", "value": "v", "text": "SET k = v"}),
        ("SET k = v /* inner */ w", K.SET, {"key": "k", "value": "v /* inner */ w"}),
        ("/* lead */ SET k = v", K.SET, {"key": "k", "value": "v", "text": "SET k = v"}),
        ("SET", K.SHOW_CONFIG, {"key": None, "value": None}),
        ("SET;", K.SHOW_CONFIG, {"key": None}),
        ("SET k", K.SHOW_CONFIG, {"key": "k", "value": None}),
        ("SET 'k'", K.SHOW_CONFIG, {"key": "k"}),
        ("SET -v", K.QUERY, {}),
        # Spark's own SET statements go to Spark.
        ("SET TIME ZONE 'UTC'", K.SPARK_SET, {"key": None}),
        ("SET TIME ZONE LOCAL", K.SPARK_SET, {}),
        ("SET VAR x = 1", K.SPARK_SET, {}),
        ("SET VARIABLE (a, b) = (SELECT 1, 2)", K.SPARK_SET, {}),
        ("SET CATALOG spark_catalog", K.SPARK_SET, {}),
        ("SET var = 1", K.SET, {"key": "var", "value": "1"}),
        # RESET
        ("RESET", K.RESET, {"key": None}),
        ("RESET 'k'", K.RESET, {"key": "k"}),
        ("RESET spark.sql.x;", K.RESET, {"key": "spark.sql.x"}),
        # jars
        ("ADD JAR '/tmp/a b.jar'", K.ADD_JAR, {"path": "/tmp/a b.jar"}),
        ("add jar /tmp/x.jar", K.ADD_JAR, {"path": "/tmp/x.jar"}),
        ("REMOVE JAR '/tmp/x.jar';", K.REMOVE_JAR, {"path": "/tmp/x.jar"}),
        ("SHOW JARS", K.SHOW_JARS, {}),
        ("ADD FILE '/tmp/x.txt'", K.OTHER, {"path": None}),
        # statement sets
        ("BEGIN STATEMENT SET", K.BEGIN_STATEMENT_SET, {}),
        ("begin statement set;", K.BEGIN_STATEMENT_SET, {}),
        ("END", K.END_STATEMENT_SET, {}),
        ("END;", K.END_STATEMENT_SET, {}),
        (
            (
                "EXECUTE STATEMENT SET BEGIN\n INSERT INTO a VALUES (1);\n"
                " INSERT INTO b SELECT ';' FROM c;\nEND;"
            ),
            K.EXECUTE_STATEMENT_SET,
            {"inner": ("INSERT INTO a VALUES (1)", "INSERT INTO b SELECT ';' FROM c")},
        ),
        ("EXECUTE STATEMENT SET BEGIN INSERT INTO a VALUES (1) END", K.EXECUTE_STATEMENT_SET,
         {"inner": ("INSERT INTO a VALUES (1)",)}),
        # jobs
        ("SHOW JOBS", K.SHOW_JOBS, {}),
        ("STOP JOB 'abc'", K.STOP_JOB,
         {"job_id": "abc", "with_savepoint": False, "with_drain": False}),
        ("STOP JOB 'abc' WITH SAVEPOINT", K.STOP_JOB,
         {"job_id": "abc", "with_savepoint": True, "with_drain": False}),
        ("stop job 'abc' with savepoint with drain;", K.STOP_JOB,
         {"job_id": "abc", "with_savepoint": True, "with_drain": True}),
        ("STOP JOB 'abc' WITH DRAIN", K.STOP_JOB,
         {"job_id": "abc", "with_savepoint": False, "with_drain": True}),
        ("DESCRIBE JOB 'abc'", K.DESCRIBE_JOB, {"job_id": "abc"}),
        ("DESC JOB 'abc'", K.DESCRIBE_JOB, {"job_id": "abc"}),
        ("DESCRIBE job", K.QUERY, {"job_id": None}),
        # catalogs and modules
        ("CREATE CATALOG c WITH ('type' = 'hive', 'hive.uri' = 'thrift://h:9083')",
         K.CREATE_CATALOG,
         {"names": ("c",), "options": {"type": "hive", "hive.uri": "thrift://h:9083"},
          "if_not_exists": False}),
        ("CREATE CATALOG IF NOT EXISTS `my cat` WITH (type = 'x', n = 1)", K.CREATE_CATALOG,
         {"names": ("my cat",), "options": {"type": "x", "n": "1"}, "if_not_exists": True}),
        ("CREATE CATALOG c WITH ()", K.CREATE_CATALOG, {"options": {}}),
        ("LOAD MODULE hive", K.LOAD_MODULE, {"names": ("hive",), "options": {}}),
        ("LOAD MODULE hive WITH ('hive-version' = '3.1.3')", K.LOAD_MODULE,
         {"names": ("hive",), "options": {"hive-version": "3.1.3"}}),
        ("UNLOAD MODULE core", K.UNLOAD_MODULE, {"names": ("core",)}),
        # USE
        ("USE db", K.USE, {"names": ("db",), "use_catalog": False}),
        ("USE DATABASE db", K.USE, {"names": ("db",)}),
        ("USE NAMESPACE a.b", K.USE, {"names": ("a", "b")}),
        ("USE c.`my db`", K.USE, {"names": ("c", "my db")}),
        ("USE CATALOG c", K.USE, {"names": ("c",), "use_catalog": True}),
        ("USE database", K.USE, {"names": ("database",)}),
        ("USE IDENTIFIER('db')", K.OTHER, {}),
        ("USE MODULES hive, core", K.OTHER, {}),
        # queries
        ("SELECT 1", K.QUERY, {"keyword": "SELECT"}),
        ("select 1;", K.QUERY, {"text": "select 1"}),
        ("WITH c AS (SELECT 1) SELECT * FROM c", K.QUERY, {"keyword": "WITH"}),
        ("VALUES (1), (2)", K.QUERY, {}),
        ("TABLE t", K.QUERY, {}),
        ("FROM t SELECT a", K.QUERY, {}),
        ("(SELECT 1) UNION (SELECT 2)", K.QUERY, {"keyword": "("}),
        ("EXPLAIN SELECT 1", K.QUERY, {}),
        ("EXPLAIN EXTENDED INSERT INTO t VALUES (1)", K.QUERY, {}),
        ("DESCRIBE TABLE t", K.QUERY, {}),
        ("DESC t", K.QUERY, {}),
        ("SHOW TABLES", K.QUERY, {}),
        ("SHOW CREATE TABLE t", K.QUERY, {}),
        ("LIST JAR", K.QUERY, {}),
        ("LIST FILE", K.QUERY, {}),
        ("/*+ not a hint here */ SELECT /*+ COALESCE(1) */ a FROM t", K.QUERY,
         {"text": "SELECT /*+ COALESCE(1) */ a FROM t"}),
        # DML
        ("INSERT INTO t VALUES (1)", K.DML, {"keyword": "INSERT"}),
        ("INSERT OVERWRITE t SELECT 1", K.DML, {}),
        ("WITH c AS (SELECT 1) INSERT INTO t SELECT * FROM c", K.DML, {}),
        ("FROM s INSERT INTO t SELECT a INSERT INTO u SELECT b", K.DML, {}),
        ("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", K.DML, {}),
        ("UPDATE t SET a = 1", K.DML, {}),
        ("DELETE FROM t WHERE a = 1", K.DML, {}),
        ("LOAD DATA LOCAL INPATH '/tmp/x' INTO TABLE t", K.DML, {"keyword": "LOAD"}),
        # DDL
        ("CREATE TABLE t (a INT)", K.DDL, {"keyword": "CREATE"}),
        ("CREATE TABLE t AS SELECT 1", K.DDL, {}),
        ("DROP TABLE t", K.DDL, {}),
        ("ALTER TABLE t ADD COLUMN b INT", K.DDL, {}),
        ("TRUNCATE TABLE t", K.DDL, {}),
        ("MSCK REPAIR TABLE t", K.DDL, {}),
        ("REPAIR TABLE t", K.DDL, {}),
        ("REFRESH TABLE t", K.DDL, {}),
        ("CACHE TABLE t", K.DDL, {}),
        ("UNCACHE TABLE t", K.DDL, {}),
        ("CLEAR CACHE", K.DDL, {"keyword": "CLEAR"}),
        ("ANALYZE TABLE t COMPUTE STATISTICS", K.DDL, {}),
        ("COMMENT ON TABLE t IS 'x'", K.DDL, {}),
        ("DECLARE VARIABLE v INT DEFAULT 1", K.DDL, {}),
        # anything else is Spark's business
        ("CALL sys.proc()", K.OTHER, {}),
        ("EXECUTE IMMEDIATE 'SELECT 1'", K.OTHER, {}),
        ("BEGIN SELECT 1; SELECT 2; END", K.OTHER, {"keyword": "BEGIN"}),
        ("END x", K.OTHER, {}),
        ("LOAD x", K.OTHER, {}),
        ("CLEAR x", K.OTHER, {}),
    ],
)
def test_parse_statement(statement: str, kind: StatementKind, fields: dict[str, Any]) -> None:
    parsed = parse_statement(statement)
    assert parsed.kind is kind
    for name, value in fields.items():
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
        ("CREATE TABLE t AS SELECT 1", True),
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
    assert (parsed.kind, parsed.key, parsed.value) == (K.SET, "k", "v w")
    with pytest.raises(SqlParseError, match="line 2, column 6"):
        parse_statement("SELECT 1,\r\nfoo, 'x")


def test_parsed_statement_is_frozen_and_hashable() -> None:
    parsed = parse_statement("CREATE CATALOG c WITH ('type' = 'x')")
    assert isinstance(parsed, ParsedStatement)
    with pytest.raises(AttributeError):
        parsed.kind = K.QUERY  # type: ignore[misc]
    with pytest.raises(TypeError):
        parsed.options["type"] = "y"  # type: ignore[index]
    assert hash(parsed) == hash(parse_statement("CREATE CATALOG c WITH ('type' = 'x')"))
    assert parsed == parse_statement("CREATE CATALOG c WITH ('type' = 'x')")
