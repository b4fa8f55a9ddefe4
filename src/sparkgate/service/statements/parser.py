"""The one parser of the gateway's own statements; it also classifies Spark's.

Gateway statements (SET, RESET, jars, statement sets, jobs, connector DDL,
CREATE CATALOG, modules) are parsed fully because the gateway runs them
itself. Spark SQL is classified by its leading keywords only, so the service
knows which handler runs it; Spark's parser then accepts or rejects it and is
the authority on its structure. Each statement becomes one typed value of
:mod:`~sparkgate.service.statements.kinds`, once.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType

from sparkgate.api.errors import SqlParseError, UnsupportedStatementError
from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.catalog_forms import parse_catalog_statement
from sparkgate.service.statements.cursor import Cursor
from sparkgate.service.statements.database_forms import parse_database_statement
from sparkgate.service.statements.explain_forms import parse_explain
from sparkgate.service.statements.function_forms import parse_function_statement
from sparkgate.service.statements.materialized_forms import parse_materialized_statement
from sparkgate.service.statements.plan_forms import parse_plan_statement
from sparkgate.service.statements.table_as_forms import parse_table_as_select
from sparkgate.service.statements.view_forms import parse_view_statement
from sparkgate.service.streaming.alter import parse_alter_table
from sparkgate.service.streaming.ddl import parse_connector_create
from sparkgate.sql.deadline import check_deadline
from sparkgate.sql.flink_functions import flink_functions
from sparkgate.sql.flink_refusals import refuse_unsupported
from sparkgate.sql.flink_spellings import spark_spellings
from sparkgate.sql.lexer import (
    Token,
    TokenKind,
    ensure_terminated,
    position,
    tokenize,
    unquote,
)
from sparkgate.sql.splitter import group_statements, split_statements, statement_text
from sparkgate.sql.window_tvfs import window_functions

__all__ = ["INCOMPLETE_MARK", "QUERY_KEYWORDS", "incomplete", "parse_statement"]

_log = logging.getLogger(__name__)


def _single_value(cursor: Cursor) -> str | None:
    """The unquoted value if the rest is one string literal, else ``None``."""
    tok = cursor.peek()
    if tok is not None and tok.kind is TokenKind.STRING and cursor.peek(1) is None:
        return unquote(tok)
    return None


def _name(cursor: Cursor, statement: str) -> str:
    """A key or path: one quoted token, or raw text without whitespace."""
    quoted = cursor.peek()
    if (
        quoted is not None
        and quoted.kind in (TokenKind.STRING, TokenKind.QUOTED_IDENTIFIER)
        and cursor.peek(1) is None
    ):
        cursor.take()
        return unquote(quoted)
    raw = cursor.rest()
    if not raw or any(ch.isspace() for ch in raw):
        raise cursor.error(f"{statement} expects one name or a quoted string")
    cursor.i = len(cursor.tokens)
    return raw


def _parse_set(cursor: Cursor, text: str) -> k.Statement:
    first = cursor.word()
    second = cursor.peek(1)
    continues = second is not None and second.kind is not TokenKind.EQUALS
    if (first == "TIME" and cursor.word(1) == "ZONE") or (
        first in ("VAR", "VARIABLE", "CATALOG") and continues
    ):
        return k.SparkSet(text, _keywords(cursor.tokens), ddl=False)
    if cursor.at_end():
        return k.ShowConfig(text, None)
    tok = cursor.peek()
    if tok is not None and tok.text == "-" and cursor.word(1) == "V" and cursor.peek(2) is None:
        # Spark's `SET -v` lists every option with its documentation.
        return k.SparkQuery(text, "SET", relational=False)
    equals = next(
        (j for j, t in enumerate(cursor.tokens) if j >= cursor.i and t.kind is TokenKind.EQUALS),
        None,
    )
    if equals is None:
        return k.ShowConfig(text, _name(cursor, "SET"))
    if equals == cursor.i:
        raise cursor.error("SET needs a key before '='")
    key_cursor = Cursor(cursor.source, cursor.tokens[cursor.i : equals])
    key = _name(key_cursor, "SET")
    cursor.i = equals + 1
    value = _single_value(cursor)
    if value is None:
        value = cursor.rest().strip()
    return k.Set(text, key, value)


def _jar_path(cursor: Cursor, verb: str) -> str:
    if cursor.at_end():
        raise cursor.error(f"{verb} JAR needs a path")
    first = cursor.peek()
    path = _single_value(cursor)
    if path is None:
        if first is not None and first.kind is TokenKind.STRING:
            raise cursor.error(f"{verb} JAR takes one path", cursor.peek(1))
        path = cursor.rest()
    return path


def _job_id(cursor: Cursor, statement: str) -> str:
    tok = cursor.peek()
    if tok is None or tok.kind is not TokenKind.STRING:
        raise cursor.error(f"{statement} expects a quoted job id")
    cursor.take()
    return unquote(tok)


def _parse_stop_job(cursor: Cursor, text: str) -> k.StopJob:
    job_id = _job_id(cursor, "STOP JOB")
    savepoint = drain = False
    while not cursor.at_end():
        if not savepoint and cursor.accept("WITH", "SAVEPOINT"):
            savepoint = True
        elif not drain and cursor.accept("WITH", "DRAIN"):
            drain = True
        else:
            raise cursor.error("expected WITH SAVEPOINT or WITH DRAIN")
    return k.StopJob(text, job_id, with_savepoint=savepoint, with_drain=drain)


def _parse_execute_statement_set(cursor: Cursor, text: str) -> k.ExecuteStatementSet:
    begin = cursor.peek()
    if begin is None:
        raise incomplete(cursor.source, "expected BEGIN after EXECUTE STATEMENT SET")
    if begin.upper != "BEGIN":
        raise cursor.error("expected BEGIN after EXECUTE STATEMENT SET")
    last = cursor.tokens[-1]
    if last is begin or last.upper != "END":
        raise incomplete(cursor.source, "EXECUTE STATEMENT SET BEGIN is missing its END")
    body = cursor.source[begin.end : last.start]
    members = tuple(parse_statement(inner) for inner in split_statements(body))
    if not members:  # Flink's grammar wants one INSERT at least (BEGIN; END; is a client's)
        raise cursor.error("expected INSERT between BEGIN and END of EXECUTE STATEMENT SET", last)
    return k.ExecuteStatementSet(text, members)


def _parse_module(cursor: Cursor, text: str, verb: str) -> k.Statement:
    name = cursor.identifier()
    if verb == "UNLOAD":
        cursor.expect_end("UNLOAD MODULE")
        return k.UnloadModule(text, name)
    options: Mapping[str, str] = MappingProxyType({})
    if cursor.accept("WITH"):
        options = cursor.with_options()
    cursor.expect_end("LOAD MODULE")
    return k.LoadModule(text, name, options)


def _parse_use(cursor: Cursor, text: str) -> k.Statement:
    if cursor.accept("MODULES"):
        modules = [cursor.identifier()]
        while (tok := cursor.peek()) is not None and tok.kind is TokenKind.COMMA:
            cursor.take()
            modules.append(cursor.identifier())
        cursor.expect_end("USE MODULES")
        return k.UseModules(text, tuple(modules))
    catalog = cursor.word() == "CATALOG" and cursor.peek(1) is not None
    if catalog:
        cursor.take()
        name = cursor.identifier()
        cursor.expect_end("USE CATALOG")
        return k.Use(text, (name,), catalog=True)
    if cursor.word() in ("DATABASE", "SCHEMA", "NAMESPACE") and cursor.peek(1) is not None:
        cursor.take()
    try:
        names = cursor.multipart_identifier()
        cursor.expect_end("USE")
    except SqlParseError:
        # e.g. `USE IDENTIFIER('db')`: Spark knows what to do.
        return k.SparkCommand(text, _keywords(cursor.tokens), ddl=False)
    return k.Use(text, names, catalog=False)


def _parse_drop_temporary(cursor: Cursor, text: str) -> k.Statement:
    """``DROP TEMPORARY TABLE [IF EXISTS] name`` after DROP TEMPORARY TABLE."""
    if_exists = cursor.accept("IF", "EXISTS")
    rest = cursor.tokens[cursor.i :]
    if len(rest) != 1 or rest[0].kind not in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER):
        raise UnsupportedStatementError(
            f"Expected DROP TEMPORARY TABLE [IF EXISTS] name (one part): {text}"
        )
    return k.DropTemporaryTable(text, unquote(rest[0]), if_exists)


def _parse_create(cursor: Cursor, text: str) -> k.Statement:
    """Flink's connector DDL, or Spark's own CREATE."""
    found = parse_connector_create(text)
    if found is not None:
        return k.ConnectorTableCreate(text, *found)
    return k.SparkCommand(text, _keywords(cursor.tokens), ddl=True)


# Flink's statement forms with no meaning on Spark, and why.
_MODEL_REASON = (
    "Spark has no model catalog: Flink's models are called through ML_PREDICT, which Spark "
    "SQL does not have"
)


def _refused(cursor: Cursor, text: str, first: str) -> k.Refused | None:
    second, third = cursor.word(), cursor.word(1)
    if first in ("CREATE", "ALTER", "DROP", "DESCRIBE", "DESC") and (
        second == "MODEL"
        or (second == "TEMPORARY" and third == "MODEL")
        or (second == "OR" and cursor.word(2) == "MODEL")
    ):
        return k.Refused(text, f"{first} MODEL", _MODEL_REASON)
    if first == "SHOW" and (second == "MODELS" or (second == "CREATE" and third == "MODEL")):
        return k.Refused(
            text, "SHOW MODELS" if second == "MODELS" else "SHOW CREATE MODEL", _MODEL_REASON
        )
    return None


def _has_top_level_insert(tokens: list[Token]) -> bool:
    """`WITH ... INSERT` and `FROM t INSERT ...` write rather than query."""
    depth = 0
    for tok in tokens:
        if tok.kind is TokenKind.LPAREN:
            depth += 1
        elif tok.kind is TokenKind.RPAREN:
            depth -= 1
        elif depth == 0 and tok.kind is TokenKind.WORD and tok.upper == "INSERT":
            return True
    return False


def _keywords(tokens: list[Token]) -> tuple[str, ...]:
    return tuple(t.upper for t in tokens[:3] if t.kind is TokenKind.WORD)


def _like(cursor: Cursor) -> k.LikePattern | None:
    """``[NOT] [I]LIKE 'p'`` or Spark's bare ``'p'``, when it ends the statement."""
    start = cursor.i
    negated = cursor.accept("NOT")
    word = cursor.word()
    sql = word in ("LIKE", "ILIKE")
    if sql:
        cursor.take()
    tok = cursor.peek()
    if (negated and not sql) or tok is None or tok.kind is not TokenKind.STRING:
        cursor.i = start
        return None
    cursor.take()
    if not cursor.at_end():
        cursor.i = start
        return None
    return k.LikePattern(unquote(tok), negated, word == "ILIKE", sql)


