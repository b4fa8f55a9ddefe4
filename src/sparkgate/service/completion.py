"""Statement completion (FLIP-91 ``completeStatement``) on a session's Spark.

Candidates are whole words: the client replaces the word under the cursor,
so for ``db.ta`` the answer is ``db.table`` (the qualifier as the user typed
it, then the name). The word and its context come from the text before the
cursor; the tables whose columns are offered come from the FROM/JOIN clauses
of the whole statement, because the select list is usually typed (or
edited) before or without its FROM clause in view of the cursor.

Completion is best-effort and interactive: a lookup that fails is skipped,
sources are consulted lazily in context order until the cap is reached, and
keywords and built-in function names are loaded once per process.
"""

from __future__ import annotations

import enum
import logging
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyspark.errors import PySparkException

from sparkgate.api.catalog import quote_identifier
from sparkgate.api.errors import CatalogError
from sparkgate.service.catalog import (
    current_catalog,
    current_database,
    list_catalogs,
    list_databases,
    list_tables,
    list_user_defined_functions,
    system_function_names,
    table_column_names,
)
from sparkgate.service.spark.plans import parse_statement, scala_strings
from sparkgate.sql.lexer import Token, TokenKind, tokenize, unquote

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["MAX_CANDIDATES", "complete_statement", "sql_keywords"]

_log = logging.getLogger(__name__)

MAX_CANDIDATES = 100

_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME_KINDS = (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER)

# Words after which a table name comes.
_TABLE_WORDS = frozenset(
    {"FROM", "JOIN", "INTO", "TABLE", "VIEW", "UPDATE", "DESCRIBE", "DESC", "OVERWRITE"}
)
# Words after which a column or expression comes.
_COLUMN_WORDS = frozenset(
    {"SELECT", "WHERE", "BY", "ON", "HAVING", "AND", "OR", "NOT", "WHEN", "THEN", "ELSE"}
    | {"DISTINCT", "CASE", "USING"}
)
# Words a table reference follows, for finding the statement's tables.
_REF_WORDS = frozenset({"FROM", "JOIN", "UPDATE", "INTO", "TABLE"})
_DATABASE_WORDS = frozenset({"DATABASE", "SCHEMA", "NAMESPACE"})
# Clause starts a comma can belong to; FROM/JOIN make it a table list.
_CLAUSE_WORDS = _COLUMN_WORDS | {"FROM", "JOIN", "SET", "VALUES", "WINDOW"}
# Words that end a table reference rather than alias it.
_NOT_ALIAS = frozenset(
    {"WHERE", "GROUP", "ORDER", "HAVING", "LIMIT", "OFFSET", "JOIN", "INNER", "LEFT"}
    | {"RIGHT", "FULL", "CROSS", "OUTER", "SEMI", "ANTI", "NATURAL", "ON", "USING"}
    | {"UNION", "EXCEPT", "INTERSECT", "MINUS", "WINDOW", "LATERAL", "TABLESAMPLE"}
    | {"SET", "VALUES", "PARTITION", "CLUSTER", "DISTRIBUTE", "SORT", "SELECT", "WITH"}
    | {"QUALIFY", "PIVOT", "UNPIVOT", "TIMESTAMP", "VERSION", "FOR", "AS"}
)


class _Context(enum.Enum):
    GENERAL = "general"
    TABLE = "table"
    COLUMN = "column"
    DATABASE = "database"
    CATALOG = "catalog"
    FUNCTION = "function"


@dataclass(frozen=True)
class _Word:
    """The word under the cursor: ``qualifier_text`` is kept as typed."""

    qualifier: tuple[str, ...]
    qualifier_text: str
    prefix: str
    start: int


@dataclass(frozen=True)
class _TableRef:
    parts: tuple[str, ...]
    alias: str | None


# -- process-wide caches ----------------------------------------------------

# Process-wide on purpose: the keywords are the Spark version's, the same for every session.
_keywords: tuple[str, ...] | None = None
_keywords_lock = threading.Lock()


def sql_keywords(spark: SparkSession) -> tuple[str, ...]:
    """Spark's SQL keywords (upper case), loaded once per process.

    Read from the parser's keyword list in the JVM (one call). ``sql_keywords()``,
    the SQL way, compiles a generator of every keyword on a new JVM: 7 s of a
    core at every gateway start. The keywords only change with the Spark version.
    """
    global _keywords
    with _keywords_lock:
        if _keywords is None:
            try:
                keywords = _jvm_keywords(spark)
                if keywords is None:
                    keywords = [
                        str(row[0])
                        for row in spark.sql("SELECT keyword FROM sql_keywords()").collect()
                    ]
            except PySparkException:
                # Not cached: a cancelled or failed load is retried next time.
                _log.warning("cannot load Spark's SQL keywords", exc_info=True)
                return ()
            _keywords = tuple(sorted({k.upper() for k in keywords}))
        return _keywords


