"""A small quote- and comment-aware SQL tokenizer.

It knows just enough of Spark's lexical rules to find statement boundaries
and the gateway's own statements; Spark's parser stays the authority for
everything else. It never fails: an unterminated quote or comment becomes a
token with ``terminated=False`` that runs to the end of the text, so callers
decide how to report it (see :func:`ensure_terminated`).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sparkgate.api.errors import SqlParseError
from sparkgate.sql.deadline import CHECK_EVERY, check_deadline

__all__ = [
    "Token",
    "TokenKind",
    "balanced",
    "dotted_name",
    "ensure_terminated",
    "group_items",
    "line_column",
    "position",
    "statement_tokens",
    "tokenize",
    "unquote",
    "word_at",
]


class TokenKind(enum.Enum):
    WORD = "word"
    NUMBER = "number"
    STRING = "string"
    QUOTED_IDENTIFIER = "quoted identifier"
    LINE_COMMENT = "line comment"
    BLOCK_COMMENT = "block comment"
    SEMICOLON = ";"
    EQUALS = "="
    LPAREN = "("
    RPAREN = ")"
    COMMA = ","
    DOT = "."
    OPERATOR = "operator"


@dataclass(frozen=True, slots=True)
class Token:
    """One token; ``start``/``end`` are offsets into the tokenized text."""

    kind: TokenKind
    text: str
    start: int
    end: int
    terminated: bool = True

    @property
    def is_comment(self) -> bool:
        return self.kind in (TokenKind.LINE_COMMENT, TokenKind.BLOCK_COMMENT)

    @property
    def upper(self) -> str:
        return self.text.upper()


_SINGLE_PUNCTUATION = {
    ";": TokenKind.SEMICOLON,
    "=": TokenKind.EQUALS,
    "(": TokenKind.LPAREN,
    ")": TokenKind.RPAREN,
    ",": TokenKind.COMMA,
    ".": TokenKind.DOT,
}
# Longest first, so that e.g. `<=>` is never read as `<=` and `>`; these must
# not be read as EQUALS, which the gateway's SET and WITH (...) rely on.
_OPERATORS = ("<=>", "<>", "!=", "<=", ">=", "==", "=>", "||", "->", "::", "|>")
_OPERATOR_STARTS = frozenset(op[0] for op in _OPERATORS)
_NUMBER = re.compile(r"\d+(?:\.\d*)?(?:[eE][+-]?\d+)?")
# Spark's typed-literal suffixes (10L, 1.5BD, 2Y ...); longer runs are words.
_NUMBER_SUFFIX = re.compile(r"[A-Za-z]{0,2}")
_WHITESPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
_QUOTE_KIND = {
    "'": TokenKind.STRING,
    '"': TokenKind.STRING,
    "`": TokenKind.QUOTED_IDENTIFIER,
}


def _scan_quoted(text: str, pos: int, quote: str, *, escapes: bool) -> tuple[int, bool]:
    """Return (end, terminated) of the quoted token opening at ``pos``."""
    n = len(text)
    i = pos + 1
    while i < n:
        ch = text[i]
        if escapes and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if i + 1 < n and text[i + 1] == quote:
                i += 2
                continue
            return i + 1, True
        i += 1
    return n, False


def _scan_block_comment(text: str, pos: int) -> tuple[int, bool]:
    """Spark nests block comments, so count `/*` and `*/` pairs."""
    n = len(text)
    depth = 0
    i = pos
    while i < n:
        pair = text[i : i + 2]
        if pair == "/*":
            depth += 1
            i += 2
        elif pair == "*/":
            depth -= 1
            i += 2
            if depth == 0:
                return i, True
        else:
            i += 1
    return n, False


def _scan_line_comment(text: str, pos: int) -> int:
    """End of a `--` comment; like Spark, a backslash before the newline continues it."""
    n = len(text)
    i = pos + 2
    while i < n:
        ch = text[i]
        if ch == "\\" and text[i + 1 : i + 2] == "\n":
            i += 2
            continue
        if ch in "\r\n":
            return i
        i += 1
    return n


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens (comments included, whitespace dropped)."""
    tokens: list[Token] = []
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if ch.isspace():
            space = _WHITESPACE.match(text, i)
            i = space.end() if space is not None else i + 1
            continue
        start = i
        nxt = text[i + 1 : i + 2]
        kind: TokenKind
        terminated = True
        if ch == "-" and nxt == "-":
            kind, i = TokenKind.LINE_COMMENT, _scan_line_comment(text, i)
        elif ch == "/" and nxt == "*":
            kind = TokenKind.BLOCK_COMMENT
            i, terminated = _scan_block_comment(text, i)
        elif ch in _QUOTE_KIND:
            kind = _QUOTE_KIND[ch]
            i, terminated = _scan_quoted(text, i, ch, escapes=ch != "`")
        elif ch in "rR" and nxt in ("'", '"'):
            # Raw string r'...': no escapes, so r'C:\' ends at its quote.
            kind = TokenKind.STRING
            close = text.find(nxt, i + 2)
            terminated = close >= 0
            i = close + 1 if terminated else n
        elif (number := _NUMBER.match(text, i)) is not None:
            i = number.end()
            suffix_end = i
            tail = _WORD.match(text, i)
            if tail is not None:
                i = tail.end()
            suffix = _NUMBER_SUFFIX.fullmatch(text, suffix_end, i)
            # `2023_data` is an identifier in Spark, `10L` a number.
            kind = TokenKind.NUMBER if suffix is not None else TokenKind.WORD
        elif (word := _WORD.match(text, i)) is not None:
            kind, i = TokenKind.WORD, word.end()
        else:
            operator = None
            if ch in _OPERATOR_STARTS:
                operator = next((op for op in _OPERATORS if text.startswith(op, i)), None)
            if operator is not None:
                kind, i = TokenKind.OPERATOR, i + len(operator)
            else:
                kind, i = _SINGLE_PUNCTUATION.get(ch, TokenKind.OPERATOR), i + 1
        tokens.append(Token(kind, text[start:i], start, i, terminated))
        if not len(tokens) % CHECK_EVERY:
            check_deadline()
    return tokens


