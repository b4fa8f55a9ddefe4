"""Flink query forms that mean nothing on Spark, refused by name before Spark's
parser points at a keyword.

- ``MATCH_RECOGNIZE (...)``: Flink's row pattern recognition; Spark SQL has none.
- ``JOIN t FOR SYSTEM_TIME AS OF o.ts``: Flink's temporal (versioned or lookup)
  join, by a column of the other side. Spark has no versioned tables to join
  by time; ``FOR SYSTEM_TIME AS OF`` a constant is Spark's time travel, which
  Delta and Iceberg tables answer, and stays Spark's.
"""

from __future__ import annotations

from sparkgate.api.errors import UnsupportedStatementError
from sparkgate.sql.lexer import TokenKind, tokenize

__all__ = ["refuse_unsupported"]

# What starts a constant point in time after AS OF (Spark's time travel).
_CONSTANT_STARTS = frozenset(
    {"TIMESTAMP", "DATE", "CURRENT_TIMESTAMP", "CURRENT_DATE", "NOW", "CAST", "INTERVAL"}
)


def refuse_unsupported(text: str) -> None:
    """Raise ``UnsupportedStatementError`` naming a form of :mod:`this module's
    <sparkgate.sql.flink_refusals>` list in ``text``; nothing else."""
    upper = text.upper()
    if "MATCH_RECOGNIZE" not in upper and "SYSTEM_TIME" not in upper:
        return  # the common case: nothing to look at
    tokens = [t for t in tokenize(text) if not t.is_comment]
    for i, tok in enumerate(tokens):
        if tok.kind is not TokenKind.WORD:
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.upper == "MATCH_RECOGNIZE" and following and following.kind is TokenKind.LPAREN:
            raise UnsupportedStatementError(
                "MATCH_RECOGNIZE is not supported on Spark: Spark SQL has no row pattern "
                "recognition (Flink's complex event processing)"
            )
        words = [t.upper for t in tokens[i : i + 5]]
        if words[:4] == ["FOR", "SYSTEM_TIME", "AS", "OF"] and len(words) == 5:
            point = tokens[i + 4]
            dotted = i + 5 < len(tokens) and tokens[i + 5].kind is TokenKind.DOT
            column = point.kind is TokenKind.QUOTED_IDENTIFIER or (
                point.kind is TokenKind.WORD and (dotted or point.upper not in _CONSTANT_STARTS)
            )
            if column:
                raise UnsupportedStatementError(
                    "A temporal join (FOR SYSTEM_TIME AS OF a column of the other table) is "
                    "not supported on Spark, which has no versioned tables to join by time. "
                    "FOR SYSTEM_TIME AS OF a constant timestamp reads a Delta or Iceberg "
                    "table as it was then"
                )