def _jvm_keywords(spark: SparkSession) -> list[str] | None:
    """``SQLKeywordUtils.keywords`` (what ``sql_keywords()`` lists); None if this
    Spark has no such object."""
    try:
        utils = getattr(
            spark.sparkContext._jvm, "org.apache.spark.sql.catalyst.util.SQLKeywordUtils"
        )
        return list(scala_strings(utils.keywords()))
    except Exception:
        _log.debug("No SQLKeywordUtils in this Spark", exc_info=True)
        return None


# -- entry point ------------------------------------------------------------


def complete_statement(spark: SparkSession, statement: str, position: int) -> list[str]:
    """Candidates for the word being typed at ``position`` (0-based offset)."""
    position = max(0, min(position, len(statement)))
    before = statement[:position]
    tokens = tokenize(before)
    if tokens and _inside_literal(tokens[-1], len(before)):
        return []
    significant = [t for t in tokens if not t.is_comment]
    word, rest = _current_word(before, significant)
    if word is None:
        return []
    context = _context(rest)
    completer = _Completer(spark, statement, position, word)
    return completer.run(context, at_start=not rest)


def _inside_literal(last: Token, end: int) -> bool:
    """A string or comment touching the cursor: nothing to complete there."""
    return (last.kind is TokenKind.STRING or last.is_comment) and last.end == end


def _current_word(text: str, tokens: Sequence[Token]) -> tuple[_Word | None, list[Token]]:
    """Split off the dotted name chain that ends at the cursor.

    ``None`` means there is no word to complete (a number, or a chain that
    does not start with a name, such as ``f(x).``).
    """
    end = len(text)
    if not tokens or tokens[-1].end != end:
        return _Word((), "", "", end), list(tokens)
    last = tokens[-1]
    if last.kind is TokenKind.NUMBER:
        return None, list(tokens)
    if last.kind not in (*_NAME_KINDS, TokenKind.DOT):
        return _Word((), "", "", end), list(tokens)  # right after punctuation
    i = len(tokens) - 1
    while i > 0:
        prev, cur = tokens[i - 1], tokens[i]
        alternates = (cur.kind is TokenKind.DOT and prev.kind in _NAME_KINDS) or (
            cur.kind in _NAME_KINDS and prev.kind is TokenKind.DOT
        )
        if prev.end != cur.start or not alternates:
            break
        i -= 1
    chain, rest = list(tokens[i:]), list(tokens[:i])
    if chain[0].kind is TokenKind.DOT:
        return None, list(tokens)
    names = [unquote(t) for t in chain if t.kind is not TokenKind.DOT]
    if chain[-1].kind is TokenKind.DOT:
        return _Word(tuple(names), text[chain[0].start :], "", chain[0].start), rest
    qualifier_text = text[chain[0].start : chain[-1].start]
    return _Word(tuple(names[:-1]), qualifier_text, names[-1], chain[0].start), rest


def _upper(tokens: Sequence[Token], back: int) -> str:
    if len(tokens) < back:
        return ""
    tok = tokens[-back]
    return tok.upper if tok.kind is TokenKind.WORD else ""


def _context(rest: Sequence[Token]) -> _Context:
    """What the word at the cursor names, judged from the words before it."""
    if not rest:
        return _Context.GENERAL
    p1, p2, p3 = _upper(rest, 1), _upper(rest, 2), _upper(rest, 3)
    last = rest[-1]
    if p1 == "CATALOG":
        return _Context.CATALOG
    if p1 == "USE" or p1 in _DATABASE_WORDS:
        return _Context.DATABASE
    if p1 in ("IN", "FROM") and p2 in ("TABLES", "VIEWS", "FUNCTIONS"):
        return _Context.DATABASE
    if p1 == "FUNCTION":
        return _Context.FUNCTION
    if p1 in _TABLE_WORDS or (p1 in ("EXTENDED", "FORMATTED") and p2 in ("DESCRIBE", "DESC")):
        return _Context.TABLE
    if p1 == "EXISTS" and p2 == "IF" and p3 in ("TABLE", "VIEW"):
        return _Context.TABLE
    if last.kind is TokenKind.COMMA:
        return _Context.TABLE if _clause_of_comma(rest) in ("FROM", "JOIN") else _Context.COLUMN
    if p1 in _COLUMN_WORDS:
        return _Context.COLUMN
    if p1 == "SET" and any(t.upper == "UPDATE" for t in rest if t.kind is TokenKind.WORD):
        return _Context.COLUMN
    if last.kind in (TokenKind.LPAREN, TokenKind.EQUALS) or (
        last.kind is TokenKind.OPERATOR and last.text != "*"
    ):
        return _Context.COLUMN
    return _Context.GENERAL


