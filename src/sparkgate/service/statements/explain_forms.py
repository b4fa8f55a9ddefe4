"""Flink's EXPLAIN: ``EXPLAIN [PLAN FOR | detail[, detail]*] <statement>``.

The details are ``ESTIMATED_COST``, ``CHANGELOG_MODE``, ``JSON_EXECUTION_PLAN``
and ``PLAN_ADVICE``; the statement a query, an INSERT (also ``EXECUTE
INSERT``) or a statement set. Spark's own modes (``EXPLAIN EXTENDED``,
``CODEGEN``, ``COST``, ``FORMATTED``) are Spark's; ``EXPLAIN PLAN '<file>'``
is a compiled plan's (:mod:`.plan_forms`).
"""

from __future__ import annotations

from collections.abc import Callable

from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.cursor import Cursor
from sparkgate.sql.lexer import TokenKind

__all__ = ["DETAILS", "parse_explain"]

DETAILS = ("ESTIMATED_COST", "CHANGELOG_MODE", "JSON_EXECUTION_PLAN", "PLAN_ADVICE")
_SPARK_MODES = frozenset({"EXTENDED", "CODEGEN", "COST", "FORMATTED", "LOGICAL"})


def parse_explain(
    cursor: Cursor, text: str, parse: Callable[[str], k.Statement]
) -> k.Explain | None:
    """The EXPLAIN at ``cursor`` (just after EXPLAIN); None for Spark's modes."""
    if cursor.word() in _SPARK_MODES or cursor.at_end():
        return None
    details: list[str] = []
    if cursor.accept("PLAN", "FOR"):
        pass
    else:
        parens = (tok := cursor.peek()) is not None and tok.kind is TokenKind.LPAREN
        if parens:
            cursor.take()
        while cursor.word() in DETAILS:
            word = cursor.take().upper
            if word not in details:
                details.append(word)
            comma = cursor.peek()
            if comma is None or comma.kind is not TokenKind.COMMA:
                break
            cursor.take()
        if parens:
            cursor.expect(TokenKind.RPAREN, "')' after the EXPLAIN details")
    if cursor.at_end():
        raise cursor.error("EXPLAIN needs a statement to explain")
    return k.Explain(text, tuple(details), parse(cursor.rest()))
