"""Flink's spellings of values and functions that Spark SQL has under other
names, written as Spark's. Each of them is an error in Spark SQL as written, so
the rewrite changes the meaning of no statement Spark runs:

=================================  ==============================================
Flink                              Spark
=================================  ==============================================
``ARRAY[a, b]``                    ``array(a, b)``
``MAP[k1, v1, k2, v2]``            ``map(k1, v1, k2, v2)``
``ROW(a, b)`` (a value)            ``struct(a, b)``
``LOCALTIMESTAMP``, ``LOCALTIME``  ``localtimestamp()``, ``current_time()``
``PROCTIME()`` in a query,         ``current_timestamp()``
``CURRENT_ROW_TIMESTAMP()``
``JSON_VALUE(j, path)``            ``get_json_object(j, path)``
``SPLIT_INDEX(s, sep, i)``         the ``i``-th (from 0) piece of ``s`` split at
                                   the string ``sep``, NULL past the end
``CAST(x AS VARCHAR|CHAR|BYTES)``  ``CAST(x AS STRING|STRING|BINARY)``
``FLOOR(t TO unit)``               ``date_trunc('unit', t)``
``CEIL(t TO unit)``                the same, one unit later unless ``t`` is on it
``SHA224|256|384|512(s)``          ``sha2(s, 224|256|384|512)``
``TO_BASE64(b)``, ``FROM_BASE64``  ``base64(b)``, ``CAST(unbase64(s) AS STRING)``
``RAND_INTEGER([seed,] n)``        ``CAST(floor(rand([seed]) * n) AS INT)``
``WEEK(d)``                        ``weekofyear(d)``
``CONVERT_TZ(s, from, to)``        ``s`` (``yyyy-MM-dd HH:mm:ss``) moved from one
                                   zone to the other, as the same text form
``ELEMENT(a)``                     the one element of ``a``: NULL when empty, an
                                   error when it has more
``TRUNCATE(n [, d])``              ``floor`` or ``ceil`` (toward zero) at ``d`` places
``IS_ALPHA|IS_DIGIT(s)``           ``s`` matches ``^\\p{L}+$`` or ``^\\p{Nd}+$``
``IS_DECIMAL(s)``                  ``try_cast(s AS DOUBLE)`` is not NULL
``ARRAY_REVERSE(a)``               ``reverse(a)``
``ARRAY_SLICE(a, start [, end])``  the elements between the two (1-based, from
                                   the end when below 0)
``ARRAY_CONCAT(a, ...)``           ``concat(a, ...)``
``MAP_UNION(m, ...)``              ``map_concat``, a later map's key winning
``x BETWEEN SYMMETRIC a AND b``    ``x BETWEEN`` the smaller ``AND`` the larger;
                                   ``ASYMMETRIC`` is ``BETWEEN``'s own meaning
Flink's JSON functions             :mod:`sparkgate.sql.flink_json`
the type ``ROW<a INT>``            ``STRUCT<a INT>``
=================================  ==============================================

An array's index stays Spark's: ``a[1]`` is Flink's first element and
Spark's second (``element_at(a, 1)`` is the first in both).

``CREATE TABLE`` and ``ALTER TABLE`` statements are left alone: their column
types and computed columns (``PROCTIME()``) are Flink's DDL, which the
gateway reads itself (a computed column's expression through this rewrite).
"""

from __future__ import annotations

import re

from sparkgate.sql.flink_json import JSON_FUNCTIONS, is_json, json_call, operand_start
from sparkgate.sql.lexer import Token, TokenKind, balanced, group_items, tokenize, word_at

__all__ = ["flink_functions"]

