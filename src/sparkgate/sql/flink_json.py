"""Flink's JSON functions written as Spark SQL. Spark has none of these names
and none of their clauses, so no statement Spark runs changes meaning:

==========================================  ========================================
Flink                                       Spark
==========================================  ========================================
``s IS [NOT] JSON [VALUE|SCALAR|ARRAY|      ``try_parse_json(s)``, and the kind from
OBJECT]``                                   ``schema_of_variant``; FALSE for NULL
``JSON_EXISTS(j, path [... ON ERROR])``     ``try_variant_get`` of the parsed value
``JSON_VALUE(j, path RETURNING t ...)``     ``get_json_object``, cast to ``t``, with
                                            the ``ON EMPTY`` / ``ON ERROR`` answers
``JSON_QUERY(j, path [RETURNING t]          the value at the path as
[WITH|WITHOUT ... WRAPPER] ...)``            ``to_json`` writes it, wrapped in an
                                            array as the clause says; a scalar
                                            unwrapped is an error (NULL by default)
``JSON_VALUE|QUERY(j, 'lax|strict $.a')``   the path without its mode
``JSON_STRING(v)``                          ``v`` as ``to_json`` writes it
``JSON_OBJECT([KEY] k VALUE v, ...)``       ``to_json(named_struct(k, v, ...))``
``JSON_ARRAY(v, ...)``                      the values as ``to_json`` writes them
``JSON_ARRAYAGG(v)``                        ``to_json(collect_list(v))``
``JSON_OBJECTAGG([KEY] k VALUE v)``         ``to_json(map_from_entries(...))``
``JSON_QUOTE(s)``, ``JSON_UNQUOTE(s)``      a JSON string literal and back
==========================================  ========================================

``NULL ON NULL`` and ``ABSENT ON NULL`` keep or drop NULL values (the
constructors' defaults are Flink's: JSON_OBJECT(AGG) keeps them, JSON_ARRAY(AGG)
drops them). A value made by another JSON_OBJECT or JSON_ARRAY is nested as
JSON, not as a string.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sparkgate.sql.lexer import Token, TokenKind, unquote, word_at

__all__ = ["JSON_FUNCTIONS", "is_json", "json_call", "operand_start"]

JSON_FUNCTIONS = frozenset(
    {
        "JSON_OBJECT",
        "JSON_ARRAY",
        "JSON_STRING",
        "JSON_EXISTS",
        "JSON_VALUE",
        "JSON_QUERY",
        "JSON_ARRAYAGG",
        "JSON_OBJECTAGG",
        "JSON_QUOTE",
        "JSON_UNQUOTE",
    }
)
# What a value of the kind named after IS JSON is, by schema_of_variant.
_KINDS = {"OBJECT": "^OBJECT<", "ARRAY": "^ARRAY<", "SCALAR": "^(?!OBJECT<|ARRAY<)"}
# Where the operand of a postfix IS JSON starts: after one of these.
_OPERAND_AFTER = frozenset(
    {"SELECT", "WHERE", "AND", "OR", "NOT", "WHEN", "THEN", "ELSE", "CASE", "ON", "HAVING"}
    | {"BY", "RETURN", "DISTINCT", "ALL", "IF"}
)
_COMPARISONS = frozenset({"<", ">", "<=", ">=", "<>", "!=", "==", "<=>"})
# The words that start a clause after a JSON function's path.
_CLAUSES = frozenset(
    {"RETURNING", "NULL", "ERROR", "DEFAULT", "TRUE", "FALSE", "UNKNOWN", "WITH", "WITHOUT"}
    | {"EMPTY"}
)
_MODE = re.compile(r"^\s*(?:lax|strict)\s+", re.IGNORECASE)
_MEMBER = re.compile(r"""\.?\[\s*(?:"([^"]*)"|'([^']*)')\s*\]""")
_CAST_TYPES = {"VARCHAR": "STRING", "CHAR": "STRING", "BYTES": "BINARY"}