def _listing_namespace(cursor: Cursor) -> tuple[str, ...] | None:
    """``FROM|IN name`` of a listing: the name, () when absent, None when malformed."""
    if cursor.accept("FROM") or cursor.accept("IN"):
        return cursor.optional_name()
    return ()


# DESCRIBE <word> <more> describes something other than a table.
_DESCRIBE_OTHER = frozenset(
    {"DATABASE", "SCHEMA", "NAMESPACE", "FUNCTION", "QUERY", "CATALOG", "EXTENDED", "FORMATTED"}
    | {"JOB", "MODEL", "SELECT", "WITH", "VALUES", "FROM"}
)
_DATABASE_WORDS = frozenset({"DATABASES", "SCHEMAS", "NAMESPACES"})


def _parse_metadata(cursor: Cursor, text: str, first: str) -> k.MetadataQuery:
    """The SHOW / DESCRIBE forms the gateway shapes; any other is Spark's own."""
    form = _metadata_form(cursor, text, first)
    return form if form is not None else k.MetadataQuery(text, first, relational=False)


def _described(cursor: Cursor) -> tuple[tuple[str, ...] | None, bool]:
    """``[EXTENDED] name`` after DESCRIBE FUNCTION|DATABASE: the name, and whether
    EXTENDED was written (an object named `extended` alone is that name)."""
    extended = cursor.word() == "EXTENDED" and cursor.peek(1) is not None
    if extended:
        cursor.take()
    return cursor.optional_name(), extended