_LOOK = re.compile(
    r"\b(?:ARRAY|MAP)\s*\[|\bROW\s*\(|\bLOCALTIME|\bJSON_\w+\s*\(|\bSPLIT_INDEX\b"
    r"|\bPROCTIME\b|\bCURRENT_ROW_TIMESTAMP\b|\bAS\s+(?:VARCHAR|CHAR|BYTES)\b|\bROW\s*<"
    r"|\b(?:FLOOR|CEIL|CEILING)\s*\(|\bSHA(?:224|256|384|512)\b|\b(?:TO|FROM)_BASE64\b"
    r"|\b(?:RAND_INTEGER|WEEK|CONVERT_TZ|ELEMENT|TRUNCATE|IS_ALPHA|IS_DIGIT|IS_DECIMAL)\s*\("
    r"|\b(?:ARRAY_REVERSE|ARRAY_SLICE|ARRAY_CONCAT|MAP_UNION)\s*\(|\bIS\s+(?:NOT\s+)?JSON\b"
    r"|\bBETWEEN\s+(?:A?SYMMETRIC)\b",
    re.IGNORECASE,
)
# Where a ROW(...) is a value, not a type (after AS, or inside a type's < >).
_BEFORE_VALUES = frozenset(
    {"SELECT", "THEN", "ELSE", "WHEN", "VALUES", "AND", "OR", "NOT", "IN", "BY", "RETURN"}
)
_NOW = {"PROCTIME": "current_timestamp()", "CURRENT_ROW_TIMESTAMP": "current_timestamp()"}
_BARE = {"LOCALTIMESTAMP": "localtimestamp()", "LOCALTIME": "current_time()"}
# Flink's functions that are Spark's under another name.
_RENAMES = {"TO_BASE64": "base64", "ARRAY_CONCAT": "concat"}
# A time unit of FLOOR/CEIL(t TO unit) and the interval one unit later.
_TIME_UNITS = {
    "YEAR": "INTERVAL 1 YEAR",
    "QUARTER": "INTERVAL 3 MONTH",
    "MONTH": "INTERVAL 1 MONTH",
    "WEEK": "INTERVAL 7 DAY",
    "DAY": "INTERVAL 1 DAY",
    "HOUR": "INTERVAL 1 HOUR",
    "MINUTE": "INTERVAL 1 MINUTE",
    "SECOND": "INTERVAL 1 SECOND",
    "MILLISECOND": "INTERVAL '0.001' SECOND",
}
_CAST_TYPES = {"VARCHAR": "STRING", "CHAR": "STRING", "BYTES": "BINARY"}
# What ends BETWEEN's upper bound (it binds tighter than these).
_BOUND_ENDS = frozenset(
    {"AND", "OR", "THEN", "WHEN", "ELSE", "END", "FROM", "WHERE", "GROUP", "HAVING", "ORDER"}
    | {"LIMIT", "UNION", "EXCEPT", "INTERSECT", "WINDOW", "AS", "IS", "ASC", "DESC", "NULLS"}
)


def _slice(start: str, end: str) -> str:
    """ARRAY_SLICE: from ``start`` to ``end`` (1-based, from the end when below
    0, the first element when 0 or before it), as Flink's."""

    def offset(at: str) -> str:
        return f"greatest(CASE WHEN ({at}) < 0 THEN size({{0}}) + ({at}) + 1 ELSE ({at}) END, 1)"

    return (
        f"CASE WHEN ({start}) IS NULL OR ({end}) IS NULL THEN NULL ELSE filter({{0}}, "
        f"(slice_value, slice_index) -> slice_index + 1 BETWEEN {offset(start)} AND "
        f"{offset(end)}) END"
    )


def _map_union(count: int) -> str:
    """MAP_UNION of ``count`` maps: a later map's value wins for a key in both."""
    union = "{0}"
    for k in range(1, count):
        later = f"{{{k}}}"
        union = (
            f"map_concat(map_filter({union}, (union_key, union_value) -> "
            f"NOT array_contains(map_keys({later}), union_key)), {later})"
        )
    return union


# Flink's functions Spark has none of, by name and count of arguments: Spark SQL
# over the arguments' text (each rewritten too).
_CALLS: dict[tuple[str, int], str] = {
    ("SPLIT_INDEX", 3): (
        "try_element_at(split({0}, concat('\\\\Q', {1}, '\\\\E')), "
        "CASE WHEN ({2}) >= 0 THEN ({2}) + 1 END)"
    ),
    **{(f"SHA{bits}", 1): f"sha2({{0}}, {bits})" for bits in (224, 256, 384, 512)},
    ("FROM_BASE64", 1): "CAST(unbase64({0}) AS STRING)",
    ("RAND_INTEGER", 1): "CAST(floor(rand() * ({0})) AS INT)",
    ("RAND_INTEGER", 2): "CAST(floor(rand({0}) * ({1})) AS INT)",
    ("WEEK", 1): "weekofyear({0})",
    ("CONVERT_TZ", 3): (
        "date_format(convert_timezone({1}, {2}, to_timestamp_ntz({0})), 'yyyy-MM-dd HH:mm:ss')"
    ),
    ("ELEMENT", 1): (
        "CASE WHEN size({0}) > 1 THEN raise_error('ELEMENT: the array has more than one "
        "element') ELSE try_element_at({0}, 1) END"
    ),
    ("TRUNCATE", 1): "CASE WHEN ({0}) >= 0 THEN floor({0}) ELSE ceil({0}) END",
    ("TRUNCATE", 2): "CASE WHEN ({0}) >= 0 THEN floor({0}, {1}) ELSE ceil({0}, {1}) END",
    ("IS_ALPHA", 1): "coalesce(({0}) RLIKE '^\\\\p{{L}}+$', false)",
    ("IS_DIGIT", 1): "coalesce(({0}) RLIKE '^\\\\p{{Nd}}+$', false)",
    ("IS_DECIMAL", 1): "coalesce(try_cast({0} AS DOUBLE) IS NOT NULL, false)",
    ("ARRAY_REVERSE", 1): "reverse({0})",
    ("ARRAY_SLICE", 2): _slice("{1}", "size({0})"),
    ("ARRAY_SLICE", 3): _slice("{1}", "{2}"),
    **{("MAP_UNION", n): _map_union(n) for n in range(1, 9)},
}
_CALL_NAMES = frozenset(name for name, _ in _CALLS)


