"""An SQL expression printed back as Flink prints a computed column's.

Flink's ``SHOW CREATE TABLE`` and ``DESCRIBE`` show a computed column by its
expression re-written by its parser, not as the user typed it:
``coalesce(product, 'missing_sku')`` is ``COALESCE(`product`, 'missing_sku')``.
Identifiers are back-quoted, function names and keywords upper-case, and the
spacing is the parser's (none inside parentheses, one after a comma, one
around a binary operator). The text is re-spelled token by token; literals and
back-quoted names are kept as written.
"""

from __future__ import annotations

from collections.abc import Callable

from sparkgate.sql.flink_spellings import flink_precisions
from sparkgate.sql.lexer import Token, TokenKind, tokenize, unquote
from sparkgate.sql.quoting import quote_identifier

__all__ = ["flink_expression"]

# Words that are SQL's own wherever they stand in an expression.
_KEYWORDS = frozenset(
    """
    AND OR NOT IS NULL TRUE FALSE UNKNOWN CASE WHEN THEN ELSE END AS IN LIKE ILIKE
    SIMILAR TO BETWEEN SYMMETRIC ASYMMETRIC DISTINCT ALL ANY SOME EXISTS ESCAPE FROM FOR
    BOTH LEADING TRAILING INTERVAL OVER PARTITION BY ORDER ASC DESC NULLS ROWS PRECEDING
    FOLLOWING UNBOUNDED DIV
    """.split()  # noqa: SIM905 - a word list
)
# Functions called without parentheses.
_NILADIC = frozenset(
    """
    CURRENT_TIMESTAMP CURRENT_DATE CURRENT_TIME LOCALTIMESTAMP LOCALTIME CURRENT_USER
    """.split()  # noqa: SIM905 - a word list
)
# Time units: keywords after an interval's value, around TO, before FROM (EXTRACT);
# elsewhere a column may have the name (`year`).
_UNITS = frozenset(
    """
    YEAR YEARS QUARTER MONTH MONTHS WEEK DAY DAYS HOUR HOURS MINUTE MINUTES SECOND SECONDS
    MILLISECOND MILLISECONDS MICROSECOND MICROSECONDS
    """.split()  # noqa: SIM905 - a word list
)
# A cast's type names as Flink's parser prints them.
_TYPE_NAMES = {"INT": "INTEGER"}
_NO_SPACE_BEFORE = frozenset({TokenKind.RPAREN, TokenKind.COMMA, TokenKind.DOT})
_NO_SPACE_AFTER = frozenset({TokenKind.LPAREN, TokenKind.DOT})


def flink_expression(text: str, qualify: Callable[[str], str | None] | None = None) -> str:
    """``text`` (an SQL expression) as Flink prints it back; comments dropped.

    ``qualify`` gives a bare name's expanded text (`` `t`.`a` `` for ``a``), or None
    to print it back-quoted as it is: Flink expands a view's query so."""
    tokens = [t for t in tokenize(flink_precisions(text)) if not t.is_comment]
    pieces: list[str] = []
    cast_depth: list[int] = []  # paren depths of the CASTs being read
    depth = 0
    typing = False  # after a CAST's AS: the type's words, not names
    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        prev = tokens[i - 1] if i else None
        if tok.kind is TokenKind.LPAREN:
            depth += 1
        elif tok.kind is TokenKind.RPAREN:
            if cast_depth and cast_depth[-1] == depth:
                cast_depth.pop()
                typing = False
            depth -= 1
        if i and _spaced(tokens, i):
            pieces.append(" ")
        # After Spark's a::INT, the next word is a type.
        spelled = _spelled(tokens, i, typing or (prev is not None and prev.text == "::"))
        if qualify is not None and _bare_name(tok, prev, nxt, spelled):
            spelled = qualify(unquote(tok)) or spelled
        pieces.append(spelled)
        if tok.kind is TokenKind.WORD and tok.upper in ("CAST", "TRY_CAST") and _opens(nxt):
            cast_depth.append(depth + 1)
        elif tok.kind is TokenKind.WORD and tok.upper == "AS" and cast_depth:
            typing = cast_depth[-1] == depth
    return "".join(pieces)


