"""Flink's windowing table-valued functions and group window functions, in Spark SQL.

Flink windows a table with a table-valued function in ``FROM``::

    TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTES [, offset]))
    TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide, size [, offset]))
    TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, size [, offset]))

(arguments also by name: ``DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZE =>
...``). Each returns ``t``'s columns and ``window_start``, ``window_end`` and
``window_time`` (the window's last instant, a time attribute), a row once per
window it falls in. Spark has no table functions of this kind; its
``window(ts, size, slide, offset)`` makes the same windows as a struct, so the
gateway writes the call as a subquery over it::

    (SELECT * EXCEPT (w), w.start AS window_start, w.end AS window_end,
            window_time(w) AS window_time
     FROM (SELECT *, window(ts, '10 minutes', ...) AS w FROM t))

``window_time`` carries the table's watermark, as Flink's does. CUMULATE's
windows (``[start, start + k * step)`` up to ``size``) are the tumbling window
of ``size``, one row per step whose window end is past the row's time.

The group window functions of Flink's older syntax, ``GROUP BY TUMBLE(ts,
size)``, ``HOP(ts, slide, size)`` and ``SESSION(ts, gap)``, with
``TUMBLE_START|END|ROWTIME(ts, size)`` (and HOP's and SESSION's) in the select
list, are Spark's ``window(...)`` and ``session_window(...)`` and their
``.start``/``.end`` fields.

Spark's ``window`` takes its sizes as literals: the intervals must be literals
of one unit (``INTERVAL '10' MINUTES``, ``INTERVAL '1' HOUR``). Flink's
``SESSION`` table function has no Spark counterpart outside an aggregation and
is refused, naming the group window function that does the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sparkgate.api.errors import SqlParseError, UnsupportedStatementError
from sparkgate.sql.lexer import Token, TokenKind, balanced, group_items, tokenize, unquote, word_at
from sparkgate.sql.quoting import quote_identifier, quote_string

__all__ = ["window_functions"]

_TVFS = ("TUMBLE", "HOP", "CUMULATE", "SESSION")
# A call of one of them or of their auxiliary functions (not `shop`, `session_id`).
_LOOK = re.compile(r"\b(?:TUMBLE|HOP|CUMULATE|SESSION)(?:_\w+)?\s*\(", re.IGNORECASE)
# The parameters of each table function, in order, as Flink names them.
_PARAMETERS = {
    "TUMBLE": ("DATA", "TIMECOL", "SIZE", "OFFSET"),
    "HOP": ("DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"),
    "CUMULATE": ("DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"),
    "SESSION": ("DATA", "TIMECOL", "GAP"),
}
# Group window functions and their auxiliary functions: (window, field).
_GROUP_WINDOWS = {"TUMBLE": "window", "HOP": "window", "SESSION": "session_window"}
_AUXILIARY = {
    f"{kind}_{suffix}": (kind, field)
    for kind in _GROUP_WINDOWS
    for suffix, field in (("START", "start"), ("END", "end"), ("ROWTIME", None))
}
_BEFORE_NAMES = frozenset(
    {"TABLE", "TABLES", "INTO", "VIEW", "EXISTS", "FROM", "JOIN", "UPDATE", "FUNCTION"}
)
_WINDOW = "`__sparkgate_window`"
_STEP = "`__sparkgate_step`"
_LAST_INSTANT = "INTERVAL '0.000001' SECOND"  # a window's end less Spark's smallest step

_MICROS = {
    "MICROSECOND": 1,
    "MILLISECOND": 1_000,
    "SECOND": 1_000_000,
    "MINUTE": 60_000_000,
    "HOUR": 3_600_000_000,
    "DAY": 86_400_000_000,
}
_NUMBER = re.compile(r"\s*(\d+(?:\.\d+)?)\s*")


@dataclass(frozen=True)
class _Duration:
    """An interval literal of one unit: its Spark duration string and length."""

    text: str
    micros: int


def _duration(tokens: list[Token], what: str, function: str) -> _Duration:
    """``INTERVAL 'n' UNIT`` (or ``INTERVAL n UNIT``), ``UNIT`` singular or plural."""
    words = [t for t in tokens if not t.is_comment]
    shape = [t.kind for t in words]
    valid = (
        len(words) == 3
        and words[0].upper == "INTERVAL"
        and shape[1] in (TokenKind.STRING, TokenKind.NUMBER)
        and shape[2] is TokenKind.WORD
    )
    unit = words[2].upper.removesuffix("S") if valid else ""
    value = unquote(words[1]) if valid and shape[1] is TokenKind.STRING else ""
    if valid and shape[1] is TokenKind.NUMBER:
        value = words[1].text
    number = _NUMBER.fullmatch(value)
    if not valid or unit not in _MICROS or number is None:
        shown = " ".join(t.text for t in words)
        raise UnsupportedStatementError(
            f"{function}'s {what} must be an interval literal of one unit, such as "
            f"INTERVAL '10' MINUTES (Spark's window() takes literal sizes): {shown}"
        )
    amount = float(number.group(1))
    return _Duration(f"{number.group(1)} {unit.lower()}s", round(amount * _MICROS[unit]))


def _arguments(items: list[list[Token]], function: str) -> dict[str, list[Token]]:
    """The table function's arguments by parameter name (positional or ``NAME =>``)."""
    names = _PARAMETERS[function]
    found: dict[str, list[Token]] = {}
    for position, item in enumerate(items):
        if len(item) > 2 and item[1].kind is TokenKind.OPERATOR and item[1].text == "=>":
            name, value = item[0].upper, item[2:]
            if name not in names:
                raise UnsupportedStatementError(
                    f"{function} has no parameter {item[0].text}; its parameters: "
                    + ", ".join(names)
                )
        elif position < len(names):
            name, value = names[position], item
        else:
            raise UnsupportedStatementError(f"{function} takes at most {len(names)} arguments")
        found[name] = value
    return found