def _metadata_form(cursor: Cursor, text: str, first: str) -> k.MetadataQuery | None:
    def at_end(form: k.MetadataQuery) -> k.MetadataQuery | None:
        return form if cursor.at_end() else None

    if first in ("DESCRIBE", "DESC"):
        if cursor.word() == "FUNCTION" and cursor.peek(1) is not None:
            cursor.take()
            function, extended = _described(cursor)
            return (
                at_end(k.DescribeFunction(text, first, False, function, extended))
                if function
                else None
            )
        if cursor.word() in ("DATABASE", "SCHEMA", "NAMESPACE") and cursor.peek(1) is not None:
            cursor.take()
            database, extended = _described(cursor)
            return (
                at_end(k.DescribeDatabase(text, first, False, database, extended))
                if database
                else None
            )
        if cursor.word() == "TABLE" and cursor.peek(1) is not None:
            cursor.take()
        if cursor.word() in _DESCRIBE_OTHER and cursor.peek(1) is not None:
            return None
        table = cursor.optional_name()
        return at_end(k.DescribeTable(text, first, False, table)) if table else None
    if cursor.accept("CURRENT", "CATALOG"):
        return at_end(k.ShowCurrentCatalog(text, first, False))
    if cursor.accept("CURRENT", "DATABASE"):
        return at_end(k.ShowCurrentDatabase(text, first, False))
    full = cursor.accept("FULL", "MODULES")
    if full or cursor.accept("MODULES"):
        return at_end(k.ShowModules(text, first, False, full))
    second = cursor.word()
    if second in ("TABLES", "VIEWS"):
        cursor.take()
        database = _listing_namespace(cursor)
        if database is None:
            return None
        like = None if cursor.at_end() else _like(cursor)
        return at_end(k.ShowTables(text, first, False, database, like, second == "VIEWS"))
    if second == "CREATE" and cursor.word(1) in ("TABLE", "VIEW"):
        view = cursor.word(1) == "VIEW"
        cursor.i += 2
        table = cursor.optional_name()
        return at_end(k.ShowCreateTable(text, first, False, table, view)) if table else None
    if second == "CATALOGS":
        cursor.take()
        like = None if cursor.at_end() else _like(cursor)
        if not cursor.at_end() or (like is not None and not like.sql):
            return k.ShowCatalogs(text, first, False, spark_form=True)
        return k.ShowCatalogs(text, first, False, False, like)
    if second in _DATABASE_WORDS:
        cursor.take()
        catalog = _listing_namespace(cursor)
        like = None if cursor.at_end() else _like(cursor)
        if catalog is None or not cursor.at_end() or (like is not None and not like.sql):
            return k.ShowDatabases(text, first, False, spark_form=True)
        return k.ShowDatabases(text, first, False, False, catalog, like)
    if second == "PROCEDURES":
        cursor.take()
        database = _listing_namespace(cursor)
        like = None if cursor.at_end() else _like(cursor)
        if database is None or (like is not None and not like.sql):
            return None
        return at_end(k.ShowProcedures(text, first, False, database, like))
    if "FUNCTIONS" in (second, cursor.word(1)):
        spark_form = k.ShowFunctions(text, first, False, spark_form=True)
        scope = None if second == "FUNCTIONS" else second
        if scope is not None and scope not in ("USER", "SYSTEM", "ALL"):
            return spark_form
        cursor.i += 1 if scope is None else 2
        database = _listing_namespace(cursor)
        like = None if cursor.at_end() else _like(cursor)
        if database is None or not cursor.at_end() or (like is not None and not like.sql):
            return spark_form
        return k.ShowFunctions(text, first, False, False, scope, database, like)
    if second == "COLUMNS" and cursor.word(1) in ("FROM", "IN"):
        cursor.i += 2
        table = cursor.optional_name()
        like = None if cursor.at_end() else _like(cursor)
        if table is None or (like is not None and not like.sql):
            return None
        return at_end(k.DescribeTable(text, first, False, table, like, columns=True))
    return None


