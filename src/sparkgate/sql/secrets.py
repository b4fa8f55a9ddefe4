"""Secret option values: which keys hold one, and hiding them in options, in
statement text and in any text the gateway writes or returns (Flink's
sensitive keys and Spark's redaction pattern, shown as ``******``).

:func:`mask_secrets` is the one masking function for free text (log records,
operation logs, error messages). It hides

1. the value of every ``key = value`` pair whose key is secret (SET, a WITH or
   OPTIONS list, ``key=value`` in a JDBC URL or a Java map, ``"key": "value"``),
2. every value the gateway has seen under a secret key (configuration, session
   properties, statements), wherever it appears: Spark's messages may echo a
   value without its key (``The value 'AKIA...' cannot be cast``),
3. the password of a URL's ``user:password@`` part.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping

from sparkgate.api.errors import ConfigurationError
from sparkgate.sql.lexer import TokenKind, tokenize, unquote

__all__ = [
    "HIDDEN",
    "REDACTION_REGEX_KEY",
    "SENSITIVE_KEYS",
    "SHOWN_HIDDEN",
    "SPARK_REDACTION_REGEX",
    "configure_redaction",
    "forget_secret_values",
    "is_sensitive",
    "mask_secrets",
    "masked_options",
    "masked_statement",
    "remember_secret",
    "remember_secrets",
]

# Flink's GlobalConfiguration.SENSITIVE_KEYS: a key containing one is secret.
SENSITIVE_KEYS = (
    "password",
    "secret",
    "fs.azure.account.key",
    "apikey",
    "api-key",
    "auth-params",
    "service-key",
    "token",
    "basic-auth",
    "jaas.config",
    "http-headers",
)
HIDDEN = "******"
#: What Flink's SHOW CREATE TABLE / CATALOG print for a secret option's value.
SHOWN_HIDDEN = "****"
# Spark's option naming its secret keys (a key it matches, searched as Java's
# find() does, is secret), and its default (Spark 4.3's SECRET_REDACTION_PATTERN).
REDACTION_REGEX_KEY = "spark.redaction.regex"
SPARK_REDACTION_REGEX = r"(?i)secret|password|token|access[.]?key|credential"
# A text without any of these words (lower-cased) holds no key that Flink's words or
# Spark's default pattern make secret: the cheap test that lets most log records
# through untouched (faster than a regex).
_HINTS = (*SENSITIVE_KEYS, "access.key", "accesskey", "credential")
# What may make a configured pattern match a key but not the same key within a
# longer text (anchors, word boundaries, look-arounds): such a pattern has no cheap
# test, every text is scanned for pairs.
_CONTEXT_SENSITIVE = re.compile(r"[\^$]|\\[AZzGbB]|\(\?<?[=!]")


class _Redaction:
    """Spark's side of what is secret: the ``spark.redaction.regex`` in force."""

    def __init__(self, regex: str) -> None:
        try:
            self.pattern = re.compile(regex)
        except re.error as exc:
            raise ConfigurationError(
                f"{REDACTION_REGEX_KEY} is not a regular expression: {regex!r} ({exc})"
            ) from exc
        self.regex = regex
        self.default = regex == SPARK_REDACTION_REGEX
        # Whether a text holding a key the pattern matches is itself matched.
        self.in_text = not _CONTEXT_SENSITIVE.search(regex)


_redaction = _Redaction(SPARK_REDACTION_REGEX)