def _table(text: str, tokens: list[Token], function: str) -> str:
    """The relation of ``TABLE t`` or ``TABLE (query)``, as Spark SQL."""
    if len(tokens) < 2 or tokens[0].upper != "TABLE":
        raise UnsupportedStatementError(
            f"{function}'s first argument is the table to window: TABLE t"
        )
    body = text[tokens[1].start : tokens[-1].end]
    if tokens[1].kind is TokenKind.LPAREN:
        return f"{body} AS `__sparkgate_windowed`"
    return body


def _time_column(tokens: list[Token], function: str) -> str:
    inner = [t for t in tokens if not t.is_comment]
    if (
        len(inner) == 4
        and inner[0].upper == "DESCRIPTOR"
        and inner[1].kind is TokenKind.LPAREN
        and inner[2].kind in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER)
        and inner[3].kind is TokenKind.RPAREN
    ):
        return quote_identifier(unquote(inner[2]))
    raise UnsupportedStatementError(
        f"{function}'s time column is given as DESCRIPTOR(column): "
        + " ".join(t.text for t in inner)
    )


def _window_call(column: str, size: _Duration, slide: _Duration, offset: _Duration | None) -> str:
    args = [column, quote_string(size.text), quote_string(slide.text)]
    if offset is not None:
        args.append(quote_string(offset.text))
    return f"window({', '.join(args)})"