QUERY_KEYWORDS = frozenset({"SELECT", "WITH", "VALUES", "FROM", "TABLE", "("})
"""The one set of words that start a query in the SQL sense (a ``SparkQuery``
that is ``relational``); ``WITH`` and ``FROM`` only when no INSERT follows."""

# Spark statements that answer with rows without being relational queries.
_ROW_WORDS = frozenset({"EXPLAIN", "DESCRIBE", "DESC", "SHOW"})
_METADATA_WORDS = frozenset({"DESCRIBE", "DESC", "SHOW"})
_DML_WORDS = frozenset({"INSERT", "MERGE", "UPDATE", "DELETE"})
_DDL_WORDS = frozenset(
    {
        "CREATE",
        "DROP",
        "ALTER",
        "TRUNCATE",
        "MSCK",
        "REFRESH",
        "CACHE",
        "UNCACHE",
        "ANALYZE",
        "REPAIR",
        "REPLACE",
        "DECLARE",
    }
)
_LIST_TARGETS = frozenset({"FILE", "FILES", "JAR", "JARS", "ARCHIVE", "ARCHIVES"})


def _parse(cursor: Cursor, text: str) -> k.Statement:
    first_token = cursor.peek()
    assert first_token is not None
    if first_token.kind is TokenKind.LPAREN:
        return k.SparkQuery(text, "(", relational=True)
    first = cursor.word()
    if first is None:
        return k.SparkCommand(text, (first_token.upper,), ddl=False)
    cursor.take()

    if first == "SET":
        return _parse_set(cursor, text)
    if first == "RESET":
        return k.Reset(text, None if cursor.at_end() else _name(cursor, "RESET"))
    if first in ("ADD", "REMOVE") and cursor.accept("JAR"):
        path = _jar_path(cursor, first)
        return k.AddJar(text, path) if first == "ADD" else k.RemoveJar(text, path)
    if first == "SHOW":
        if cursor.accept("JARS"):
            cursor.expect_end("SHOW JARS")
            return k.ShowJars(text)
        if cursor.accept("JOBS"):
            cursor.expect_end("SHOW JOBS")
            return k.ShowJobs(text)
    if first in ("DESCRIBE", "DESC") and cursor.word() == "JOB":
        tok = cursor.peek(1)
        if tok is not None and tok.kind is TokenKind.STRING:
            cursor.take()
            job_id = _job_id(cursor, "DESCRIBE JOB")
            cursor.expect_end("DESCRIBE JOB")
            return k.DescribeJob(text, job_id)
    if first == "STOP" and cursor.accept("JOB"):
        return _parse_stop_job(cursor, text)
    if first == "BEGIN" and cursor.accept("STATEMENT", "SET"):
        cursor.expect_end("BEGIN STATEMENT SET")
        return k.BeginStatementSet(text)
    if first == "END" and cursor.at_end():
        return k.EndStatementSet(text)
    if first == "EXECUTE" and cursor.accept("STATEMENT", "SET"):
        return _parse_execute_statement_set(cursor, text)
    if first == "STATEMENT" and cursor.accept("SET"):  # after COMPILE PLAN ... FOR
        return _parse_execute_statement_set(cursor, text)
    if first == "EXECUTE" and (cursor.word() in _DML_WORDS or cursor.word() in QUERY_KEYWORDS):
        # Flink's EXECUTE INSERT ... and EXECUTE SELECT ...: the statement itself.
        return parse_statement(cursor.rest())
    plan = parse_plan_statement(cursor, text, first, parse_statement)
    if plan is not None:
        return plan
    if first == "EXPLAIN":
        explained = parse_explain(cursor, text, parse_statement)
        if explained is not None:
            return explained
    for read in (parse_materialized_statement, parse_catalog_statement):
        form = read(cursor, text, first)
        if form is not None:
            return form
    if first in ("LOAD", "UNLOAD") and cursor.accept("MODULE"):
        return _parse_module(cursor, text, first)
    if first == "USE":
        return _parse_use(cursor, text)
    if first == "DROP" and cursor.accept("TEMPORARY", "TABLE"):
        return _parse_drop_temporary(cursor, text)
    if first == "ALTER" and cursor.word() == "TABLE":
        alteration = parse_alter_table(text)
        if alteration is not None:
            return k.AlterTable(text, alteration)
    for read in (
        _refused,
        parse_function_statement,
        parse_view_statement,
        parse_database_statement,
    ):
        form = read(cursor, text, first)
        if form is not None:
            return form
    if first in ("CREATE", "REPLACE"):
        table_as = parse_table_as_select(cursor, text, first)
        if table_as is not None:
            return table_as
    if first == "CREATE":
        return _parse_create(cursor, text)
    if first in ("WITH", "FROM") and _has_top_level_insert(cursor.tokens):
        return k.Dml(text, first)
    if first in QUERY_KEYWORDS:
        return k.SparkQuery(text, first, relational=True)
    if first in _METADATA_WORDS:
        return _parse_metadata(cursor, text, first)
    if first in _ROW_WORDS or (first == "LIST" and cursor.word() in _LIST_TARGETS):
        return k.SparkQuery(text, first, relational=False)
    if first in _DML_WORDS or (first == "LOAD" and cursor.word() == "DATA"):
        return k.Dml(text, first)
    ddl = (
        first in _DDL_WORDS
        or (first == "CLEAR" and cursor.word() == "CACHE")
        or (first == "COMMENT" and cursor.word() == "ON")
    )
    return k.SparkCommand(text, _keywords(cursor.tokens), ddl=ddl)


