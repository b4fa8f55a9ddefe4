"""Quoting text into Spark SQL: one home for string literals and identifiers."""

from __future__ import annotations

from collections.abc import Mapping

from sparkgate.api.catalog import quote_identifier

__all__ = ["quote_identifier", "quote_properties", "quote_string"]


def quote_string(text: str) -> str:
    """``text`` as a Spark SQL string literal: single quotes, backslash escapes
    (Spark reads ``\\'`` and ``\\\\``; ``''`` it does not take for a quote in every mode)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def quote_properties(properties: Mapping[str, str]) -> str:
    """``'k' = 'v', ...``: the inside of Spark's ``TBLPROPERTIES (...)``/``DBPROPERTIES (...)``."""
    return ", ".join(f"{quote_string(k)} = {quote_string(v)}" for k, v in properties.items())
