"""The materialized-table statements of Flink's SQL (FLIP-435), read on the cursor.

``CREATE [OR ALTER] MATERIALIZED TABLE``, ``ALTER MATERIALIZED TABLE``,
``DROP MATERIALIZED TABLE``, ``SHOW MATERIALIZED TABLES`` and ``SHOW CREATE
MATERIALIZED TABLE`` are the gateway's own syntax; the query after ``AS`` is
Spark SQL, kept as written for Spark's parser.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.cursor import Cursor
from sparkgate.sql.lexer import TokenKind, unquote

__all__ = ["REFRESH_MODES", "parse_materialized_statement"]

REFRESH_MODES = ("CONTINUOUS", "FULL")
_UNITS = {"SECOND": "SECOND", "MINUTE": "MINUTE", "HOUR": "HOUR", "DAY": "DAY"}
_UNITS.update({unit + "S": unit for unit in list(_UNITS)})
_ALTER_ACTIONS = ("SUSPEND", "RESUME", "REFRESH", "AS")


def _names(cursor: Cursor) -> tuple[str, ...]:
    """``(a, b, ...)``: a parenthesised list of column names."""
    cursor.expect(TokenKind.LPAREN, "'('")
    names = [cursor.identifier()]
    while (tok := cursor.peek()) is not None and tok.kind is TokenKind.COMMA:
        cursor.take()
        names.append(cursor.identifier())
    cursor.expect(TokenKind.RPAREN, "')'")
    return tuple(names)


def _primary_key(cursor: Cursor) -> tuple[str, ...]:
    """``([CONSTRAINT name] PRIMARY KEY (k, ...) NOT ENFORCED)``: the table's
    constraint list (a materialized table's columns are its query's)."""
    cursor.expect(TokenKind.LPAREN, "'('")
    if cursor.accept("CONSTRAINT"):
        cursor.identifier()
    if not cursor.accept("PRIMARY", "KEY"):
        raise cursor.error(
            "a materialized table's column list holds only its PRIMARY KEY (k) NOT ENFORCED "
            "(its columns are the query's)"
        )
    key = _names(cursor)
    if not cursor.accept("NOT", "ENFORCED"):
        raise cursor.error("expected NOT ENFORCED (Flink does not enforce primary keys)")
    cursor.expect(TokenKind.RPAREN, "')'")
    return key


def _freshness(cursor: Cursor) -> k.Freshness:
    """``= INTERVAL '<n>' <unit>`` after FRESHNESS."""
    cursor.expect(TokenKind.EQUALS, "'=' after FRESHNESS")
    if not cursor.accept("INTERVAL"):
        raise cursor.error("expected INTERVAL '<n>' SECOND|MINUTE|HOUR|DAY after FRESHNESS =")
    tok = cursor.peek()
    if tok is None or tok.kind not in (TokenKind.STRING, TokenKind.NUMBER):
        raise cursor.error("expected the interval's number as a quoted string, e.g. '5'")
    cursor.take()
    text = unquote(tok).strip()
    if not text.isdigit() or int(text) <= 0:
        raise cursor.error(f"the freshness must be a positive whole number, not '{text}'", tok)
    unit = _UNITS.get(cursor.word() or "")
    if unit is None:
        raise cursor.error("expected SECOND, MINUTE, HOUR or DAY as the freshness unit")
    cursor.take()
    return k.Freshness(int(text), unit)


def _refresh_mode(cursor: Cursor) -> str:
    cursor.expect(TokenKind.EQUALS, "'=' after REFRESH_MODE")
    mode = cursor.word()
    if mode not in REFRESH_MODES:
        raise cursor.error("expected CONTINUOUS or FULL after REFRESH_MODE =")
    cursor.take()
    return mode


def _query(cursor: Cursor, statement: str) -> str:
    if cursor.at_end():
        raise cursor.error(f"{statement} needs a query after AS")
    return cursor.rest()


def _parse_create(cursor: Cursor, text: str, or_alter: bool) -> k.CreateMaterializedTable:
    name = cursor.multipart_identifier()
    primary_key: tuple[str, ...] = ()
    comment: str | None = None
    partition_keys: tuple[str, ...] = ()
    options: Mapping[str, str] = MappingProxyType({})
    freshness: k.Freshness | None = None
    mode: str | None = None
    tok = cursor.peek()
    if tok is not None and tok.kind is TokenKind.LPAREN:
        primary_key = _primary_key(cursor)
    while not cursor.accept("AS"):
        if cursor.at_end():
            raise cursor.error("CREATE MATERIALIZED TABLE needs AS <query>")
        if comment is None and cursor.accept("COMMENT"):
            comment = unquote(cursor.expect(TokenKind.STRING, "a quoted comment"))
        elif not partition_keys and cursor.accept("PARTITIONED", "BY"):
            partition_keys = _names(cursor)
        elif not options and cursor.accept("WITH"):
            options = cursor.with_options()
        elif freshness is None and cursor.accept("FRESHNESS"):
            freshness = _freshness(cursor)
        elif mode is None and cursor.accept("REFRESH_MODE"):
            mode = _refresh_mode(cursor)
        else:
            raise cursor.error(
                "expected COMMENT, PARTITIONED BY, WITH, FRESHNESS, REFRESH_MODE or AS"
            )
    return k.CreateMaterializedTable(
        text,
        name,
        _query(cursor, "CREATE MATERIALIZED TABLE"),
        or_alter=or_alter,
        primary_key=primary_key,
        comment=comment,
        partition_keys=partition_keys,
        options=options,
        freshness=freshness,
        refresh_mode=mode,
    )


def _partition_spec(cursor: Cursor) -> Mapping[str, str]:
    """``(k = 'v', ...)`` after PARTITION."""
    cursor.expect(TokenKind.LPAREN, "'(' after PARTITION")
    spec: dict[str, str] = {}
    while True:
        key = cursor.identifier()
        cursor.expect(TokenKind.EQUALS, "'='")
        spec[key] = cursor.option_value()
        tok = cursor.peek()
        if tok is not None and tok.kind is TokenKind.COMMA:
            cursor.take()
            continue
        cursor.expect(TokenKind.RPAREN, "',' or ')'")
        return MappingProxyType(spec)


def _parse_alter(cursor: Cursor, text: str) -> k.AlterMaterializedTable:
    name = cursor.multipart_identifier()
    action = cursor.word()
    if action not in _ALTER_ACTIONS:
        raise cursor.error("expected SUSPEND, RESUME, REFRESH or AS after the table's name")
    cursor.take()
    if action == "AS":
        query = _query(cursor, "ALTER MATERIALIZED TABLE ... AS")
        return k.AlterMaterializedTable(text, name, action, query=query)
    options: Mapping[str, str] = MappingProxyType({})
    partition: Mapping[str, str] = MappingProxyType({})
    if action == "RESUME" and cursor.accept("WITH"):
        options = cursor.with_options()
    elif action == "REFRESH" and cursor.accept("PARTITION"):
        partition = _partition_spec(cursor)
    cursor.expect_end(f"ALTER MATERIALIZED TABLE ... {action}")
    return k.AlterMaterializedTable(text, name, action, options=options, partition=partition)


def _parse_show(cursor: Cursor, text: str) -> k.ShowMaterializedTables:
    database: tuple[str, ...] = ()
    if cursor.accept("FROM") or cursor.accept("IN"):
        database = cursor.multipart_identifier()
    like: k.LikePattern | None = None
    if not cursor.at_end():
        negated = cursor.accept("NOT")
        word = cursor.word()
        if word not in ("LIKE", "ILIKE"):
            raise cursor.error("expected [NOT] LIKE '<pattern>'")
        cursor.take()
        pattern = unquote(cursor.expect(TokenKind.STRING, "a quoted pattern"))
        like = k.LikePattern(pattern, negated, word == "ILIKE")
    cursor.expect_end("SHOW MATERIALIZED TABLES")
    return k.ShowMaterializedTables(text, database, like)


def parse_materialized_statement(cursor: Cursor, text: str, first: str) -> k.Statement | None:
    """The statement if it is one of the materialized-table forms, else None (the
    cursor where it was)."""
    start = cursor.i
    if first == "CREATE":
        or_alter = cursor.accept("OR", "ALTER")
        if cursor.accept("MATERIALIZED", "TABLE"):
            return _parse_create(cursor, text, or_alter)
    elif first == "ALTER" and cursor.accept("MATERIALIZED", "TABLE"):
        return _parse_alter(cursor, text)
    elif first == "DROP" and cursor.accept("MATERIALIZED", "TABLE"):
        if_exists = cursor.accept("IF", "EXISTS")
        name = cursor.multipart_identifier()
        cursor.expect_end("DROP MATERIALIZED TABLE")
        return k.DropMaterializedTable(text, name, if_exists)
    elif first == "SHOW":
        if cursor.accept("MATERIALIZED", "TABLES"):
            return _parse_show(cursor, text)
        if cursor.accept("CREATE", "MATERIALIZED", "TABLE"):
            name = cursor.multipart_identifier()
            cursor.expect_end("SHOW CREATE MATERIALIZED TABLE")
            return k.ShowCreateMaterializedTable(text, name)
    cursor.i = start
    return None