_SIMPLE_ESCAPES = {
    "0": "\0",
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "Z": "\x1a",
    # Spark keeps the backslash before LIKE wildcards.
    "%": "\\%",
    "_": "\\_",
}
_OCTAL = re.compile(r"[0-3][0-7]{2}")
_UNICODE = re.compile(r"[0-9A-Fa-f]{4}")


def _unescape(body: str, quote: str) -> str:
    """Undo Spark's backslash escapes and a doubled closing quote."""
    out: list[str] = []
    i = 0
    n = len(body)
    while i < n:
        ch = body[i]
        if ch == quote and body[i + 1 : i + 2] == quote:
            out.append(quote)
            i += 2
        elif ch == "\\" and i + 1 < n:
            esc = body[i + 1]
            if esc == "u" and _UNICODE.fullmatch(body, i + 2, i + 6):
                out.append(chr(int(body[i + 2 : i + 6], 16)))
                i += 6
            elif _OCTAL.fullmatch(body, i + 1, i + 4):
                out.append(chr(int(body[i + 1 : i + 4], 8)))
                i += 4
            else:
                # Unknown escapes drop the backslash, as in Spark.
                out.append(_SIMPLE_ESCAPES.get(esc, esc))
                i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def unquote(token: Token) -> str:
    """The value of a string literal or quoted identifier; other tokens as is."""
    text = token.text
    if token.kind is TokenKind.QUOTED_IDENTIFIER:
        body = text[1:-1] if token.terminated else text[1:]
        return body.replace("``", "`")
    if token.kind is not TokenKind.STRING:
        return text
    if text[0] in "rR":
        return text[2:-1] if token.terminated else text[2:]
    body = text[1:-1] if token.terminated else text[1:]
    return _unescape(body, text[0])


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset``; `\\r\\n` counts as one line break."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def position(text: str, offset: int) -> str:
    line, column = line_column(text, offset)
    return f"line {line}, column {column}"


