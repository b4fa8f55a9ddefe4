"""Recognising CREATE TABLE AS / REPLACE TABLE AS (FLIP-218, FLIP-303).

Only what the gateway needs to pick the statement kind is read here: the
leading keywords, and Flink's ``WITH (...)`` clause, which Spark's parser
does not know and which is cut out of the text into options. The structure
of the rest (the table's name, its clauses, the query) is Spark's parser's,
read by the handler.
"""

from __future__ import annotations

from collections.abc import Mapping

from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.cursor import Cursor
from sparkgate.service.streaming.ddl import parse_schema
from sparkgate.sql.lexer import Token, TokenKind, unquote

__all__ = ["parse_table_as_select"]

# What may follow the AS of a CTAS: the query.
_QUERY_STARTS = frozenset({"SELECT", "WITH", "FROM", "VALUES", "TABLE"})


def _skip_name(cursor: Cursor) -> bool:
    """Move past a (dotted) table name; False when there is none."""
    name_kinds = (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER)
    tok = cursor.peek()
    if tok is None or tok.kind not in name_kinds:
        return False
    cursor.take()
    while (dot := cursor.peek()) is not None and dot.kind is TokenKind.DOT:
        cursor.take()
        part = cursor.peek()
        if part is None or part.kind not in name_kinds:
            return False
        cursor.take()
    return True


def _query_start(tokens: list[Token], i: int) -> bool:
    """Whether ``tokens[i]`` is a top-level ``AS`` that starts a CTAS query."""
    tok = tokens[i]
    if tok.kind is not TokenKind.WORD or tok.upper != "AS" or i + 1 >= len(tokens):
        return False
    after = tokens[i + 1]
    return after.kind is TokenKind.LPAREN or (
        after.kind is TokenKind.WORD and after.upper in _QUERY_STARTS
    )


def _with_options(cursor: Cursor, at: int) -> tuple[Mapping[str, str], int]:
    """Flink's ``WITH ('k' = 'v', ...)`` starting at token ``at``; its options and
    the index of the token after it."""
    cursor.i = at + 1
    options = cursor.with_options()
    return options, cursor.i


def parse_table_as_select(cursor: Cursor, text: str, first: str) -> k.TableAsSelect | None:
    """The statement if it is a CTAS or RTAS, else None (the cursor where it was)."""
    start = cursor.i
    create = first == "CREATE"
    replace = first == "REPLACE"
    if create and cursor.accept("OR", "REPLACE"):
        replace = True
    if not cursor.accept("TABLE"):
        cursor.i = start
        return None
    if_not_exists = create and cursor.accept("IF", "NOT", "EXISTS")
    if not _skip_name(cursor):
        cursor.i = start
        return None
    tokens = cursor.tokens
    depth = 0
    with_at: int | None = None
    list_end: int | None = None  # the token after the column list, if any
    name_end = cursor.i
    for i in range(name_end, len(tokens)):
        tok = tokens[i]
        if tok.kind is TokenKind.LPAREN:
            depth += 1
        elif tok.kind is TokenKind.RPAREN:
            depth -= 1
            if depth == 0 and list_end is None and tokens[name_end].kind is TokenKind.LPAREN:
                list_end = i + 1
        elif depth == 0 and _query_start(tokens, i):
            break
        elif (
            depth == 0
            and tok.kind is TokenKind.WORD
            and tok.upper == "WITH"
            and i + 1 < len(tokens)
            and tokens[i + 1].kind is TokenKind.LPAREN
        ):
            with_at = i
    else:
        cursor.i = start
        return None  # no AS <query>: a plain CREATE TABLE
    as_at = i
    # Cut out what Spark's parser does not read: the column list and WITH (...).
    cut: list[tuple[int, int]] = []  # token index ranges
    schema = None
    if list_end is not None:
        schema = parse_schema(text[tokens[name_end].start : tokens[list_end - 1].end])
        cut.append((name_end, list_end))
    options: Mapping[str, str] = {}
    if with_at is not None:
        options, after = _with_options(cursor, with_at)
        if after != as_at:
            raise cursor.error(
                "expected AS <query> after WITH (...) in CREATE TABLE AS", tokens[after]
            )
        cut.append((with_at, after))
    kept = [j for j in range(name_end, as_at) if not any(lo <= j < hi for lo, hi in cut)]
    spark_text = text[: tokens[name_end].start] + " ".join(
        text[tokens[j].start : tokens[j].end] for j in kept
    )
    spark_text = f"{spark_text.rstrip()} {text[tokens[as_at].start :]}"
    # The clauses between the name and AS (USING, PARTITIONED BY, COMMENT, ...):
    # what the created table is declared with.
    clauses = " ".join(text[tokens[j].start : tokens[j].end] for j in kept)
    comment, partition_keys = _comment_and_partitions([tokens[j] for j in kept])
    cursor.i = len(tokens)
    return k.TableAsSelect(
        text,
        spark_text,
        clauses,
        create=create,
        replace=replace,
        if_not_exists=if_not_exists,
        options=options,
        schema=schema,
        comment=comment,
        partition_keys=partition_keys,
    )


def _comment_and_partitions(clause: list[Token]) -> tuple[str | None, tuple[str, ...]]:
    """Flink's ``COMMENT '...'`` and ``PARTITIONED BY (a, b)`` among the clauses."""
    comment = None
    keys: tuple[str, ...] = ()
    for j, tok in enumerate(clause):
        upper = tok.upper if tok.kind is TokenKind.WORD else None
        if upper == "COMMENT" and j + 1 < len(clause) and clause[j + 1].kind is TokenKind.STRING:
            comment = unquote(clause[j + 1])
        elif (
            upper == "PARTITIONED"
            and j + 2 < len(clause)
            and clause[j + 2].kind is TokenKind.LPAREN
        ):
            names = []
            for part in clause[j + 3 :]:
                if part.kind is TokenKind.RPAREN:
                    break
                if part.kind in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER):
                    names.append(unquote(part))
            keys = tuple(names)
    return comment, keys
