"""Gateway-level SQL statements: tokenizer, script splitter and classifier."""

from __future__ import annotations

from sparkgate.service.statements.parser import (
    ParsedStatement,
    StatementKind,
    parse_statement,
)
from sparkgate.sql.lexer import Token, TokenKind, tokenize, unquote
from sparkgate.sql.splitter import (
    is_complete,
    split_statements,
    strip_trailing_semicolon,
)

__all__ = [
    "ParsedStatement",
    "StatementKind",
    "Token",
    "TokenKind",
    "is_complete",
    "parse_statement",
    "split_statements",
    "strip_trailing_semicolon",
    "tokenize",
    "unquote",
]