def ensure_terminated(text: str, tokens: Sequence[Token]) -> None:
    """Raise :class:`SqlParseError` for the first unterminated quote or comment."""
    for token in tokens:
        if not token.terminated:
            what = {
                TokenKind.STRING: "string literal",
                TokenKind.QUOTED_IDENTIFIER: "quoted identifier",
                TokenKind.BLOCK_COMMENT: "block comment",
            }.get(token.kind, token.kind.value)
            raise SqlParseError(
                f"unterminated {what} starting at {position(text, token.start)} "
                f"(offset {token.start})"
            )


# Types whose parameters are in angle brackets (Flink's and Spark's spellings).
_PARAMETERISED_TYPES = frozenset({"ARRAY", "MAP", "ROW", "MULTISET", "STRUCT"})


def word_at(tokens: Sequence[Token], i: int) -> str:
    """The upper-cased word at ``i``; empty when there is none (or ``i`` is out of range)."""
    return tokens[i].upper if 0 <= i < len(tokens) and tokens[i].kind is TokenKind.WORD else ""


def balanced(tokens: Sequence[Token]) -> bool:
    """Whether every quote and comment ends and every ``(`` is closed, in order."""
    depth = 0
    for token in tokens:
        if not token.terminated:
            return False
        if token.kind is TokenKind.LPAREN:
            depth += 1
        elif token.kind is TokenKind.RPAREN:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def group_items(tokens: Sequence[Token], start: int) -> tuple[list[list[Token]], int]:
    """The comma-separated items of the parenthesised group opening at ``start``,
    and the index after its closing parenthesis."""
    if start >= len(tokens) or tokens[start].kind is not TokenKind.LPAREN:
        raise SqlParseError("expected '('")
    items: list[list[Token]] = [[]]
    depth = 0
    angles = 0  # the <...> of a type's parameters: MAP<STRING, BIGINT>
    brackets = 0  # the [...] of Flink's ARRAY[a, b] and MAP[k, v]
    for index in range(start + 1, len(tokens)):
        token = tokens[index]
        if token.kind is TokenKind.OPERATOR and token.text in ("[", "]"):
            brackets += 1 if token.text == "[" else -1 if brackets else 0
        elif token.kind is TokenKind.LPAREN:
            depth += 1
        elif token.kind is TokenKind.RPAREN:
            if depth == 0:
                return [item for item in items if item], index + 1
            depth -= 1
        elif token.kind is TokenKind.OPERATOR and token.text == "<" and index > start + 1:
            if tokens[index - 1].upper in _PARAMETERISED_TYPES:
                angles += 1
        elif token.kind is TokenKind.OPERATOR and token.text == ">" and angles:
            angles -= 1
        elif token.kind is TokenKind.COMMA and depth == 0 and not angles and not brackets:
            items.append([])
            continue
        items[-1].append(token)
    raise SqlParseError("unbalanced parentheses")


def statement_tokens(text: str) -> list[Token]:
    """The tokens of one statement that matter: no comments, no closing ``;``."""
    tokens = [t for t in tokenize(text) if not t.is_comment]
    if tokens and tokens[-1].kind is TokenKind.SEMICOLON:
        tokens.pop()
    return tokens


def dotted_name(tokens: Sequence[Token], start: int) -> tuple[tuple[str, ...], int]:
    """The unquoted parts of ``a.b.c`` at ``start`` (none when no name is there),
    and the index after it."""
    parts: list[str] = []
    index = start
    while index < len(tokens) and tokens[index].kind in (
        TokenKind.WORD,
        TokenKind.QUOTED_IDENTIFIER,
    ):
        parts.append(unquote(tokens[index]))
        index += 1
        if index < len(tokens) and tokens[index].kind is TokenKind.DOT:
            index += 1
            continue
        break
    return tuple(parts), index
