"""Flink's dynamic table options: ``t /*+ OPTIONS('k' = 'v', ...) */``.

The hint after a table's name, where the table is read or an INSERT's target,
overrides the table's options for that statement only. Spark's parser refuses
such a hint after a name, so the gateway reads the hints itself and hands Spark
the text with them blanked out, at the same offsets: what Spark says of where a
name ends is where its hint would start.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from sparkgate.api.errors import SqlParseError
from sparkgate.sql.lexer import TokenKind, group_items, tokenize, unquote
from sparkgate.sql.quoting import quote_properties

__all__ = ["Hint", "Hints", "hint_after", "hint_text", "options_hint", "without_hints"]

_HINT = re.compile(r"/\*\+\s*OPTIONS\s*\(", re.IGNORECASE)


@dataclass(frozen=True)
class Hint:
    """One OPTIONS hint: its options, and where its comment ends in the text."""

    options: Mapping[str, str]
    end: int


#: The hints of a text by where each starts.
Hints = Mapping[int, Hint]


def without_hints(text: str) -> tuple[str, Hints]:
    """``text`` with each OPTIONS hint blanked out (spaces, so every offset stays),
    and the hints by where they start. A malformed hint is a :class:`SqlParseError`."""
    if "/*+" not in text:
        return text, {}
    hints: dict[int, Hint] = {}
    for token in tokenize(text):
        if token.kind is TokenKind.BLOCK_COMMENT and _HINT.match(token.text):
            hints[token.start] = Hint(options_hint(token.text), token.end)
    for start, hint in hints.items():
        text = text[:start] + " " * (hint.end - start) + text[hint.end :]
    return text, hints


def hint_after(text: str, at: int, hints: Hints) -> Hint:
    """The hint right after a table's name ending at ``at``; without one, no
    options and ``at``."""
    if not hints:
        return Hint({}, at)
    start = len(text[at:]) - len(text[at:].lstrip()) + at
    return hints.get(start, Hint({}, at))


def options_hint(comment: str) -> dict[str, str]:
    """The options of a hint comment ``/*+ OPTIONS('k' = 'v', ...) */``."""
    body = comment[3:-2]
    tokens = tokenize(body)
    if len(tokens) < 2 or tokens[0].upper != "OPTIONS":
        raise SqlParseError("An OPTIONS hint is /*+ OPTIONS('key' = 'value', ...) */")
    items, after = group_items(tokens, 1)
    options: dict[str, str] = {}
    for item in items:
        kinds = [t.kind for t in item]
        if kinds != [TokenKind.STRING, TokenKind.EQUALS, TokenKind.STRING] or after != len(tokens):
            raise SqlParseError(
                "An OPTIONS hint takes 'key' = 'value' pairs: /*+ " + body.strip()[:200] + " */"
            )
        options[unquote(item[0])] = unquote(item[2])
    return options


def hint_text(options: Mapping[str, str]) -> str:
    """`` /*+ OPTIONS('k' = 'v', ...) */`` for a table's name to be followed by.
    Text that would end the comment early is refused: the hint stays a hint."""
    if any("*/" in k or "*/" in v for k, v in options.items()):
        raise SqlParseError("An OPTIONS hint's keys and values cannot hold '*/'")
    return f" /*+ OPTIONS({quote_properties(options)}) */"
