"""Golden SQL scripts: each ``golden/<name>.sql`` runs through the client in script
mode, in both modes, and must print exactly ``golden/<name>.out``.

In ``.out`` files a line ``~ <regex>`` matches one line by regular expression and
a line ``...`` matches any number of lines; query times print as ``<time>``.
A script whose first line is ``-- expect: failure`` must stop at its failing
statement and report failure (the client then exits non-zero).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.client.helpers import ExecutorFactory, text_client

GOLDEN = Path(__file__).resolve().parent / "golden"
CASES = sorted(p.stem for p in GOLDEN.glob("*.sql"))
_TIME = re.compile(r"\(\d+\.\d\d seconds\)")


def normalize(text: str) -> str:
    return _TIME.sub("(<time> seconds)", text)


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line-by-line match with ``~ regex`` lines and ``...`` wildcards."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    if head.startswith("~ "):
        ok = re.fullmatch(head[2:], actual[0]) is not None
    else:
        ok = head == actual[0]
    return ok and matches(rest, actual[1:])


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        (["a", "b"], ["a", "b"], True),
        (["a", "b"], ["a", "c"], False),
        (["a"], ["a", "b"], False),
        (["~ x\\d+"], ["x12"], True),
        (["~ x\\d+"], ["x1y"], False),
        (["a", "...", "z"], ["a", "b", "c", "z"], True),
        (["a", "...", "z"], ["a", "z"], True),
        (["a", "...", "z"], ["a", "b"], False),
    ],
)
def test_golden_matcher(expected: list[str], actual: list[str], ok: bool) -> None:
    assert matches(expected, actual) is ok


@pytest.mark.parametrize("case", CASES)
def test_golden_script(case: str, make_executor: ExecutorFactory) -> None:
    script = (GOLDEN / f"{case}.sql").read_text(encoding="utf-8")
    expected = (GOLDEN / f"{case}.out").read_text(encoding="utf-8")
    expect_failure = script.startswith("-- expect: failure")
    client, out = text_client(make_executor())
    try:
        ok = client.run_script(script)
    finally:
        client.close()
    actual = normalize(out.getvalue())
    assert matches(expected.splitlines(), actual.splitlines()), (
        f"--- expected\n{expected}\n--- actual\n{actual}"
    )
    assert ok is not expect_failure
