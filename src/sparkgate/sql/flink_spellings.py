"""Flink's spellings in a statement that Spark's parser does not take, in Spark's.

Timestamp types: Flink writes a timestamp's precision (``CAST(x AS TIMESTAMP(3))``,
``TIMESTAMP_LTZ(3)``, ``TIMESTAMP(3) WITH LOCAL TIME ZONE``); Spark's parser
takes only its own microsecond type there (it reads ``TIMESTAMP(7..9)`` as a
nanosecond type it does not enable, and refuses other precisions). After ``AS``
(a CAST's target type) the gateway writes Spark's spelling: ``TIMESTAMP`` and
``TIMESTAMP_LTZ``; the values keep Spark's microseconds. A precision below
Spark's six stays in the text as a comment after the type
(``TIMESTAMP /* precision 3 */``, :data:`PRECISION_MARK`), which Spark's parser
skips and the result's schema reads back (``spark.plans.select_list``), so a
query's cast column answers as ``TIMESTAMP(3)`` with three digits.

``TO_TIMESTAMP_LTZ(n, 0|3)`` and ``TO_TIMESTAMP_LTZ(<number>)`` (epoch seconds or
milliseconds) are Spark's ``timestamp_seconds(n)`` / ``timestamp_millis(n)``:
Spark's ``to_timestamp_ltz`` takes a format second and reads a number as seconds.
A one-argument call on anything but a number literal is Spark's (a string is
parsed, as in Flink).

Names: ``default_catalog.default_database``, Flink's names of the session's
first catalog and database, is Spark's ``spark_catalog.default`` where it
starts a name (``default_catalog.default_database.t``, ``SHOW TABLES FROM
default_catalog.default_database``).
"""

from __future__ import annotations

import re

from sparkgate.api.errors import SqlParseError
from sparkgate.sql.lexer import Token, TokenKind, group_items, tokenize, unquote

__all__ = ["PRECISION_MARK", "PRECISION_PREFIX", "flink_precisions", "spark_spellings"]

#: How the comment a rewritten timestamp type keeps its declared precision in
#: starts (``TIMESTAMP /* precision 3 */``): a text without it has none.
PRECISION_PREFIX = "/* precision "
#: That comment ending a cast's text, its precision in group 1.
PRECISION_MARK = re.compile(re.escape(PRECISION_PREFIX) + r"(\d) \*/\s*\)\s*$")
_SPARK_PRECISION = 6
_MARKED_TYPE = re.compile(r"\b(TIMESTAMP(?:_LTZ)?) " + re.escape(PRECISION_PREFIX) + r"(\d) \*/")


def flink_precisions(text: str) -> str:
    """``text`` (the gateway's Spark SQL) with each marked timestamp type written
    as Flink wrote it: ``TIMESTAMP /* precision 3 */`` as ``TIMESTAMP(3)``."""
    return _MARKED_TYPE.sub(r"\1(\2)", text) if PRECISION_PREFIX in text else text


_TIMESTAMPS = {"TIMESTAMP": "TIMESTAMP", "TIMESTAMP_LTZ": "TIMESTAMP_LTZ"}
# What may follow TIMESTAMP(p), and the Spark type it makes.
_ZONES = (
    (("WITH", "LOCAL", "TIME", "ZONE"), "TIMESTAMP_LTZ"),
    (("WITHOUT", "TIME", "ZONE"), "TIMESTAMP"),
)


def _words(tokens: list[Token], at: int, words: tuple[str, ...]) -> bool:
    found = tokens[at : at + len(words)]
    return len(found) == len(words) and all(
        t.kind is TokenKind.WORD and t.upper == w for t, w in zip(found, words, strict=True)
    )


def _name(tok: Token) -> str | None:
    if tok.kind is TokenKind.WORD:
        return tok.text.lower()
    if tok.kind is TokenKind.QUOTED_IDENTIFIER:
        return unquote(tok).lower()
    return None


def _flink_prefix(tokens: list[Token], i: int) -> bool:
    """``default_catalog . default_database`` starts a name at ``i``."""
    found = tokens[i : i + 3]
    return (
        len(found) == 3
        and _name(found[0]) == "default_catalog"
        and found[1].kind is TokenKind.DOT
        and _name(found[2]) == "default_database"
        and (i == 0 or tokens[i - 1].kind is not TokenKind.DOT)
    )