# One key or value: a SQL string ('' or \ escapes), a JSON/Java string, a
# back-quoted name; a bare key is a dotted name; a bare value runs to a delimiter.
_SINGLE = r"'(?:[^'\\]|\\.|'')*'"
_DOUBLE = r'"(?:[^"\\]|\\.)*"'
_BACKTICK = r"`[^`]*`"
_BARE_KEY = r"(?<![\w.\-])[A-Za-z_][\w.\-]*"
_BARE_VALUE = r"[^\s,;&)}\]'\"]+"
# key = value, key: value, key -> value (a Scala map); key 'value' (Spark's
# OPTIONS lists allow the '=' to be left out) only with a quoted value.
_PAIR = re.compile(
    rf"(?P<key>{_SINGLE}|{_DOUBLE}|{_BACKTICK}|{_BARE_KEY})"
    rf"(?:\s*(?:=|:|->)\s*(?P<value>{_SINGLE}|{_DOUBLE}|{_BARE_VALUE})"
    rf"|\s+(?P<spaced>{_SINGLE}|{_DOUBLE}))"
)
# scheme://user:password@host
_USERINFO = re.compile(r"(?<=://)(?P<user>[^\s:/@'\"]+):(?P<value>[^\s/@'\"]+)@")

# Values remembered for masking by value. Short or common values are not: masking
# every "true" or "1234" would garble logs, and the pair rule still hides them.
_MIN_VALUE_LENGTH = 6
_PLAIN_VALUE = re.compile(r"(?i)(?:true|false|null|none|[-+]?[\d.]+\s*[a-z]{0,3})")
# Bounded, so a long-running gateway with many sessions does not grow: the oldest
# (least recently seen) go first; values given at start are pinned.
_MAX_VALUES = 64
_values_lock = threading.Lock()
_recent: OrderedDict[str, None] = OrderedDict()
_pinned: set[str] = set()
# What the hot path reads, without the lock: longest first, so that a value
# containing another is hidden whole.
_values: tuple[str, ...] = ()


def configure_redaction(config: Mapping[str, str]) -> None:
    """Make ``config``'s ``spark.redaction.regex`` (Spark's default when it has
    none) decide, with Flink's sensitive keys, which keys are secret: as Spark's
    UI and logs decide with the same configuration. The gateway's configuration,
    before its values are remembered (:func:`remember_secrets`).

    Raises:
        ConfigurationError: the value is not a regular expression (Python's
            ``re``; Spark's Java patterns are the same for the usual words,
            alternatives, classes and ``(?i)``).
    """
    global _redaction
    regex = config.get(REDACTION_REGEX_KEY) or SPARK_REDACTION_REGEX
    if regex != _redaction.regex:
        _redaction = _Redaction(regex)
        is_sensitive.cache_clear()


@functools.lru_cache(maxsize=4096)
def is_sensitive(key: str) -> bool:
    """Whether the value of option ``key`` must never be shown (Flink's sensitive keys
    and Spark's ``spark.redaction.regex``, e.g. ``spark.hadoop.fs.s3a.secret.key``
    by its default; see :func:`configure_redaction`)."""
    lowered = key.lower()
    return any(word in lowered for word in SENSITIVE_KEYS) or bool(_redaction.pattern.search(key))


def remember_secret(value: str, *, pinned: bool = False) -> None:
    """Mask ``value`` wherever :func:`mask_secrets` finds it from now on.

    ``pinned`` values (the gateway's configuration) stay for the process's life;
    others are the 64 most recent. Short and plain values (``true``,
    numbers) are ignored: the ``key = value`` rule still hides them.
    """
    global _values
    value = value.strip()
    if not _worth_remembering(value):
        return
    with _values_lock:
        if value in _pinned:
            return
        if pinned:
            _pinned.add(value)
            _recent.pop(value, None)
        elif value in _recent:
            _recent.move_to_end(value)
            return
        else:
            _recent[value] = None
            while len(_recent) > _MAX_VALUES:
                _recent.popitem(last=False)
        _values = tuple(sorted({*_pinned, *_recent}, key=len, reverse=True))


def _worth_remembering(value: str) -> bool:
    return len(value) >= _MIN_VALUE_LENGTH and value != HIDDEN and not _PLAIN_VALUE.fullmatch(value)


def remember_secrets(options: Mapping[str, str], *, pinned: bool = False) -> None:
    """Remember the values of the secret keys of ``options`` (see :func:`remember_secret`)."""
    for key, value in options.items():
        if isinstance(value, str) and is_sensitive(key):
            remember_secret(value, pinned=pinned)


