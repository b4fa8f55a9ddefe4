"""``count(DISTINCT ...)`` as a streaming aggregation Spark can keep.

Spark's streaming aggregation refuses distinct aggregates ("Distinct
aggregations are not supported on streaming DataFrames"); Flink keeps the
distinct values in its state. A streaming query's ``count(DISTINCT x)`` is
written as ``CAST(size(collect_set(x)) AS BIGINT)``: the set of distinct
values is the aggregation's state, as in Flink, and its size is the count
(``collect_set`` skips NULLs as ``count`` does). With several arguments, the
rows where all of them are set count, as distinct tuples.

A distinct count followed by ``FILTER (...)`` or ``OVER (...)``, and any other
distinct aggregate (``sum(DISTINCT x)``), is left as written: Spark's own
error names it.
"""

from __future__ import annotations

from sparkgate.sql.lexer import Token, TokenKind, group_items, tokenize

__all__ = ["distinct_counts"]


def distinct_counts(text: str) -> str:
    """``text`` with each ``count(DISTINCT ...)`` written as the size of a set."""
    if "DISTINCT" not in text.upper():
        return text
    tokens = [t for t in tokenize(text) if not t.is_comment]
    pieces: list[str] = []
    last = 0
    i = 0
    while i < len(tokens):
        rewritten = _rewrite_at(text, tokens, i)
        if rewritten is None:
            i += 1
            continue
        replacement, end = rewritten
        pieces += [text[last : tokens[i].start], replacement]
        last = tokens[end - 1].end
        i = end
    if not pieces:
        return text
    return "".join(pieces) + text[last:]


def _rewrite_at(text: str, tokens: list[Token], i: int) -> tuple[str, int] | None:
    """The replacement of the call starting at ``i`` and the index after it, or None."""
    if not (
        tokens[i].kind is TokenKind.WORD
        and tokens[i].upper == "COUNT"
        and (i == 0 or tokens[i - 1].kind is not TokenKind.DOT)
        and i + 2 < len(tokens)
        and tokens[i + 1].kind is TokenKind.LPAREN
        and tokens[i + 2].kind is TokenKind.WORD
        and tokens[i + 2].upper == "DISTINCT"
    ):
        return None
    items, end = group_items(tokens, i + 1)
    if end < len(tokens) and tokens[end].upper in ("FILTER", "OVER"):
        return None
    items[0] = items[0][1:]  # without DISTINCT
    if not items or not all(items):
        return None
    args = [text[item[0].start : item[-1].end] for item in items]
    if len(args) == 1:
        value = args[0]
    else:
        present = " AND ".join(f"({arg}) IS NOT NULL" for arg in args)
        value = f"CASE WHEN {present} THEN struct({', '.join(args)}) END"
    return f"CAST(size(collect_set({value})) AS BIGINT)", end
