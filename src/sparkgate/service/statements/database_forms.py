"""Flink's database statements where they differ from Spark's:
``CREATE DATABASE ... WITH ('k' = 'v')``, ``ALTER DATABASE d SET ('k' = 'v')``
and ``DROP DATABASE`` (which Flink refuses for the database in use).

``CREATE DATABASE`` without ``WITH (...)`` and Spark's ``DBPROPERTIES`` or
``LOCATION`` forms are Spark's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.cursor import Cursor
from sparkgate.sql.lexer import TokenKind

__all__ = ["parse_database_statement"]

_DATABASE = ("DATABASE", "SCHEMA")


def parse_database_statement(cursor: Cursor, text: str, first: str) -> k.Statement | None:
    """The database statement at ``cursor`` (just after ``first``), or None with
    the cursor untouched."""
    if cursor.word() not in _DATABASE or first not in ("CREATE", "ALTER", "DROP"):
        return None
    start = cursor.i
    cursor.take()
    form = {"CREATE": _create, "ALTER": _alter, "DROP": _drop}[first](cursor, text)
    if form is None:
        cursor.i = start
    return form


def _options(cursor: Cursor) -> Mapping[str, str] | None:
    tok = cursor.peek()
    if tok is None or tok.kind is not TokenKind.LPAREN:
        return None
    return cursor.with_options()


def _create(cursor: Cursor, text: str) -> k.CreateDatabase | None:
    if_not_exists = cursor.accept("IF", "NOT", "EXISTS")
    name = cursor.optional_name()
    if name is None:
        return None
    comment = None
    if cursor.accept("COMMENT"):
        comment = cursor.optional_string()
        if comment is None:
            return None
    options: Mapping[str, str] = MappingProxyType({})
    if cursor.accept("WITH"):
        found = _options(cursor)
        if found is None:
            return None
        options = found
    elif comment is None:
        return None  # Spark's form: Spark's parser and answer
    if not cursor.at_end():
        return None
    return k.CreateDatabase(
        text, name, if_not_exists=if_not_exists, comment=comment, options=options
    )


def _alter(cursor: Cursor, text: str) -> k.AlterDatabase | None:
    name = cursor.optional_name()
    if name is None or not cursor.accept("SET"):
        return None
    options = _options(cursor)
    if options is None or not cursor.at_end():
        return None
    return k.AlterDatabase(text, name, options)


def _drop(cursor: Cursor, text: str) -> k.DropDatabase | None:
    if_exists = cursor.accept("IF", "EXISTS")
    name = cursor.optional_name()
    if name is None:
        return None
    cascade = cursor.accept("CASCADE")
    if not cascade:
        cursor.accept("RESTRICT")
    if not cursor.at_end():
        return None
    return k.DropDatabase(text, name, if_exists=if_exists, cascade=cascade)