INCOMPLETE_MARK = 'Encountered "<EOF>"'


def incomplete(statement: str, message: str) -> SqlParseError:
    """The error for a statement that ends before it is complete.

    It carries Flink's parser text ``Encountered "<EOF>"``: Flink's SQL client
    cuts a statement at its first ``;`` and, on an error saying so, keeps
    reading lines (a statement set, a BEGIN block, an open quote or paren).
    """
    end = len(statement.rstrip())
    return SqlParseError(f"{INCOMPLETE_MARK} at {position(statement, end)}: {message}")


def _open_parens(tokens: list[Token]) -> bool:
    depth = 0
    for tok in tokens:
        if tok.kind is TokenKind.LPAREN:
            depth += 1
        elif tok.kind is TokenKind.RPAREN:
            depth -= 1
    return depth > 0


def _block_left_open(tokens: list[Token]) -> bool:
    """Whether a block (BEGIN ... END, a statement set) is still open at the end:
    a ``;`` added after the statement would not end it.

    ``not is_complete(statement + "\n;")`` without lexing the statement again
    (half the parse time of a long one): the splitter leaves a ``;`` that ends
    nothing inside the last statement.
    """
    end = tokens[-1].end if tokens else 0
    closing = Token(TokenKind.SEMICOLON, ";", end, end + 1)
    groups = group_statements([*tokens, closing])
    return bool(groups) and groups[-1][-1] is closing