Rewrite = Callable[[str], str]


def operand_start(tokens: Sequence[Token], at: int) -> int | None:
    """The index of the first token of the operand ending just before ``at``."""
    depth = 0
    i = at - 1
    while i >= 0:
        token = tokens[i]
        if token.kind is TokenKind.RPAREN or token.text == "]":
            depth += 1
        elif token.kind is TokenKind.LPAREN or token.text == "[":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (
            token.kind in (TokenKind.COMMA, TokenKind.EQUALS, TokenKind.SEMICOLON)
            or token.text in _COMPARISONS
            or word_at(tokens, i) in _OPERAND_AFTER
        ):
            break
        i -= 1
    return i + 1 if i + 1 < at else None


def is_json(tokens: Sequence[Token], at: int) -> tuple[int, str, str] | None:
    """For ``IS [NOT] JSON [kind]`` at ``at``: the index after it, and the text
    to put before its operand and in place of it."""
    i = at + 1
    negated = word_at(tokens, i) == "NOT"
    if negated:
        i += 1
    if word_at(tokens, i) != "JSON":
        return None
    kind = word_at(tokens, i + 1)
    end = i + 2 if kind in ("VALUE", *_KINDS) else i + 1
    # In parentheses: a negation is one operand wherever it stands (x = j IS NOT JSON).
    prefix = "(NOT " if negated else "("
    if kind in _KINDS:
        before = f"{prefix}coalesce(schema_of_variant(try_parse_json("
        return end, before, f")) RLIKE '{_KINDS[kind]}', false))"
    return end, f"{prefix}try_parse_json(", ") IS NOT NULL)"


def _text(text: str, tokens: Sequence[Token]) -> str:
    return text[tokens[0].start : tokens[-1].end] if tokens else ""


def _on_null(item: list[Token], default: str) -> tuple[list[Token], str]:
    """``item`` without a trailing ``NULL|ABSENT ON NULL``, and which it says."""
    tail = [word_at(item, len(item) - k) for k in (3, 2, 1)]
    if tail[1:] == ["ON", "NULL"] and tail[0] in ("NULL", "ABSENT"):
        return item[:-3], tail[0]
    return item, default


def _ignore_nulls(on_null: str) -> str:
    return f"map('ignoreNullFields', '{'true' if on_null == 'ABSENT' else 'false'}')"


def _value(text: str, item: Sequence[Token], rewrite: Rewrite) -> str:
    """A JSON constructor's value: another constructor's JSON nests as JSON."""
    value = rewrite(_text(text, item))
    nested = word_at(item, 0) in ("JSON_OBJECT", "JSON_ARRAY") and len(item) > 2
    if nested and item[1].kind is TokenKind.LPAREN and item[-1].kind is TokenKind.RPAREN:
        return f"parse_json({value})"
    return f"({value})"


def _key_value(item: list[Token]) -> tuple[Token, list[Token]] | None:
    """``[KEY] 'k' VALUE v`` as the key's literal and the value's tokens."""
    if word_at(item, 0) == "KEY":
        item = item[1:]
    if len(item) < 3 or item[0].kind is not TokenKind.STRING or word_at(item, 1) != "VALUE":
        return None
    return item[0], item[2:]


def _path(text: str, item: Sequence[Token]) -> str:
    """A path literal as Spark reads paths: without Flink's ``lax``/``strict``
    mode (Spark has one) and with a member in brackets as ``['m']``, not
    ``.["m"]``."""
    if len(item) != 1 or item[0].kind is not TokenKind.STRING or item[0].text[0] in "rR":
        return _text(text, item)
    path = _MODE.sub("", unquote(item[0]))
    path = _MEMBER.sub(lambda m: "['" + (m.group(1) or m.group(2) or "") + "']", path)
    return "'" + path.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _json_object(text: str, items: list[list[Token]], rewrite: Rewrite) -> str | None:
    if not items:
        return "'{}'"
    last, on_null = _on_null(items[-1], "NULL")
    pairs = [*items[:-1], last] if last else items[:-1]
    fields: list[str] = []
    for item in pairs:
        key_value = _key_value(item)
        if key_value is None:
            return None
        key, value = key_value
        fields += [key.text, _value(text, value, rewrite)]
    if not fields:
        return "'{}'"
    return f"to_json(named_struct({', '.join(fields)}), {_ignore_nulls(on_null)})"


