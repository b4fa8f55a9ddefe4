"""Split SQL scripts into statements at top-level semicolons.

A semicolon ends a statement unless it sits inside a quote, a comment or a
block whose body holds statements: Flink's ``EXECUTE STATEMENT SET BEGIN ...
END`` and Spark SQL scripting's ``BEGIN ... END`` compounds with their nested
``IF/WHILE/LOOP/REPEAT/FOR/CASE ... END <keyword>`` statements. Flink's
``BEGIN STATEMENT SET;`` and its closing ``END;`` are statements of their own.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Sequence

from sparkgate.sql.deadline import CHECK_EVERY, check_deadline
from sparkgate.sql.lexer import (
    Token,
    TokenKind,
    ensure_terminated,
    tokenize,
)

__all__ = [
    "group_statements",
    "is_complete",
    "split_statements",
    "statement_text",
    "strip_trailing_semicolon",
]

_BEGIN = "BEGIN"
_CASE_STATEMENT = "CASE statement"
_CASE_EXPRESSION = "CASE expression"
# Scripting statements that open a body only where a statement may start.
_SCRIPT_OPENERS = frozenset({"IF", "WHILE", "LOOP", "REPEAT", "FOR"})
# Keywords after which the body of a LOOP/REPEAT begins straight away.
_BODY_OPENERS = frozenset({"LOOP", "REPEAT"})


def _keyword(sig: Sequence[Token], i: int, start: int) -> str | None:
    """The upper-cased word at ``i`` unless it is part of a qualified name."""
    tok = sig[i]
    if tok.kind is not TokenKind.WORD:
        return None
    if i > start and sig[i - 1].kind is TokenKind.DOT:
        return None
    if i + 1 < len(sig) and sig[i + 1].kind is TokenKind.DOT:
        return None
    return tok.upper


class _Blocks:
    """The open blocks, innermost last, with a count per kind: asking whether a
    kind is open is O(1). (Scanning the stack for it on every word made a
    statement of 40,000 CASE keywords take a minute to split.)"""

    def __init__(self) -> None:
        self._stack: list[str] = []
        self._open: Counter[str] = Counter()

    def __bool__(self) -> bool:
        return bool(self._stack)

    def __contains__(self, kind: object) -> bool:
        return self._open[kind] > 0 if isinstance(kind, str) else False

    @property
    def innermost(self) -> str | None:
        return self._stack[-1] if self._stack else None

    def push(self, kind: str) -> None:
        self._stack.append(kind)
        self._open[kind] += 1

    def pop(self) -> str:
        kind = self._stack.pop()
        self._open[kind] -= 1
        return kind

    def pop_through(self, targets: frozenset[str]) -> bool:
        """Pop up to and including the innermost entry in ``targets``, if any."""
        if not any(kind in self for kind in targets):
            return False
        while self.pop() not in targets:
            pass
        return True


_BARE_END_TARGETS = frozenset({_BEGIN, _CASE_STATEMENT, _CASE_EXPRESSION})
_CASE_TARGETS = frozenset({_CASE_STATEMENT, _CASE_EXPRESSION})


def _scan(sig: Sequence[Token]) -> tuple[list[tuple[int, int]], bool]:
    """Statement ranges ``[start, end)`` over significant tokens.

    Also returns whether the tokens end with a semicolon that closed a
    statement (nothing left open).
    """
    ranges: list[tuple[int, int]] = []
    stack = _Blocks()
    start = 0
    at_statement = True  # may the token at i start a (scripting) statement?
    label_candidate = False  # the previous token was a word starting a statement
    i = 0
    n = len(sig)
    ended = False
    while i < n:
        if not i % CHECK_EVERY:
            check_deadline()
        tok = sig[i]
        here, at_statement = at_statement, False
        after_label_word, label_candidate = label_candidate, False
        ended = False
        if tok.kind is TokenKind.SEMICOLON:
            # A CASE expression never spans a semicolon; an unclosed one is a
            # syntax error for Spark to report, not a reason to swallow the script.
            while stack.innermost == _CASE_EXPRESSION:
                stack.pop()
            if not stack:
                if i > start:
                    ranges.append((start, i))
                start = i + 1
                ended = True
            at_statement = True
            i += 1
            continue
        if tok.kind is TokenKind.OPERATOR and tok.text == ":":
            # `label: BEGIN`, `label: WHILE ...`
            at_statement = after_label_word
            i += 1
            continue
        label_candidate = here and tok.kind is TokenKind.WORD
        word = _keyword(sig, i, start)
        if word is None:
            i += 1
            continue
        in_block = _BEGIN in stack
        following = _keyword(sig, i + 1, start) if i + 1 < n else None
        if word == _BEGIN:
            after_statement_set = (
                i - start >= 2 and sig[i - 2].upper == "STATEMENT" and sig[i - 1].upper == "SET"
            )
            standalone = (
                following == "STATEMENT" or i + 1 >= n or (sig[i + 1].kind is TokenKind.SEMICOLON)
            )
            if in_block or after_statement_set or (here and not standalone):
                stack.push(_BEGIN)
                at_statement = True
        elif word in _SCRIPT_OPENERS:
            if in_block and here:
                stack.push(word)
                at_statement = word in _BODY_OPENERS
        elif word == "CASE":
            stack.push(_CASE_STATEMENT if in_block and here else _CASE_EXPRESSION)
        elif word in ("THEN", "ELSE"):
            at_statement = stack.innermost in ("IF", _CASE_STATEMENT)
        elif word == "DO":
            at_statement = stack.innermost in ("WHILE", "FOR")
        elif word == "END":
            if following in _SCRIPT_OPENERS and following in stack:
                stack.pop_through(frozenset({following}))
                i += 1
            elif following == "CASE" and (_CASE_STATEMENT in stack or _CASE_EXPRESSION in stack):
                stack.pop_through(_CASE_TARGETS)
                i += 1
            else:
                # A bare END at top level is Flink's statement-set END.
                stack.pop_through(_BARE_END_TARGETS)
        i += 1
    if start < n:
        ranges.append((start, n))
    return ranges, ended and not stack


def _significant(tokens: Sequence[Token]) -> list[Token]:
    return [t for t in tokens if not t.is_comment]


def group_statements(tokens: Sequence[Token]) -> list[list[Token]]:
    """Significant tokens of each statement, without the separating semicolons."""
    sig = _significant(tokens)
    ranges, _ = _scan(sig)
    return [sig[a:b] for a, b in ranges]


def _start(token: Token) -> int:
    return token.start


def statement_text(text: str, tokens: Sequence[Token], group: Sequence[Token]) -> str:
    """The text of one of :func:`group_statements`' groups of ``tokens`` (of
    ``text``), with a hint comment that ends it (Flink's ``t /*+ OPTIONS(...) */``
    at the end of a query), which belongs to the statement."""
    end = group[-1].end
    # The tokens after the group's last, found by its offset (not a scan from the start).
    for token in tokens[bisect.bisect_left(tokens, end, key=_start) :]:
        if token.start < end:
            continue
        if not (token.is_comment and token.text.startswith("/*+")):
            break
        end = token.end
    return text[group[0].start : end]


def split_statements(script: str) -> list[str]:
    """Statements of ``script``: trimmed, without ``;``, comment-only pieces dropped.

    Comments inside a statement are kept; comments before its first or after
    its last token are not. Raises ``SqlParseError`` for an unterminated
    quote or block comment.
    """
    tokens = tokenize(script)
    ensure_terminated(script, tokens)
    return [statement_text(script, tokens, group) for group in group_statements(tokens)]


def is_complete(text: str) -> bool:
    """Whether ``text`` ends with a top-level ``;`` and leaves nothing open.

    Trailing whitespace and comments are ignored; the REPL keeps reading
    lines until this is true.
    """
    tokens = tokenize(text)
    if any(not t.terminated for t in tokens):
        return False
    _, ended = _scan(_significant(tokens))
    return ended


def strip_trailing_semicolon(statement: str) -> str:
    """``statement`` trimmed, without trailing semicolons and what follows them."""
    tokens = tokenize(statement)
    sig = _significant(tokens)
    end = len(sig)
    while end and sig[end - 1].kind is TokenKind.SEMICOLON and sig[end - 1].terminated:
        end -= 1
    if end == len(sig):
        return statement.strip()
    if end == 0:
        return ""
    return statement[: sig[end - 1].end].strip()