def _ensure_complete(statement: str, tokens: list[Token], groups: list[list[Token]]) -> None:
    try:
        ensure_terminated(statement, tokens)
    except SqlParseError as exc:
        raise incomplete(statement, str(exc)) from None
    if _block_left_open(tokens):
        words = [t.upper for t in (groups[0] if groups else [])[:3]]
        statement_set = words == ["EXECUTE", "STATEMENT", "SET"]
        block = "EXECUTE STATEMENT SET BEGIN" if statement_set else "BEGIN"
        raise incomplete(statement, f"{block} is missing its END")


def parse_statement(statement: str) -> k.Statement:
    """Parse one statement into its typed value.

    A trailing ``;`` and comments around the statement are allowed.

    Raises ``SqlParseError`` when there is no statement, more than one, an
    unterminated quote or comment, or a malformed gateway statement. An
    incomplete statement's error starts with :data:`INCOMPLETE_MARK`.
    Within a :func:`~sparkgate.sql.deadline.parse_deadline` it raises
    ``ParseTimeoutError`` once the time is up.
    """
    # Flink's TIMESTAMP(3), default_catalog.default_database, window functions, ARRAY[...].
    statement = flink_functions(window_functions(spark_spellings(statement)))
    refuse_unsupported(statement)
    tokens = tokenize(statement)
    # Between the passes too: the lexer and the splitter check every few thousand tokens.
    check_deadline()
    groups = group_statements(tokens)
    check_deadline()
    _ensure_complete(statement, tokens, groups)
    check_deadline()
    if not groups:
        raise SqlParseError("no statement")
    if len(groups) > 1:
        raise SqlParseError(f"expected one statement, found {len(groups)}")
    group = groups[0]
    text = statement_text(statement, tokens, group)
    try:
        parsed = _parse(Cursor(statement, group), text)
    except SqlParseError as exc:
        if _open_parens(group):
            raise incomplete(statement, str(exc)) from None
        raise
    if _open_parens(group):
        raise incomplete(statement, "a '(' is not closed")
    _log.debug("parsed %s statement", type(parsed).__name__)
    return parsed
