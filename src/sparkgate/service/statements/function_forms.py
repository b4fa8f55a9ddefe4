"""Flink's function statements: ``CREATE | ALTER | DROP [TEMPORARY [SYSTEM]]
FUNCTION ... [AS 'class' [LANGUAGE JAVA|SCALA|PYTHON] [USING JAR '...', ...]]``.

``CREATE OR REPLACE FUNCTION`` and Spark's SQL functions (``RETURNS``) are
Spark's own and not read here.
"""

from __future__ import annotations

from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.cursor import Cursor
from sparkgate.sql.lexer import TokenKind

__all__ = ["parse_function_statement"]


def parse_function_statement(cursor: Cursor, text: str, first: str) -> k.Statement | None:
    """The function statement at ``cursor`` (just after ``first``), or None with
    the cursor untouched."""
    if first not in ("CREATE", "ALTER", "DROP"):
        return None
    start = cursor.i
    temporary = cursor.accept("TEMPORARY")
    system = temporary and cursor.accept("SYSTEM")
    if not cursor.accept("FUNCTION"):
        cursor.i = start
        return None
    form = _function(cursor, text, first, temporary, system)
    if form is None:
        cursor.i = start
    return form


def _function(
    cursor: Cursor, text: str, verb: str, temporary: bool, system: bool
) -> k.Statement | None:
    guard = (
        cursor.accept("IF", "NOT", "EXISTS") if verb == "CREATE" else cursor.accept("IF", "EXISTS")
    )
    tok = cursor.peek()
    if tok is None or tok.kind not in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER):
        return None
    name = cursor.multipart_identifier()
    if verb == "DROP":
        if not cursor.at_end():
            return None
        return k.DropFunction(text, name, temporary=temporary, system=system, if_exists=guard)
    if not cursor.accept("AS"):
        return None
    class_name = cursor.optional_string()
    if class_name is None:
        return None
    language = "JAVA"
    if cursor.accept("LANGUAGE"):
        word = cursor.word()
        if word not in ("JAVA", "SCALA", "PYTHON"):
            raise cursor.error("expected LANGUAGE JAVA, SCALA or PYTHON")
        cursor.take()
        language = word
    jars: list[str] = []
    if verb == "CREATE" and cursor.accept("USING"):
        while True:
            if not cursor.accept("JAR"):
                return None  # USING FILE / ARCHIVE: Spark's
            jar = cursor.optional_string()
            if jar is None:
                raise cursor.error("expected a quoted path after JAR")
            jars.append(jar)
            comma = cursor.peek()
            if comma is None or comma.kind is not TokenKind.COMMA:
                break
            cursor.take()
    if not cursor.at_end():
        return None
    return k.FunctionDefinition(
        text,
        name,
        class_name,
        alter=verb == "ALTER",
        temporary=temporary,
        system=system,
        guarded=guard,
        language=language,
        jars=tuple(jars),
    )