def _clause_of_comma(rest: Sequence[Token]) -> str:
    """The clause word a trailing comma belongs to, at the comma's nesting level."""
    depth = 0
    for tok in reversed(rest[:-1]):
        if tok.kind is TokenKind.RPAREN:
            depth += 1
        elif tok.kind is TokenKind.LPAREN:
            if depth == 0:
                return "("  # a list inside parentheses: function arguments
            depth -= 1
        elif depth == 0 and tok.kind is TokenKind.WORD and tok.upper in _CLAUSE_WORDS:
            return tok.upper
    return ""


# -- table references -------------------------------------------------------


_CURSOR = "__sparkgate_cursor__"


def _table_refs(
    spark: SparkSession, statement: str, skip_from: int, skip_to: int
) -> list[_TableRef]:
    """The tables the statement reads, with their aliases; the word under the cursor
    (``skip_from``..``skip_to``) is not one of them.

    Spark's parser answers when the statement parses with a name in place of that
    word; a statement being typed often does not, and then a light scan guesses
    (a wrong guess only costs a failed lookup).
    """
    text = statement[:skip_from] + _CURSOR + statement[skip_to:]
    plan = parse_statement(spark, text)
    if plan is not None:
        return [
            _TableRef(read.name, read.alias)
            for read in plan.reads
            if not any(_CURSOR in part for part in read.name)
        ]
    return _scanned_table_refs(statement, skip_from, skip_to)


def _scanned_table_refs(statement: str, skip_from: int, skip_to: int) -> list[_TableRef]:
    """Tables named after FROM/JOIN/UPDATE/INTO/TABLE, with their aliases (not a
    function's ``FROM``, as in ``EXTRACT(YEAR FROM ts)``: inside parentheses only
    a subquery's FROM counts)."""
    tokens = [t for t in tokenize(statement) if not t.is_comment]
    refs: list[_TableRef] = []
    selects: list[bool] = [False]  # per parenthesis level: a SELECT seen there
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok.kind is TokenKind.LPAREN:
            selects.append(False)
        elif tok.kind is TokenKind.RPAREN and len(selects) > 1:
            selects.pop()
        elif tok.kind is TokenKind.WORD and tok.upper == "SELECT":
            selects[-1] = True
        if tok.kind is not TokenKind.WORD or tok.upper not in _REF_WORDS:
            continue
        if len(selects) > 1 and not selects[-1]:
            continue
        while True:
            parts, start, i = _read_chain(tokens, i)
            if not parts:
                break
            if i < len(tokens) and tokens[i].kind is TokenKind.LPAREN:
                break  # a table-valued function, not a table
            ref_end = tokens[i - 1].end
            alias, i = _read_alias(tokens, i)
            if not (start <= skip_to and ref_end >= skip_from):
                refs.append(_TableRef(parts, alias))
            if tok.upper == "FROM" and i < len(tokens) and tokens[i].kind is TokenKind.COMMA:
                i += 1
                continue
            break
    return refs


def _read_chain(tokens: Sequence[Token], i: int) -> tuple[tuple[str, ...], int, int]:
    parts: list[str] = []
    start = tokens[i].start if i < len(tokens) else -1
    while i < len(tokens) and tokens[i].kind in _NAME_KINDS:
        parts.append(unquote(tokens[i]))
        i += 1
        if i < len(tokens) and tokens[i].kind is TokenKind.DOT:
            i += 1
        else:
            break
    return tuple(parts), start, i


def _read_alias(tokens: Sequence[Token], i: int) -> tuple[str | None, int]:
    if i < len(tokens) and tokens[i].kind is TokenKind.WORD and tokens[i].upper == "AS":
        i += 1
        if i < len(tokens) and tokens[i].kind in _NAME_KINDS:
            return unquote(tokens[i]), i + 1
        return None, i
    if i < len(tokens) and tokens[i].kind in _NAME_KINDS and tokens[i].upper not in _NOT_ALIAS:
        return unquote(tokens[i]), i + 1
    return None, i


# -- candidate collection ---------------------------------------------------


def _render(name: str) -> str:
    """Identifiers as stored; quoted only when a bare name would not parse."""
    return name if _PLAIN_IDENTIFIER.fullmatch(name) else quote_identifier(name)


