"""The compiled-plan statements of Flink's SQL (FLIP-190, FLIP-292), read on the cursor.

``COMPILE [AND EXECUTE] PLAN '<uri>' [IF NOT EXISTS] FOR <INSERT ... |
[EXECUTE] STATEMENT SET BEGIN ... END>``, ``EXECUTE PLAN '<uri>'`` and
``EXPLAIN PLAN '<uri>'``. The INSERTs after FOR are parsed as any INSERT.
"""

from __future__ import annotations

from collections.abc import Callable

from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.cursor import Cursor
from sparkgate.sql.lexer import TokenKind, unquote

__all__ = ["parse_plan_statement"]


def _uri(cursor: Cursor, statement: str) -> str:
    tok = cursor.peek()
    if tok is None or tok.kind is not TokenKind.STRING:
        raise cursor.error(
            f"{statement} needs the plan's URI as a quoted string, e.g. '/tmp/plan.json'"
        )
    cursor.take()
    uri = unquote(tok).strip()
    if not uri:
        raise cursor.error(f"{statement}: the plan's URI is empty", tok)
    return uri


def _compile(
    cursor: Cursor, text: str, execute: bool, parse: Callable[[str], k.Statement]
) -> k.CompilePlan:
    verb = "COMPILE AND EXECUTE PLAN" if execute else "COMPILE PLAN"
    uri = _uri(cursor, verb)
    if_not_exists = cursor.accept("IF", "NOT", "EXISTS")
    if not cursor.accept("FOR"):
        raise cursor.error(f"expected FOR <INSERT ...> or FOR STATEMENT SET after {verb} '{uri}'")
    body = cursor.rest()
    inner = parse(body)
    if isinstance(inner, k.ExecuteStatementSet):
        inserts = inner.statements
    elif isinstance(inner, k.Dml) and inner.insert:
        inserts = (inner,)
    else:
        raise cursor.error(
            f"{verb} compiles an INSERT or a statement set (as Flink), not: {body.strip()}"
        )
    for statement in inserts:
        if not (isinstance(statement, k.Dml) and statement.insert):
            raise cursor.error(
                f"a statement set holds only INSERT statements, not: {statement.text}"
            )
    return k.CompilePlan(text, uri, if_not_exists, execute, tuple(inserts))


def parse_plan_statement(
    cursor: Cursor, text: str, first: str, parse: Callable[[str], k.Statement]
) -> k.Statement | None:
    """The plan statement starting with ``first`` (already taken), or None."""
    if first == "COMPILE":
        if cursor.accept("PLAN"):
            return _compile(cursor, text, False, parse)
        if cursor.accept("AND", "EXECUTE", "PLAN"):
            return _compile(cursor, text, True, parse)
        raise cursor.error("expected PLAN or AND EXECUTE PLAN after COMPILE")
    nxt = cursor.peek(1)
    if (
        first in ("EXECUTE", "EXPLAIN")
        and cursor.word() == "PLAN"
        and nxt is not None
        and nxt.kind is TokenKind.STRING
    ):
        cursor.take()
        uri = _uri(cursor, f"{first} PLAN")
        cursor.expect_end(f"{first} PLAN '<uri>'")
        return k.ExecutePlan(text, uri) if first == "EXECUTE" else k.ExplainPlan(text, uri)
    return None
