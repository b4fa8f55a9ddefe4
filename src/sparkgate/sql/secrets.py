"""Secret option values: which keys hold one, and hiding them in options and in
statement text (Flink's sensitive keys, shown as ``******``)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from sparkgate.sql.lexer import TokenKind, tokenize, unquote

__all__ = ["HIDDEN", "SENSITIVE_KEYS", "is_sensitive", "masked_options", "masked_statement"]

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
# Spark's default spark.redaction.regex, which its UI and logs mask by.
_SPARK_REDACTION = re.compile(r"(?i)secret|password|token|access[.]?key")


def is_sensitive(key: str) -> bool:
    """Whether the value of option ``key`` must never be shown (Flink's sensitive keys
    and Spark's redaction pattern, e.g. ``spark.hadoop.fs.s3a.secret.key``)."""
    lowered = key.lower()
    return any(word in lowered for word in SENSITIVE_KEYS) or bool(_SPARK_REDACTION.search(key))


def masked_options(options: Mapping[str, str]) -> dict[str, str]:
    """``options`` with the values of secret keys replaced by :data:`HIDDEN`."""
    return {key: HIDDEN if is_sensitive(key) else value for key, value in options.items()}


def masked_statement(text: str) -> str:
    """``text`` with the value of every ``'secret key' = 'value'`` pair (a WITH
    clause, SET) replaced by ``'******'``: for logs, job lists and Spark's UI."""
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
            pieces.append(text[last : value.start])
            pieces.append(f"'{HIDDEN}'")
            last = value.end
    pieces.append(text[last:])
    return "".join(pieces)