def _json_array(text: str, items: list[list[Token]], rewrite: Rewrite) -> str:
    if not items:
        return "'[]'"
    last, on_null = _on_null(items[-1], "ABSENT")
    values = [*items[:-1], last] if last else items[:-1]
    if not values:
        return "'[]'"
    # Values of any types, in order: an object of them read back as a map of
    # variants, its keys sorting as the values stand.
    fields = ", ".join(
        f"'e{n:05d}', {_value(text, item, rewrite)}" for n, item in enumerate(values)
    )
    record = f"to_json(named_struct({fields}), {_ignore_nulls(on_null)})"
    return f"to_json(map_values(from_json({record}, 'map<string, variant>')))"


def _json_string(value: str) -> str:
    record = f"to_json(named_struct('v', {value}), {_ignore_nulls('NULL')})"
    return f"nullif(to_json(from_json({record}, 'map<string, variant>')['v']), 'null')"


def _json_exists(json: str, path: str, on_error: str) -> str:
    found = f"try_variant_get(try_parse_json({json}), {path}) IS NOT NULL"
    if on_error == "ERROR":
        return f"(variant_get(parse_json({json}), {path}) IS NOT NULL)"
    if on_error in ("TRUE", "UNKNOWN"):
        answer = "TRUE" if on_error == "TRUE" else "NULL"
        found = f"CASE WHEN try_parse_json({json}) IS NULL THEN {answer} ELSE {found} END"
    return f"CASE WHEN ({json}) IS NULL THEN NULL ELSE {found} END"


def _behaviours(
    tokens: list[Token], text: str, rewrite: Rewrite
) -> tuple[str | None, dict[str, str]] | None:
    """JSON_VALUE's clauses after the path: the RETURNING type and the answer
    ON EMPTY and ON ERROR (NULL, ERROR or a DEFAULT's Spark text)."""
    returning: str | None = None
    answers: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        word = word_at(tokens, i)
        if word == "RETURNING" and i + 1 < len(tokens):
            end = i + 1
            while end < len(tokens) and word_at(tokens, end) not in ("NULL", "ERROR", "DEFAULT"):
                end += 1
            spelled = _text(text, tokens[i + 1 : end])
            returning = _CAST_TYPES.get(spelled.upper(), spelled)
            i = end
            continue
        on = next((k for k in range(i + 1, len(tokens)) if word_at(tokens, k) == "ON"), None)
        if on is None or word_at(tokens, on + 1) not in ("EMPTY", "ERROR") or on + 2 > len(tokens):
            return None
        if word in ("NULL", "ERROR") and on == i + 1:
            answers[word_at(tokens, on + 1)] = word
        elif word == "DEFAULT" and on > i + 1:
            answers[word_at(tokens, on + 1)] = f"({rewrite(_text(text, tokens[i + 1 : on]))})"
        else:
            return None
        i = on + 2
    return returning, answers


def _json_value(
    json: str, path: str, clauses: list[Token], text: str, rewrite: Rewrite
) -> str | None:
    read = _behaviours(clauses, text, rewrite)
    if read is None:
        return None
    returning, answers = read
    raw = f"get_json_object({json}, {path})"
    if returning is None:
        typed = raw
    elif answers.get("ERROR") == "ERROR":
        typed = f"CAST({raw} AS {returning})"
    else:
        typed = f"try_cast({raw} AS {returning})"
    fail = f"raise_error('JSON_VALUE: no value at ' || {path})"
    empty = answers.get("EMPTY", "NULL")
    if empty == "ERROR":
        empty = fail
    error = answers.get("ERROR", "NULL")
    if error == "ERROR":
        error = "NULL"  # the strict CAST above has raised already
    return f"CASE WHEN {raw} IS NULL THEN {empty} ELSE coalesce({typed}, {error}) END"