def _is(tokens: list[Token], i: int, kind: TokenKind, text: str | None = None) -> bool:
    return (
        0 <= i < len(tokens) and tokens[i].kind is kind and (text is None or tokens[i].text == text)
    )


def _closing_bracket(tokens: list[Token], start: int) -> int | None:
    """The ``]`` closing the ``[`` at ``start``."""
    depth = 0
    for i in range(start, len(tokens)):
        if _is(tokens, i, TokenKind.OPERATOR, "["):
            depth += 1
        elif _is(tokens, i, TokenKind.OPERATOR, "]"):
            depth -= 1
            if depth == 0:
                return i
    return None


def _pairs(bracketed: list[Token]) -> bool:
    """Whether ``[ ... ]`` holds an even number (two or more) of top-level items."""
    commas, depth = 0, 0
    for token in bracketed[1:-1]:
        if token.kind is TokenKind.LPAREN or token.text == "[":
            depth += 1
        elif token.kind is TokenKind.RPAREN or token.text == "]":
            depth -= 1
        elif token.kind is TokenKind.COMMA and depth == 0:
            commas += 1
    return commas % 2 == 1


def _in_cast(tokens: list[Token], at: int) -> bool:
    """Whether the token at ``at`` is inside the parentheses of a CAST or TRY_CAST."""
    depth = 0
    for i in range(at - 1, -1, -1):
        if tokens[i].kind is TokenKind.RPAREN:
            depth += 1
        elif tokens[i].kind is TokenKind.LPAREN:
            if depth == 0:
                return word_at(tokens, i - 1) in ("CAST", "TRY_CAST")
            depth -= 1
    return False


def _bounds(tokens: list[Token], at: int) -> tuple[int, int, int] | None:
    """For the bounds of ``BETWEEN [A]SYMMETRIC a AND b`` that start at ``at``: the
    index of the AND between them, of the token after ``b``, and of ``b``'s last."""
    depth, between_and = 0, None
    i = at
    while i < len(tokens):
        token, word = tokens[i], word_at(tokens, i)
        if token.kind is TokenKind.LPAREN or token.text == "[":
            depth += 1
        elif token.kind is TokenKind.RPAREN or token.text == "]":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and word == "AND" and between_and is None:
            between_and = i
        elif depth == 0 and (
            token.kind in (TokenKind.COMMA, TokenKind.SEMICOLON)
            or word in _BOUND_ENDS
            or token.kind is TokenKind.EQUALS
            or token.text in ("<", ">", "<=", ">=", "<>", "!=")
        ):
            break
        i += 1
    if between_and is None or between_and == at or i == between_and + 1:
        return None
    return between_and, i, i - 1


def _symmetric(text: str, tokens: list[Token], at: int, end: int, between_and: int) -> str:
    """``a AND b`` (tokens ``at`` to ``end``) as the smaller AND the larger of the two;
    a NULL bound stays NULL on its side, as in ``x BETWEEN a AND b OR x BETWEEN b AND a``."""
    low = flink_functions(text[tokens[at].start : tokens[between_and - 1].end])
    high = flink_functions(text[tokens[between_and + 1].start : tokens[end].end])
    first = f"CASE WHEN ({low}) <= ({high}) THEN ({low}) ELSE ({high}) END"
    second = f"CASE WHEN ({low}) <= ({high}) THEN ({high}) ELSE ({low}) END"
    return f"{first} AND {second}"


def _is_ddl(tokens: list[Token]) -> bool:
    words = [word_at(tokens, i) for i in range(min(len(tokens), 4))]
    if words[:1] == ["ALTER"] and "TABLE" in words:
        return True
    return words[:1] == ["CREATE"] and "TABLE" in words[1:4]


