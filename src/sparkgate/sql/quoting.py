"""Quoting text into Spark SQL: one home for string literals and identifiers."""

from __future__ import annotations

from sparkgate.api.catalog import quote_identifier

__all__ = ["quote_identifier", "quote_string"]


def quote_string(text: str) -> str:
    """``text`` as a Spark SQL string literal: single quotes, backslash escapes
    (Spark reads ``\\'`` and ``\\\\``; ``''`` it does not take for a quote in every mode)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
