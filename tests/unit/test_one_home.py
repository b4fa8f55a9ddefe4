"""Wire constants, option keys and quoting each have one home in the source tree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sparkgate.sql.quoting import quote_string

SRC = Path(__file__).resolve().parents[2] / "src" / "sparkgate"


def _code_mentions(pattern: str) -> list[str]:
    """Source files whose code (not docstrings' prose lines) holds ``pattern`` in quotes."""
    found = []
    regex = re.compile(pattern)
    for path in sorted(SRC.rglob("*.py")):
        if any(regex.search(line) for line in path.read_text().splitlines()):
            found.append(str(path.relative_to(SRC)))
    return found


@pytest.mark.parametrize(
    ("pattern", "home"),
    [
        (r'"execution\.runtime-mode"', "api/session_options.py"),
        (r'"table\.dml-sync"', "api/session_options.py"),
        (r'"application/vnd\.apache\.arrow\.stream"', "codec/arrow_wire.py"),
        (r'"X-Sparkgate-', "codec/arrow_wire.py"),
        (r'"\$row_kind"', "codec/arrow_wire.py"),
        # the session's zone keys: their home, and the session that keeps both in step
        (r'"table\.local-time-zone"', "api/session_options.py|service/session/session.py"),
    ],
)
def test_declared_once(pattern: str, home: str) -> None:
    assert _code_mentions(pattern) == home.split("|")


def test_string_literal_round_trips_through_the_lexer() -> None:
    from sparkgate.sql.lexer import tokenize, unquote

    for text in ["plain", "it's", "back\\slash", "\\'", "new\nline"]:
        (token,) = tokenize(quote_string(text))
        assert unquote(token) == text
