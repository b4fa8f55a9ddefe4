"""Flink's view statements: ``CREATE [TEMPORARY] VIEW [IF NOT EXISTS]`` and
``DROP [TEMPORARY] VIEW [IF EXISTS]``.

Only Flink's grammar is taken here; a view statement with Spark's own clauses
(``OR REPLACE``, ``GLOBAL``, ``TBLPROPERTIES``, column comments, ...) is left
to Spark's parser.
"""

from __future__ import annotations

from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.cursor import Cursor
from sparkgate.sql.lexer import TokenKind, unquote

__all__ = ["parse_view_statement"]


def parse_view_statement(cursor: Cursor, text: str, first: str) -> k.Statement | None:
    """The view statement at ``cursor`` (just after ``first``), or None with the
    cursor untouched."""
    start = cursor.i
    form: k.Statement | None = None
    if first == "CREATE":
        form = _create(cursor, text)
    elif first == "DROP":
        form = _drop(cursor, text)
    if form is None:
        cursor.i = start
    return form


def _columns(cursor: Cursor) -> tuple[str, ...] | None:
    """``(a, b, ...)``: plain names only (Spark's column comments are Spark's)."""
    cursor.take()  # (
    names = []
    while True:
        tok = cursor.peek()
        if tok is None or tok.kind not in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER):
            return None
        names.append(unquote(cursor.take()))
        sep = cursor.peek()
        if sep is not None and sep.kind is TokenKind.COMMA:
            cursor.take()
            continue
        if sep is not None and sep.kind is TokenKind.RPAREN:
            cursor.take()
            return tuple(names)
        return None


def _create(cursor: Cursor, text: str) -> k.CreateView | None:
    temporary = cursor.accept("TEMPORARY")
    if not cursor.accept("VIEW"):
        return None
    if_not_exists = cursor.accept("IF", "NOT", "EXISTS")
    name = cursor.optional_name()
    if name is None:
        return None
    columns: tuple[str, ...] = ()
    tok = cursor.peek()
    if tok is not None and tok.kind is TokenKind.LPAREN:
        listed = _columns(cursor)
        if listed is None:
            return None
        columns = listed
    comment = None
    if cursor.accept("COMMENT"):
        comment = cursor.optional_string()
        if comment is None:
            return None
    if not cursor.accept("AS") or cursor.at_end():
        return None
    return k.CreateView(
        text,
        name,
        cursor.rest(),
        temporary=temporary,
        if_not_exists=if_not_exists,
        columns=columns,
        comment=comment,
    )


def _drop(cursor: Cursor, text: str) -> k.DropView | None:
    temporary = cursor.accept("TEMPORARY")
    if not cursor.accept("VIEW"):
        return None
    if_exists = cursor.accept("IF", "EXISTS")
    name = cursor.optional_name()
    if name is None or not cursor.at_end():
        return None
    return k.DropView(text, name, temporary=temporary, if_exists=if_exists)