@dataclass
class _Completer:
    spark: SparkSession
    statement: str
    position: int
    word: _Word
    _out: list[str] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)
    _refs: list[_TableRef] | None = None
    _columns: dict[tuple[str, ...], list[str]] = field(default_factory=dict)

    # -- driving --

    def run(self, context: _Context, *, at_start: bool) -> list[str]:
        for source in self._sources(context, at_start=at_start):
            if len(self._out) >= MAX_CANDIDATES:
                break
            try:
                source()
            except (CatalogError, PySparkException):
                _log.debug("completion source %s failed", source.__name__, exc_info=True)
        return self._out[:MAX_CANDIDATES]

    def _sources(self, context: _Context, *, at_start: bool) -> list[Callable[[], None]]:
        if self.word.qualifier:
            if context is _Context.CATALOG:
                return []
            if context is _Context.DATABASE:
                return [self._databases_in_qualifier]
            if context is _Context.TABLE:
                return [self._tables_in_qualifier, self._databases_in_qualifier]
            return [self._ref_columns, self._tables_in_qualifier, self._databases_in_qualifier]
        if at_start:
            return [self._keywords]
        return {
            _Context.TABLE: [self._tables, self._databases, self._catalogs, self._keywords],
            _Context.DATABASE: [self._databases, self._catalogs, self._keywords],
            _Context.CATALOG: [self._catalogs],
            _Context.FUNCTION: [self._functions, self._keywords],
            _Context.COLUMN: [self._all_columns, self._functions, self._keywords],
            _Context.GENERAL: [self._keywords, self._functions, self._all_columns, self._tables],
        }[context]

    def _add(self, names: Iterable[str], render: Callable[[str], str] = _render) -> None:
        prefix = self.word.prefix.lower()
        for name in names:
            if len(self._out) >= MAX_CANDIDATES:
                return
            if not name.lower().startswith(prefix):
                continue
            candidate = self.word.qualifier_text + render(name)
            key = candidate.lower()
            if key not in self._seen:
                self._seen.add(key)
                self._out.append(candidate)

    def _keyword_case(self, keyword: str) -> str:
        prefix = self.word.prefix
        return keyword.lower() if prefix and prefix.islower() else keyword.upper()

    # -- sources --

    def _keywords(self) -> None:
        self._add(sql_keywords(self.spark), self._keyword_case)

    def _functions(self) -> None:
        keywords = frozenset(sql_keywords(self.spark))

        def render(name: str) -> str:
            return self._keyword_case(name) if name.upper() in keywords else _render(name)

        builtin = (n for n in system_function_names(self.spark) if _PLAIN_IDENTIFIER.fullmatch(n))
        self._add(sorted(builtin, key=str.lower), render)
        user = list_user_defined_functions(
            self.spark, current_catalog(self.spark), current_database(self.spark)
        )
        self._add(sorted((f.identifier.name for f in user), key=str.lower))

    def _catalogs(self) -> None:
        self._add(list_catalogs(self.spark))

    def _databases(self) -> None:
        names = list_databases(self.spark, current_catalog(self.spark))
        self._add(sorted(names, key=str.lower))

    def _tables(self) -> None:
        infos = list_tables(self.spark, current_catalog(self.spark), current_database(self.spark))
        self._add(sorted((t.identifier.name for t in infos), key=str.lower))

    def _tables_in_qualifier(self) -> None:
        qualifier = self.word.qualifier
        if len(qualifier) == 1:
            catalog, database = current_catalog(self.spark), qualifier[0]
        elif len(qualifier) == 2:
            catalog, database = qualifier
        else:
            return
        infos = list_tables(self.spark, catalog, database)
        # Session temp views show up in every database but resolve only bare.
        names = (t.identifier.name for t in infos if t.identifier.database is not None)
        self._add(sorted(names, key=str.lower))

    def _databases_in_qualifier(self) -> None:
        if len(self.word.qualifier) == 1:
            self._add(sorted(list_databases(self.spark, self.word.qualifier[0]), key=str.lower))

    def _table_refs(self) -> list[_TableRef]:
        if self._refs is None:
            self._refs = _table_refs(self.spark, self.statement, self.word.start, self.position)
        return self._refs

    def _columns_of(self, ref: _TableRef) -> list[str]:
        if ref.parts not in self._columns:
            try:
                self._columns[ref.parts] = table_column_names(self.spark, ref.parts)
            except CatalogError:
                _log.debug("no columns for %s", ref.parts, exc_info=True)
                self._columns[ref.parts] = []
        return self._columns[ref.parts]

    def _all_columns(self) -> None:
        for ref in self._table_refs():
            self._add(self._columns_of(ref))

    def _ref_columns(self) -> None:
        """Columns of the FROM table the qualifier names (by alias or name suffix)."""
        qualifier = tuple(q.lower() for q in self.word.qualifier)
        for ref in self._table_refs():
            by_alias = ref.alias is not None and (ref.alias.lower(),) == qualifier
            by_name = tuple(p.lower() for p in ref.parts[-len(qualifier) :]) == qualifier
            if by_alias or by_name:
                self._add(self._columns_of(ref))
