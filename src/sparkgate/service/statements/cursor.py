"""The cursor the gateway's statement parser walks a statement's tokens with.

The forms of :mod:`~sparkgate.service.statements.parser` and its per-area
modules read a statement through one :class:`Cursor` over the tokens of
:mod:`sparkgate.sql.lexer`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from sparkgate.api.errors import SqlParseError
from sparkgate.sql.lexer import Token, TokenKind, position, unquote

__all__ = ["Cursor"]


class Cursor:
    """Walks the significant tokens of one statement (comments and blanks are gone)."""

    def __init__(self, source: str, tokens: list[Token]) -> None:
        self.source = source
        self.tokens = tokens
        self.i = 0

    def peek(self, ahead: int = 0) -> Token | None:
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else None

    def word(self, ahead: int = 0) -> str | None:
        tok = self.peek(ahead)
        return tok.upper if tok is not None and tok.kind is TokenKind.WORD else None

    def at_end(self) -> bool:
        return self.i >= len(self.tokens)

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def accept(self, *words: str) -> bool:
        """Consume ``words`` if the next tokens are exactly these keywords."""
        if all(self.word(k) == w for k, w in enumerate(words)):
            self.i += len(words)
            return True
        return False

    def error(self, message: str, tok: Token | None = None) -> SqlParseError:
        if tok is None:
            tok = self.peek()
        where = (
            f"at {position(self.source, tok.start)}" if tok is not None else "at end of statement"
        )
        return SqlParseError(f"{message} {where}")

    def expect(self, kind: TokenKind, what: str) -> Token:
        tok = self.peek()
        if tok is None or tok.kind is not kind:
            raise self.error(f"expected {what}")
        self.i += 1
        return tok

    def expect_end(self, statement: str) -> None:
        if not self.at_end():
            raise self.error(f"unexpected input in {statement}")

    def rest(self) -> str:
        """Source text from the next token to the end of the statement."""
        if self.at_end():
            return ""
        return self.source[self.tokens[self.i].start : self.tokens[-1].end]

    def identifier(self) -> str:
        tok = self.peek()
        if tok is None or tok.kind not in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER):
            raise self.error("expected an identifier")
        self.i += 1
        return unquote(tok)

    def multipart_identifier(self) -> tuple[str, ...]:
        parts = [self.identifier()]
        while (tok := self.peek()) is not None and tok.kind is TokenKind.DOT:
            self.i += 1
            parts.append(self.identifier())
        return tuple(parts)

    def optional_name(self) -> tuple[str, ...] | None:
        """A (multi-part) name at the cursor, or None (nothing taken) when none is there."""
        tok = self.peek()
        if tok is None or tok.kind not in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER):
            return None
        return self.multipart_identifier()

    def optional_string(self) -> str | None:
        """The unquoted string literal at the cursor, or None (nothing taken)."""
        tok = self.peek()
        if tok is None or tok.kind is not TokenKind.STRING:
            return None
        self.i += 1
        return unquote(tok)

    def option_key(self) -> str:
        tok = self.peek()
        if tok is not None and tok.kind is TokenKind.STRING:
            self.i += 1
            return unquote(tok)
        return ".".join(self.multipart_identifier())

    def option_value(self) -> str:
        tok = self.peek()
        if tok is None or tok.kind not in (
            TokenKind.STRING,
            TokenKind.NUMBER,
            TokenKind.WORD,
        ):
            raise self.error("expected an option value")
        self.i += 1
        return unquote(tok)

    def with_options(self) -> Mapping[str, str]:
        """``WITH ('k' = 'v', ...)`` after the WITH keyword."""
        self.expect(TokenKind.LPAREN, "'('")
        options: dict[str, str] = {}
        if (tok := self.peek()) is not None and tok.kind is TokenKind.RPAREN:
            self.i += 1
            return MappingProxyType(options)
        while True:
            key_token = self.peek()
            key = self.option_key()
            self.expect(TokenKind.EQUALS, "'='")
            if key in options:
                raise self.error(f"duplicate option '{key}'", key_token)
            options[key] = self.option_value()
            sep = self.peek()
            if sep is not None and sep.kind is TokenKind.COMMA:
                self.i += 1
                continue
            self.expect(TokenKind.RPAREN, "',' or ')'")
            return MappingProxyType(options)