def _bare_name(tok: Token, prev: Token | None, nxt: Token | None, spelled: str) -> bool:
    """Whether ``tok`` is a name standing alone (not a part of ``t.a``, not a call,
    not an alias after AS)."""
    dots = (prev, nxt)
    if any(t is not None and t.kind is TokenKind.DOT for t in dots):
        return False
    if prev is not None and prev.upper == "AS":
        return False
    return tok.kind is TokenKind.QUOTED_IDENTIFIER or (
        tok.kind is TokenKind.WORD and spelled.startswith("`")
    )


def _opens(tok: Token | None) -> bool:
    return tok is not None and tok.kind is TokenKind.LPAREN


def _keyword(tokens: list[Token], i: int) -> bool:
    """Whether ``tokens[i]`` is a word of SQL's own where it stands (not a name)."""
    tok = tokens[i]
    if tok.kind is not TokenKind.WORD or (i and tokens[i - 1].kind is TokenKind.DOT):
        return False
    word = tok.upper
    prev = tokens[i - 1] if i else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if word in _KEYWORDS or word in _NILADIC:
        return True
    if word in _UNITS:
        return (prev is not None and (prev.kind is TokenKind.STRING or prev.upper == "TO")) or (
            nxt is not None and nxt.upper in ("TO", "FROM")
        )
    if word in ("FIRST", "LAST"):
        return prev is not None and prev.upper == "NULLS"
    if word in ("CURRENT", "ROW", "RANGE"):  # a window frame's
        pair = {"CURRENT": "ROW", "RANGE": "BETWEEN"}
        return (nxt is not None and nxt.upper in (pair.get(word), "UNBOUNDED")) or (
            word == "ROW" and prev is not None and prev.upper == "CURRENT"
        )
    if word in ("ARRAY", "MAP"):  # ARRAY[...], MAP[...]
        return nxt is not None and nxt.text == "["
    # A typed literal: DATE '2024-01-01', TIMESTAMP '...', X'00'.
    return nxt is not None and nxt.kind is TokenKind.STRING


def _spelled(tokens: list[Token], i: int, typing: bool) -> str:
    tok = tokens[i]
    if tok.kind is not TokenKind.WORD:
        return tok.text
    if typing:
        return _TYPE_NAMES.get(tok.upper, tok.upper)
    dotted = i > 0 and tokens[i - 1].kind is TokenKind.DOT
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if (not dotted and _opens(nxt)) or _keyword(tokens, i):
        return tok.upper
    return quote_identifier(tok.text)


def _spaced(tokens: list[Token], i: int) -> bool:
    """Whether a space comes before ``tokens[i]`` in Flink's printing."""
    tok, prev = tokens[i], tokens[i - 1]
    if tok.kind in _NO_SPACE_BEFORE or prev.kind in _NO_SPACE_AFTER:
        return False
    if tok.text in ("[", "]", "::") or prev.text in ("[", "::"):
        return False  # a subscript a[1], Spark's cast a::INT
    if tok.kind is TokenKind.LPAREN:
        # A call's parenthesis follows its name; any other follows a space.
        called = prev.kind in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER)
        return not called or prev.upper in _KEYWORDS
    if prev.text == "-" and tok.text.startswith("-"):
        return True  # never `--`, a comment
    # A sign sticks to what it signs: -1, (-x), a * -b.
    return not (prev.kind is TokenKind.OPERATOR and prev.text in "+-" and _unary(tokens, i - 1))


def _unary(tokens: list[Token], i: int) -> bool:
    if i == 0:
        return True
    before = tokens[i - 1]
    if before.text == "]":  # the end of a subscript: an operand
        return False
    return before.kind in _OPERAND_STARTS or (
        before.upper in _KEYWORDS and before.kind is TokenKind.WORD
    )


_OPERAND_STARTS = frozenset(
    {TokenKind.LPAREN, TokenKind.COMMA, TokenKind.OPERATOR, TokenKind.EQUALS}
)
