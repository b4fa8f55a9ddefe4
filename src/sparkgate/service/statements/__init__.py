"""The statement pipeline: parse once into a typed statement (``kinds``), then
its handler from the registry (``handlers``); see docs/statements.md."""

from __future__ import annotations

from sparkgate.service.statements.kinds import Statement
from sparkgate.service.statements.parser import QUERY_KEYWORDS, parse_statement
from sparkgate.sql.lexer import Token, TokenKind, tokenize, unquote
from sparkgate.sql.splitter import (
    is_complete,
    split_statements,
    strip_trailing_semicolon,
)

__all__ = [
    "QUERY_KEYWORDS",
    "Statement",
    "Token",
    "TokenKind",
    "is_complete",
    "parse_statement",
    "split_statements",
    "strip_trailing_semicolon",
    "tokenize",
    "unquote",
]
