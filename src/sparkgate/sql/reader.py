"""A cursor over one statement's tokens, for the gateway's hand-written statement readers.

The gateway's own statements (Flink's connector DDL and the types and watermark
expressions inside it) are read with this one reader on the shared lexer, so
they agree with each other on quoting, comments and nesting; Spark SQL itself
is Spark's parser's business.
"""

from __future__ import annotations

from collections.abc import Sequence

from sparkgate.api.errors import SqlParseError
from sparkgate.sql.lexer import Token, TokenKind, group_items, statement_tokens, unquote

__all__ = ["TokenReader"]

_NAME_KINDS = (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER)


class TokenReader:
    """Reads ``text``'s significant tokens (no comments, no closing ``;``) in order.

    ``what`` names the statement in errors (``expected an identifier in CREATE TABLE``).
    """

    def __init__(self, text: str, what: str = "the statement") -> None:
        self.text = text
        self.what = what
        self.tokens = statement_tokens(text)
        self.i = 0

    @property
    def at_end(self) -> bool:
        return self.i >= len(self.tokens)

    def peek(self, ahead: int = 0) -> Token | None:
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else None

    def word(self, ahead: int = 0) -> str | None:
        """The upper-cased word ``ahead`` tokens on, or None when that is no word."""
        tok = self.peek(ahead)
        return tok.upper if tok is not None and tok.kind is TokenKind.WORD else None

    def kind(self, ahead: int = 0) -> TokenKind | None:
        tok = self.peek(ahead)
        return tok.kind if tok is not None else None

    def accept(self, *words: str) -> bool:
        """Step over ``words`` when they come next (case-insensitively)."""
        if all(self.word(k) == w for k, w in enumerate(words)):
            self.i += len(words)
            return True
        return False

    def take(self, *kinds: TokenKind) -> Token | None:
        """The next token when it is of one of ``kinds`` (stepping over it), else None."""
        tok = self.peek()
        if tok is None or tok.kind not in kinds:
            return None
        self.i += 1
        return tok

    def name(self) -> tuple[str, ...]:
        """A dotted, optionally quoted name: ``a.`b c`.d``."""
        parts = [self.identifier()]
        while self.kind() is TokenKind.DOT:
            self.i += 1
            parts.append(self.identifier())
        return tuple(parts)

    def identifier(self) -> str:
        tok = self.take(*_NAME_KINDS)
        if tok is None:
            raise SqlParseError(f"expected an identifier in {self.what}")
        return unquote(tok)

    def group(self) -> list[list[Token]]:
        """The comma-separated items of the parenthesised group at the cursor."""
        try:
            items, self.i = group_items(self.tokens, self.i)
        except SqlParseError as exc:
            raise SqlParseError(f"{exc} in {self.what}") from None
        return items

    def source(self, tokens: Sequence[Token]) -> str:
        """The text ``tokens`` (a run of this statement's tokens) were read from."""
        return self.text[tokens[0].start : tokens[-1].end]
