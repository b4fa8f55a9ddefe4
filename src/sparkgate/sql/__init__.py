"""Neutral SQL text tools: a quote- and comment-aware tokenizer and the script splitter.

Pure Python on the standard library and ``sparkgate.api`` only, so that the
service (statement dispatch, completion) and the SQL client (multi-line
input, script files) share one idea of where a statement ends.
"""

from __future__ import annotations

from sparkgate.sql.lexer import Token, TokenKind, ensure_terminated, tokenize, unquote
from sparkgate.sql.splitter import (
    group_statements,
    is_complete,
    split_statements,
    strip_trailing_semicolon,
)

__all__ = [
    "Token",
    "TokenKind",
    "ensure_terminated",
    "group_statements",
    "is_complete",
    "split_statements",
    "strip_trailing_semicolon",
    "tokenize",
    "unquote",
]
