"""Flink's type declarations read as text: a nested type's parts, a ROW field, a
trailing ``NOT NULL``. Connector DDL spells them again in Spark's terms; result
schemas read a column's declared precision and length from them."""

from __future__ import annotations

import re

__all__ = ["nested_type", "nullability", "row_field"]

# A nested type: ARRAY<...>, MAP<...>, ROW<...> or ROW(...).
_NESTED = re.compile(r"^(ARRAY|MAP|ROW)\s*(?:<(.*)>|\((.*)\))$", re.IGNORECASE | re.DOTALL)
# A type's trailing nullability: NOT NULL, or NULL (Flink's default, said aloud).
_NULLABILITY = re.compile(r"^(.+?)\s+(NOT\s+NULL|NULL)$", re.IGNORECASE | re.DOTALL)
# A ROW field: its name (plain or in backticks), its type, an optional 'description'.
_ROW_FIELD = re.compile(r"^(`(?:[^`]|``)*`|[^\s`]+)\s+(.+?)(?:\s+'(?:[^']|'')*')?$", re.DOTALL)


def _top_level(text: str) -> list[str]:
    """``text`` split at the commas outside brackets and parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return [*parts, text[start:].strip()]


def nullability(flink_type: str) -> tuple[str, bool]:
    """``flink_type`` on one line without its trailing ``NOT NULL`` (or ``NULL``),
    and whether it said ``NOT NULL``."""
    text = " ".join(flink_type.split())
    match = _NULLABILITY.match(text)
    if match is None:
        return text, False
    return match[1], match[2].upper() != "NULL"


def nested_type(flink_type: str) -> tuple[str, list[str]] | None:
    """A nested type's kind (``ARRAY``, ``MAP`` or ``ROW``) and its parts: the
    element type, the key and value types, or the fields' declarations (each as
    :func:`row_field` reads it); None for any other type. A trailing ``NOT NULL``
    is the caller's (:func:`nullability`)."""
    match = _NESTED.match(" ".join(flink_type.split()))
    if match is None:
        return None
    kind, angled, parenthesised = match[1].upper(), match[2], match[3]
    if parenthesised is not None and kind != "ROW":  # ARRAY(...) is no type
        return None
    inner = angled if angled is not None else parenthesised
    return kind, [] if not inner.strip() else _top_level(inner)


def row_field(declaration: str) -> tuple[str, str]:
    """A ROW field's ``name type [NOT NULL] ['description']`` as its name (a
    backtick-quoted one unquoted) and its type with its nullability."""
    match = _ROW_FIELD.match(declaration.strip())
    if match is None:
        name, _, kind = declaration.strip().partition(" ")
        return name, kind
    name = match[1]
    if name.startswith("`"):
        name = name[1:-1].replace("``", "`")
    return name, match[2]