# TO_TIMESTAMP_LTZ's precision -> Spark's function of epoch seconds / milliseconds.
_EPOCH_FUNCTIONS = {"0": "timestamp_seconds", "3": "timestamp_millis"}


def _epoch_call(tokens: list[Token], i: int) -> tuple[str, list[Token], int] | None:
    """For ``TO_TIMESTAMP_LTZ(n, p)`` at ``i``: Spark's function, the tokens of ``n``
    and the index of the call's ``)``, when Spark's own function would read it otherwise."""
    if i + 1 >= len(tokens) or tokens[i + 1].kind is not TokenKind.LPAREN:
        return None
    if i > 0 and tokens[i - 1].kind is TokenKind.DOT:
        return None  # a qualified name: somebody's own function
    try:
        args, after = group_items(tokens, i + 1)
    except SqlParseError:
        return None  # unbalanced: Spark says what is wrong
    close = after - 1
    # group_items drops empty arguments: one there (``f(, 3)``) is Spark's error to give.
    if not args or sum(map(len, args)) + len(args) != close - i - 1:
        return None
    value = args[0]
    if len(args) == 2 and len(args[1]) == 1 and args[1][0].text in _EPOCH_FUNCTIONS:
        function = _EPOCH_FUNCTIONS[args[1][0].text]
    elif len(args) == 1 and _number(value):
        function = _EPOCH_FUNCTIONS["3"]  # Flink's default precision: milliseconds
    else:
        return None
    return function, value, close


def _number(tokens: list[Token]) -> bool:
    """A number literal, perhaps negative."""
    kinds = [t.kind for t in tokens]
    return kinds == [TokenKind.NUMBER] or (
        kinds == [TokenKind.OPERATOR, TokenKind.NUMBER] and tokens[0].text == "-"
    )


def spark_spellings(text: str) -> str:
    """``text`` with each ``AS TIMESTAMP[_LTZ](p) [WITH LOCAL TIME ZONE | WITHOUT
    TIME ZONE]`` written as Spark's type and each ``default_catalog.default_database.``
    prefix as ``spark_catalog.default.``; anything else as it was."""
    upper = text.upper()
    if ("(" not in text or "TIMESTAMP" not in upper) and "DEFAULT_CATALOG" not in upper:
        return text  # the common case: nothing to look at
    tokens = [t for t in tokenize(text) if not t.is_comment]
    pieces: list[str] = []
    last = 0
    skip_to = -1  # the ``)`` of a call rewritten whole
    for i, tok in enumerate(tokens):
        if i <= skip_to:
            continue
        if _flink_prefix(tokens, i):
            pieces.append(text[last : tok.start])
            pieces.append("spark_catalog.`default`")
            last = tokens[i + 2].end
            continue
        if tok.kind is TokenKind.WORD and tok.upper == "TO_TIMESTAMP_LTZ":
            epoch = _epoch_call(tokens, i)
            if epoch is not None:
                function, value, close = epoch
                inner = text[value[0].start : value[-1].end]
                pieces.append(text[last : tok.start])
                pieces.append(f"{function}({spark_spellings(inner)})")
                last = tokens[close].end
                skip_to = close
            continue
        if tok.kind is not TokenKind.WORD or tok.upper not in _TIMESTAMPS:
            continue
        if i == 0 or not _words(tokens, i - 1, ("AS",)):
            continue
        size = tokens[i + 1 : i + 4]
        if len(size) != 3 or [t.kind for t in size] != [
            TokenKind.LPAREN,
            TokenKind.NUMBER,
            TokenKind.RPAREN,
        ]:
            continue
        if not size[1].text.isdigit() or int(size[1].text) > 9:
            continue  # Spark says what is wrong with it
        spark, end = _TIMESTAMPS[tok.upper], size[2].end
        for words, zoned in _ZONES:
            if tok.upper == "TIMESTAMP" and _words(tokens, i + 4, words):
                spark, end = zoned, tokens[i + 3 + len(words)].end
                break
        pieces.append(text[last : tok.start])
        precision = int(size[1].text)
        pieces.append(
            spark if precision >= _SPARK_PRECISION else f"{spark} {PRECISION_PREFIX}{precision} */"
        )
        last = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)