def _table_function(text: str, function: str, items: list[list[Token]]) -> str:
    """The Spark SQL subquery of one windowing table function call."""
    if function == "SESSION":
        raise UnsupportedStatementError(
            "The SESSION window table function is not supported on Spark, whose session "
            "windows exist only in an aggregation: group by the group window function "
            "instead, GROUP BY SESSION(ts, INTERVAL '5' MINUTES), with SESSION_START(ts, "
            "INTERVAL '5' MINUTES) and SESSION_END(...) in the select list"
        )
    args = _arguments(items, function)
    missing = [p for p in _PARAMETERS[function] if p != "OFFSET" and p not in args]
    if missing:
        raise UnsupportedStatementError(f"{function} is missing its {', '.join(missing)}")
    table = _table(text, args["DATA"], function)
    column = _time_column(args["TIMECOL"], function)
    size = _duration(args["SIZE"], "size", function)
    offset = _duration(args["OFFSET"], "offset", function) if "OFFSET" in args else None
    fields = (
        f"{_WINDOW}.start AS window_start, {_WINDOW}.end AS window_end, "
        f"window_time({_WINDOW}) AS window_time"
    )
    if function == "TUMBLE":
        windowed = _window_call(column, size, size, offset)
    elif function == "HOP":
        slide = _duration(args["SLIDE"], "slide", function)
        windowed = _window_call(column, size, slide, offset)
    else:
        step = _duration(args["STEP"], "step", function)
        if step.micros <= 0 or size.micros % step.micros:
            raise UnsupportedStatementError(
                f"CUMULATE's size must be a whole multiple of its step: {size.text} and {step.text}"
            )
        steps = size.micros // step.micros
        seconds = f"{step.micros // 1_000_000}.{step.micros % 1_000_000:06d}"
        end = f"{_WINDOW}.start + make_dt_interval(0, 0, 0, {_STEP} * {seconds})"
        inner = _window_call(column, size, size, offset)
        return (
            f"(SELECT * EXCEPT ({_WINDOW}, {_STEP}), {_WINDOW}.start AS window_start, "
            f"{end} AS window_end, {end} - {_LAST_INSTANT} AS window_time "
            f"FROM (SELECT *, {inner} AS {_WINDOW}, explode(sequence(1, {steps})) AS {_STEP} "
            f"FROM {table}) WHERE {column} < {end})"
        )
    return (
        f"(SELECT * EXCEPT ({_WINDOW}), {fields} "
        f"FROM (SELECT *, {windowed} AS {_WINDOW} FROM {table}))"
    )


def _group_window(text: str, function: str, items: list[list[Token]]) -> str:
    """``TUMBLE(ts, size)`` and its kin as Spark's window struct."""
    call = f"{function}(...)"
    if function == "SESSION":
        if len(items) != 2:
            raise UnsupportedStatementError(f"{call} takes the time column and the gap")
        gap = _duration(items[1], "gap", function)
        return f"session_window({_expression(text, items[0])}, {quote_string(gap.text)})"
    if function == "TUMBLE":
        if len(items) != 2:
            raise UnsupportedStatementError(f"{call} takes the time column and the size")
        size = _duration(items[1], "size", function)
        return _window_call(_expression(text, items[0]), size, size, None)
    if len(items) != 3:
        raise UnsupportedStatementError(f"{call} takes the time column, the slide and the size")
    slide = _duration(items[1], "slide", function)
    size = _duration(items[2], "size", function)
    return _window_call(_expression(text, items[0]), size, slide, None)


def _expression(text: str, tokens: list[Token]) -> str:
    return text[tokens[0].start : tokens[-1].end]