def forget_secret_values() -> None:
    """Forget every remembered value (tests; a process that starts over)."""
    global _values
    with _values_lock:
        _recent.clear()
        _pinned.clear()
        _values = ()


def masked_options(options: Mapping[str, str], mask: str = HIDDEN) -> dict[str, str]:
    """``options`` with the values of secret keys replaced by ``mask`` (and those
    values remembered, see :func:`remember_secret`)."""
    shown = {}
    for key, value in options.items():
        if is_sensitive(key):
            remember_secret(value)
            shown[key] = mask
        else:
            shown[key] = value
    return shown


def masked_statement(text: str) -> str:
    """``text`` with the value of every ``'secret key' = 'value'`` pair (a WITH
    clause, SET) replaced by ``'******'``: for logs, job lists and Spark's UI.

    The values hidden are remembered (see :func:`remember_secret`): Spark's
    messages about the statement may echo them without their key.
    """
    if not _names_secret_key(text):
        return text
    tokens = [
        t for t in tokenize(text) if t.kind not in (TokenKind.LINE_COMMENT, TokenKind.BLOCK_COMMENT)
    ]
    pieces: list[str] = []
    last = 0
    for key, equals, value in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if (
            key.kind is TokenKind.STRING
            and equals.kind is TokenKind.EQUALS
            and value.kind is TokenKind.STRING
            and is_sensitive(unquote(key))
        ):
            remember_secret(unquote(value))
            pieces.append(text[last : value.start])
            pieces.append(f"'{HIDDEN}'")
            last = value.end
    pieces.append(text[last:])
    return "".join(pieces)


def mask_secrets(text: str) -> str:
    """``text`` with every secret value in it replaced by :data:`HIDDEN`.

    For free text: log records, operation logs, error messages and their causes
    (see the module's docstring for what is hidden). Costs a few substring
    searches when ``text`` names no secret key and no remembered value is in it.
    """
    found: list[str] = []
    if _names_secret_key(text):
        text = _mask_pairs(text, found)
    if "://" in text and "@" in text:
        text = _USERINFO.sub(lambda match: _hide_userinfo(match, found), text)
    # What the text showed under a secret key is hidden where it shows again without
    # it (a parser's "near 'value'"); not remembered beyond it: free text, unlike
    # options and statements, may pair a secret word with an ordinary one.
    for value in (*sorted(filter(_worth_remembering, found), key=len, reverse=True), *_values):
        if value in text:
            text = text.replace(value, HIDDEN)
    return text


def _names_secret_key(text: str) -> bool:
    """False only if ``text`` holds no secret key (True may be wrong: a hint)."""
    redaction = _redaction
    lowered = text.lower()
    if redaction.default:
        return any(word in lowered for word in _HINTS)
    if any(word in lowered for word in SENSITIVE_KEYS):
        return True
    return not redaction.in_text or redaction.pattern.search(text) is not None


def _mask_pairs(text: str, found: list[str]) -> str:
    pieces: list[str] = []
    last = 0
    position = 0
    while True:
        match = _PAIR.search(text, position)
        if match is None:
            break
        group = "value" if match.group("value") is not None else "spaced"
        start, end = match.span(group)
        if not is_sensitive(_unquoted(match.group("key"))):
            # Not this key's value, but perhaps one inside it (a URL's password=).
            position = start if start > match.start() else match.end()
            continue
        value = text[start:end]
        quoted = value[0] in "'\"" and len(value) > 1
        found.append(_unquoted(value) if quoted else value)
        pieces.append(text[last:start])
        pieces.append(f"{value[0]}{HIDDEN}{value[0]}" if quoted else HIDDEN)
        last = position = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _unquoted(text: str) -> str:
    if len(text) > 1 and text[0] in "'\"`" and text[-1] == text[0]:
        quote = text[0]
        return text[1:-1].replace(quote * 2, quote).replace("\\" + quote, quote)
    return text


def _hide_userinfo(match: re.Match[str], found: list[str]) -> str:
    found.append(match.group("value"))
    return f"{match.group('user')}:{HIDDEN}@"