_QUERY_ANSWERS = {"NULL": "NULL", "EMPTY ARRAY": "'[]'", "EMPTY OBJECT": "'{}'"}


def _query_clauses(tokens: list[Token]) -> tuple[str | None, str, dict[str, str]] | None:
    """JSON_QUERY's clauses after the path: the RETURNING type, the wrapper
    (WITHOUT, CONDITIONAL or UNCONDITIONAL) and the answers ON EMPTY and ON ERROR."""
    words = [word_at(tokens, k) for k in range(len(tokens))]
    returning, wrapper, answers = None, "WITHOUT", {}
    i = 0
    while i < len(words):
        if words[i] == "RETURNING":
            end = i + 1
            while end < len(words) and words[end] not in ("WITH", "WITHOUT", "NULL", "EMPTY"):
                end += 1
            returning = " ".join(t.text for t in tokens[i + 1 : end]).upper().replace(" ", "")
            i = end
        elif words[i] in ("WITH", "WITHOUT"):
            end = words.index("WRAPPER", i) if "WRAPPER" in words[i:] else -1
            middle = [w for w in words[i + 1 : end] if w != "ARRAY"]
            if end < 0 or len(middle) > 1 or (words[i] == "WITHOUT" and middle):
                return None
            kind = middle[0] if middle else "UNCONDITIONAL"
            if kind not in ("CONDITIONAL", "UNCONDITIONAL"):
                return None
            wrapper = "WITHOUT" if words[i] == "WITHOUT" else kind
            i = end + 1
        else:
            on = words.index("ON", i) if "ON" in words[i:] else -1
            answer = " ".join(words[i:on]) if on > i else ""
            if on < 0 or on + 1 >= len(words) or words[on + 1] not in ("EMPTY", "ERROR"):
                return None
            if answer not in (*_QUERY_ANSWERS, "ERROR"):
                return None
            answers[words[on + 1]] = answer
            i = on + 2
    return returning, wrapper, answers


def _json_query(json: str, path: str, strict: bool, clauses: list[Token]) -> str | None:
    read = _query_clauses(clauses)
    if read is None:
        return None
    returning, wrapper, answers = read
    if returning not in (None, "STRING", "VARCHAR", "ARRAY<STRING>", "ARRAY<VARCHAR>"):
        return None

    def answer(case: str, why: str) -> str:
        said = answers.get(case, "NULL")
        if said == "ERROR":
            return f"raise_error('JSON_QUERY: ' || {why})"
        return _QUERY_ANSWERS[said]

    if "*" in path:
        # Spark's variant paths have no wildcards; get_json_object gathers the matches.
        if wrapper != "WITHOUT" or answers:
            return None
        found = f"get_json_object({json}, {path})"
    else:
        parsed = f"try_parse_json(CAST({json} AS STRING))"
        value = f"try_variant_get({parsed}, {path})"
        kind = f"schema_of_variant({value})"
        text = f"to_json({value})"
        wrapped = f"'[' || {text} || ']'"
        no_value = f"'no value at ' || {path}"
        empty = answer("ERROR", no_value) if strict else answer("EMPTY", no_value)
        if wrapper == "UNCONDITIONAL":
            shaped = wrapped
        elif wrapper == "CONDITIONAL":
            shaped = f"CASE WHEN {kind} LIKE 'ARRAY<%' THEN {text} ELSE {wrapped} END"
        else:
            scalar = answer("ERROR", f"'a scalar at ' || {path} || ' needs a WRAPPER'")
            shaped = f"CASE WHEN {kind} RLIKE '^(ARRAY|OBJECT)<' THEN {text} ELSE {scalar} END"
        found = (
            f"CASE WHEN ({json}) IS NULL THEN NULL "
            f"WHEN {parsed} IS NULL THEN {answer('ERROR', repr('not JSON'))} "
            f"WHEN {value} IS NULL THEN {empty} ELSE {shaped} END"
        )
    if returning is not None and returning.startswith("ARRAY"):
        return f"from_json({found}, 'array<string>')"
    return found