def window_functions(text: str) -> str:
    """``text`` with Flink's window table functions and group window functions
    written in Spark SQL (see the module's docstring); anything else as it was."""
    if _LOOK.search(text) is None:
        return text  # the common case: nothing to look at
    tokens = [t for t in tokenize(text) if not t.is_comment]
    if not balanced(tokens):
        return text  # an incomplete statement: the parser says so
    pieces: list[str] = []
    last = 0
    i = 0
    inserts: dict[int, str] = {}  # after which token, what
    while i < len(tokens):
        tok = tokens[i]
        if i in inserts:
            pieces.append(text[last : tok.end])
            pieces.append(inserts.pop(i))
            last = tok.end
        word = word_at(tokens, i)
        opens = i + 1 < len(tokens) and tokens[i + 1].kind is TokenKind.LPAREN
        # A name, not a call: `t.tumble(`, `CREATE TABLE session (`, `INTO hop (`.
        named = i > 0 and (
            tokens[i - 1].kind is TokenKind.DOT or word_at(tokens, i - 1) in _BEFORE_NAMES
        )
        if (
            word == "TABLE"
            and opens
            and word_at(tokens, i + 2) in _TVFS
            and i + 3 < len(tokens)
            and tokens[i + 3].kind is TokenKind.LPAREN
        ):
            function = word_at(tokens, i + 2)
            items, close = _group(tokens, i + 3)
            if close >= len(tokens) or tokens[close].kind is not TokenKind.RPAREN:
                raise SqlParseError(f"TABLE({function}(...)) is missing its closing ')'")
            pieces.append(text[last : tok.start])
            pieces.append(_table_function(text, function, items))
            found = _window_grouping(tokens, close + 1)
            if found is not None:
                inserts[found[0]] = f", {found[1]}window_time"
            last = tokens[close].end
            i = close + 1
            continue
        if word in _AUXILIARY and opens and not named:
            kind, field = _AUXILIARY[word]
            items, end = _group(tokens, i + 1)
            call = _group_window(text, kind, items)
            pieces.append(text[last : tok.start])
            # A window's last instant (Spark's window_time() is not an aggregate's key).
            pieces.append(f"{call}.{field}" if field else f"({call}.end - {_LAST_INSTANT})")
            last = tokens[end - 1].end
            i = end
            continue
        if word in _GROUP_WINDOWS and opens and not named and word_at(tokens, i + 2) != "TABLE":
            items, end = _group(tokens, i + 1)
            pieces.append(text[last : tok.start])
            pieces.append(_group_window(text, word, items))
            last = tokens[end - 1].end
            i = end
            continue
        i += 1
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


# What ends a GROUP BY list in its query block.
_AFTER_GROUP_BY = frozenset(
    {"HAVING", "ORDER", "LIMIT", "OFFSET", "WINDOW", "UNION", "EXCEPT", "INTERSECT", "MINUS"}
    | {"QUALIFY", "CLUSTER", "DISTRIBUTE", "SORT", "INSERT", "SELECT"}
)


def _window_grouping(tokens: list[Token], start: int) -> tuple[int, str] | None:
    """Where a window table function's query block groups by ``window_start`` and
    ``window_end`` without ``window_time``: the index of the list's last token,
    and the qualifier the keys are written with (``w.``), so that ``window_time``
    joins the keys. It carries the watermark, which lets Spark emit each window
    once, final, as Flink's window aggregation does; it adds no group."""
    depth = 0
    i = start
    while i < len(tokens):
        kind = tokens[i].kind
        if kind is TokenKind.LPAREN:
            depth += 1
        elif kind is TokenKind.RPAREN:
            depth -= 1
            if depth < 0:
                return None
        elif kind is TokenKind.SEMICOLON:
            return None
        elif depth == 0 and word_at(tokens, i) == "GROUP" and word_at(tokens, i + 1) == "BY":
            break
        i += 1
    else:
        return None
    keys: list[list[Token]] = [[]]
    i += 2
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind is TokenKind.LPAREN:
            depth += 1
        elif tok.kind is TokenKind.RPAREN:
            depth -= 1
            if depth < 0:
                break
        elif depth == 0 and (
            tok.kind is TokenKind.SEMICOLON or word_at(tokens, i) in _AFTER_GROUP_BY
        ):
            break
        if depth == 0 and tok.kind is TokenKind.COMMA:
            keys.append([])
        else:
            keys[-1].append(tok)
        i += 1
    named: dict[str, str] = {}
    for key in keys:
        names = [t for t in key if t.kind is not TokenKind.DOT]
        if (
            names
            and len(key) in (1, 3)
            and all(t.kind in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER) for t in names)
        ):
            qualifier = f"{key[0].text}." if len(key) == 3 else ""
            named[unquote(key[-1]).lower()] = qualifier
    if "window_start" not in named or "window_end" not in named or "window_time" in named:
        return None
    return i - 1, named["window_start"]


def _group(tokens: list[Token], start: int) -> tuple[list[list[Token]], int]:
    try:
        return group_items(tokens, start)
    except SqlParseError:
        raise SqlParseError("a window function's '(' is not closed") from None