def flink_functions(text: str) -> str:
    """``text`` with the Flink spellings of this module's table in Spark's."""
    if _LOOK.search(text) is None:
        return text  # the common case: nothing to look at
    tokens = [t for t in tokenize(text) if not t.is_comment]
    if not balanced(tokens):
        return text  # an incomplete statement: the parser says so
    if _is_ddl(tokens):
        return text
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) in the text
    i = 0
    while i < len(tokens):
        tok, word = tokens[i], word_at(tokens, i)
        before = word_at(tokens, i - 1)
        after_dot = _is(tokens, i - 1, TokenKind.DOT)
        if word in ("ARRAY", "MAP") and _is(tokens, i + 1, TokenKind.OPERATOR, "["):
            close = _closing_bracket(tokens, i + 1)
            # m['k'] reads a map column named map: a constructor has key, value pairs.
            pairs = word == "ARRAY" or _pairs(tokens[i + 1 : (close or i + 1) + 1])
            if close is not None and pairs:
                edits.append((tok.start, tokens[i + 1].end, f"{word.lower()}("))
                edits.append((tokens[close].start, tokens[close].end, ")"))
        elif word == "ROW" and _is(tokens, i + 1, TokenKind.OPERATOR, "<"):
            edits.append((tok.start, tok.end, "STRUCT"))  # the type ROW<a INT>
        elif word == "ROW" and _is(tokens, i + 1, TokenKind.LPAREN) and not after_dot:
            previous = tokens[i - 1] if i > 0 else None
            is_value = previous is None or before in _BEFORE_VALUES
            is_value = is_value or (
                previous is not None
                and previous.kind in (TokenKind.LPAREN, TokenKind.COMMA, TokenKind.EQUALS)
            )
            if is_value and not (previous is not None and previous.text == "<"):
                edits.append((tok.start, tok.end, "struct"))
        elif word in _BARE and not _is(tokens, i + 1, TokenKind.LPAREN) and not after_dot:
            edits.append((tok.start, tok.end, _BARE[word]))
        elif word in _NOW and _is(tokens, i + 1, TokenKind.LPAREN) and not after_dot:
            if _is(tokens, i + 2, TokenKind.RPAREN):
                edits.append((tok.start, tokens[i + 2].end, _NOW[word]))
        elif word in JSON_FUNCTIONS and _is(tokens, i + 1, TokenKind.LPAREN) and not after_dot:
            items, end = group_items(tokens, i + 1)
            call = json_call(word, items, text, flink_functions)
            if call is not None:
                edits.append((tok.start, tokens[end - 1].end, call))
                i = end
                continue
        elif word == "IS" and (test := is_json(tokens, i)) is not None:
            end, before, after = test
            start = operand_start(tokens, i)
            if start is not None:
                edits.append((tokens[start].start, tokens[start].start, before))
                edits.append((tokens[i - 1].end, tokens[end - 1].end, after))
                i = end
                continue
        elif word in ("SYMMETRIC", "ASYMMETRIC") and before == "BETWEEN":
            bounds = _bounds(tokens, i + 1)
            if bounds is not None:
                between_and, following, last = bounds
                bounded = _symmetric(text, tokens, i + 1, last, between_and)
                if word == "ASYMMETRIC":  # BETWEEN's own meaning
                    bounded = flink_functions(text[tokens[i + 1].start : tokens[last].end])
                edits.append((tok.start, tokens[last].end, bounded))
                i = following
                continue
        elif word in ("FLOOR", "CEIL", "CEILING") and _is(tokens, i + 1, TokenKind.LPAREN):
            items, end = group_items(tokens, i + 1)
            inner = items[0] if len(items) == 1 else []
            unit = word_at(inner, len(inner) - 1)
            if len(inner) > 2 and word_at(inner, len(inner) - 2) == "TO" and unit in _TIME_UNITS:
                value = flink_functions(text[inner[0].start : inner[-3].end])
                floor = f"date_trunc('{unit}', {value})"
                if word != "FLOOR":
                    floor = (
                        f"CASE WHEN {floor} = {value} THEN {floor} "
                        f"ELSE {floor} + {_TIME_UNITS[unit]} END"
                    )
                edits.append((tok.start, tokens[end - 1].end, f"({floor})"))
                i = end
                continue
        elif word in _RENAMES and _is(tokens, i + 1, TokenKind.LPAREN) and not after_dot:
            edits.append((tok.start, tok.end, _RENAMES[word]))
        elif word in _CALL_NAMES and _is(tokens, i + 1, TokenKind.LPAREN) and not after_dot:
            items, end = group_items(tokens, i + 1)
            template = _CALLS.get((word, len(items)))
            if template is not None:
                args = [flink_functions(text[t[0].start : t[-1].end]) for t in items]
                edits.append((tok.start, tokens[end - 1].end, template.format(*args)))
                i = end
                continue
        elif (
            word in _CAST_TYPES
            and before == "AS"
            and _is(tokens, i + 1, TokenKind.RPAREN)
            and _in_cast(tokens, i)  # a cast's type, not an alias
        ):
            edits.append((tok.start, tok.end, _CAST_TYPES[word]))
        i += 1
    if not edits:
        return text
    pieces: list[str] = []
    last = 0
    for start, end, replacement in sorted(edits):
        pieces += [text[last:start], replacement]
        last = end
    pieces.append(text[last:])
    return "".join(pieces)