def _aggregate(name: str, items: list[list[Token]], text: str, rewrite: Rewrite) -> str | None:
    if len(items) != 1:
        return None
    if name == "JSON_ARRAYAGG":
        item, on_null = _on_null(items[0], "ABSENT")
        value = _value(text, item, rewrite) if item else None
        if value is None:
            return None
        if on_null == "ABSENT":
            return f"to_json(collect_list({value}))"
        return f"to_json(transform(collect_list(named_struct('v', {value})), e -> e.v))"
    item, on_null = _on_null(items[0], "NULL")
    if word_at(item, 0) == "KEY":
        item = item[1:]
    split = next((k for k, t in enumerate(item) if word_at(item, k) == "VALUE" and k), None)
    if split is None or split + 1 >= len(item):
        return None
    key = rewrite(_text(text, item[:split]))
    value = _value(text, item[split + 1 :], rewrite)
    entries = f"collect_list(named_struct('k', {key}, 'v', {value}))"
    if on_null == "ABSENT":
        entries = f"filter({entries}, e -> e.v IS NOT NULL)"
    return f"to_json(map_from_entries({entries}))"


def json_call(name: str, items: list[list[Token]], text: str, rewrite: Rewrite) -> str | None:
    """Spark SQL for the call of Flink's JSON function ``name`` whose arguments
    are ``items`` (token lists into ``text``); ``rewrite`` turns an argument's
    Flink SQL into Spark's. None leaves the call as written."""
    if name == "JSON_OBJECT":
        return _json_object(text, items, rewrite)
    if name == "JSON_ARRAY":
        return _json_array(text, items, rewrite)
    if name in ("JSON_ARRAYAGG", "JSON_OBJECTAGG"):
        return _aggregate(name, items, text, rewrite)
    args = [rewrite(_text(text, item)) for item in items]
    if name == "JSON_STRING" and len(items) == 1:
        return _json_string(args[0])
    if name == "JSON_QUOTE" and len(items) == 1:
        return f"to_json(CAST(CAST({args[0]} AS STRING) AS VARIANT))"
    if name == "JSON_UNQUOTE" and len(items) == 1:
        value = args[0]
        unquoted = f"coalesce(CAST(try_parse_json({value}) AS STRING), {value})"
        return f"CASE WHEN ({value}) LIKE '\"%\"' THEN {unquoted} ELSE ({value}) END"
    if len(items) != 2 or name not in ("JSON_EXISTS", "JSON_VALUE", "JSON_QUERY"):
        return None
    json, path_item = args[0], items[1]
    # The path, and the clauses after it in the same item.
    split = next(
        (k for k in range(1, len(path_item)) if word_at(path_item, k) in _CLAUSES),
        len(path_item),
    )
    path, clauses = _path(text, path_item[:split]), path_item[split:]
    if name == "JSON_EXISTS":
        on_error = "FALSE"
        if clauses:
            if [word_at(clauses, k) for k in (1, 2)] != ["ON", "ERROR"] or len(clauses) != 3:
                return None
            on_error = word_at(clauses, 0)
            if on_error not in ("TRUE", "FALSE", "UNKNOWN", "ERROR"):
                return None
        return _json_exists(json, path, on_error)
    if name == "JSON_QUERY":
        first = path_item[0]
        strict = split == 1 and first.kind is TokenKind.STRING
        strict = strict and bool(re.match(r"\s*strict\s", unquote(first), re.IGNORECASE))
        return _json_query(json, path, strict, clauses)
    if not clauses:
        return f"get_json_object({json}, {path})"
    return _json_value(json, path, clauses, text, rewrite)
