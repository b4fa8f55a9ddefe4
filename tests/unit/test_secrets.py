"""Secret option values never shown: in options and in statement text."""

from __future__ import annotations

import pytest

from sparkgate.sql.secrets import HIDDEN, is_sensitive, masked_options, masked_statement


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("password", True),
        ("properties.sasl.jaas.config", True),
        ("My-Secret-Key", True),
        ("auth.token", True),
        ("username", False),
        ("base-url", False),
    ],
)
def test_sensitive_keys_are_flinks(key: str, secret: bool) -> None:
    assert is_sensitive(key) is secret


def test_masked_options_hides_values_only() -> None:
    options = {"username": "u", "password": "p", "type": "jdbc"}
    assert masked_options(options) == {"username": "u", "password": HIDDEN, "type": "jdbc"}
    assert options["password"] == "p"


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        (
            "CREATE CATALOG pg WITH ('type'='jdbc', 'password' = 'p''w', 'username'='u')",
            "CREATE CATALOG pg WITH ('type'='jdbc', 'password' = '******', 'username'='u')",
        ),
        ("SET 'fs.secret.key' = 'abc'", "SET 'fs.secret.key' = '******'"),
        (
            "CREATE TABLE t WITH (\n  'password' = 'x' -- a comment\n) AS SELECT 'password'",
            "CREATE TABLE t WITH (\n  'password' = '******' -- a comment\n) AS SELECT 'password'",
        ),
        ("SELECT 'password' = 'plain text'", "SELECT 'password' = '******'"),
        ("SELECT 1", "SELECT 1"),
    ],
)
def test_masked_statement(statement: str, expected: str) -> None:
    assert masked_statement(statement) == expected
