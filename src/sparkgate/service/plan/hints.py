"""Flink's ``/*+ STATE_TTL('t' = '1h', ...) */`` query hint (Flink 1.19+).

Spark's parser refuses Flink's ``'key' = 'value'`` hint arguments, so the
gateway reads the hint itself and hands Spark the statement without it. The
keys name tables or their aliases: the TTL is that input's state TTL in the
joins and aggregations reading it directly.
"""

from __future__ import annotations

import re
from datetime import timedelta

from sparkgate.api.config import parse_duration
from sparkgate.api.errors import SqlParseError
from sparkgate.sql.lexer import TokenKind, tokenize, unquote

__all__ = ["state_ttl_hints"]

_HINT = re.compile(r"STATE_TTL\s*\(([^)]*)\)\s*,?", re.IGNORECASE)


def _arguments(body: str) -> dict[str, timedelta]:
    tokens = [t for t in tokenize(body) if not t.is_comment]
    ttls: dict[str, timedelta] = {}
    i = 0
    while i < len(tokens):
        if tokens[i].kind is TokenKind.COMMA:
            i += 1
            continue
        if (
            i + 2 >= len(tokens)
            or tokens[i + 1].kind is not TokenKind.EQUALS
            or tokens[i + 2].kind is not TokenKind.STRING
        ):
            raise SqlParseError(
                "STATE_TTL hint: expected 'table or alias' = 'duration' pairs, "
                f"e.g. /*+ STATE_TTL('o' = '1d') */, in: {body.strip()}"
            )
        name_token = tokens[i]
        name = unquote(name_token) if name_token.kind is not TokenKind.WORD else name_token.text
        try:
            ttl = parse_duration(unquote(tokens[i + 2]))
        except ValueError as exc:
            raise SqlParseError(f"STATE_TTL hint: the TTL of '{name}': {exc}") from None
        if ttl < timedelta(0):
            raise SqlParseError(f"STATE_TTL hint: the TTL of '{name}' must not be negative")
        ttls[name.lower()] = ttl
        i += 3
    return ttls


def state_ttl_hints(text: str) -> tuple[str, dict[str, timedelta]]:
    """``text`` without its STATE_TTL hints (other hints stay), and their TTLs by
    lower-cased table or alias name."""
    ttls: dict[str, timedelta] = {}
    pieces: list[str] = []
    last = 0
    for token in tokenize(text):
        if token.kind is not TokenKind.BLOCK_COMMENT or not token.text.startswith("/*+"):
            continue
        inner = token.text[3:-2]
        matches = list(_HINT.finditer(inner))
        if not matches:
            continue
        for match in matches:
            ttls.update(_arguments(match.group(1)))
        rest = _HINT.sub("", inner).strip().strip(",").strip()
        pieces.append(text[last : token.start])
        pieces.append(f"/*+ {rest} */" if rest else " ")
        last = token.end
    if not pieces:
        return text, {}
    pieces.append(text[last:])
    return "".join(pieces), ttls
