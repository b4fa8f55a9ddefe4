"""Flink's statement forms on Flink-protocol sessions: golden statement scripts.

Each ``statements/<name>.q`` runs, statement by statement, in one new REST v4
session (Flink's shapes), against the real service and endpoint. After each
statement (ending with ``;`` at the end of a line) comes what it must answer:

- ``!ok``: Flink's ``OK`` answer;
- ``!error <regex>``: an error whose message matches;
- ``| a | b |`` lines: the column names, then one line per row (``NULL``,
  ``TRUE``/``FALSE``); a header alone is an empty result; a line ``~ <regex>``
  matches one line by regular expression;
- ``!text`` ... ``!end``: a one-value result of several lines (SHOW CREATE).

Lines starting with ``#`` are comments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import submit

SCRIPTS = Path(__file__).resolve().parent / "statements"
CASES = sorted(p.stem for p in SCRIPTS.glob("*.q"))


@dataclass
class Case:
    line: int
    statement: str
    expected: list[str]


def cases(text: str) -> list[Case]:
    found: list[Case] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.startswith("#"):
            i += 1
            continue
        start, statement = i + 1, []
        while not lines[i].rstrip().endswith(";"):
            statement.append(lines[i])
            i += 1
        statement.append(lines[i].rstrip()[:-1])
        i += 1
        expected = []
        if i < len(lines) and lines[i] == "!text":
            while lines[i] != "!end":
                expected.append(lines[i])
                i += 1
            expected.append(lines[i])
            i += 1
        else:
            while i < len(lines) and lines[i].strip() and not lines[i].startswith("#"):
                expected.append(lines[i])
                i += 1
        assert expected, f"line {start}: no expected answer"
        found.append(Case(start, "\n".join(statement), expected))
    return found


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(value)


def answer(client: httpx.Client, session: str, statement: str) -> list[str]:
    """What the statement answered, in the script's notation."""
    op = submit(client, session, statement)
    uri: str | None = f"/v4/sessions/{session}/operations/{op}/result/0"
    columns: list[str] = []
    data: list[list[Any]] = []
    while uri is not None:
        response = client.get(uri)
        if response.status_code != 200:
            errors = response.json().get("errors", [])
            return ["!error " + " ".join(errors)]
        body = response.json()
        results = body.get("results") or {}
        columns = [c["name"] for c in results.get("columns", [])] or columns
        data += [row["fields"] for row in results.get("data", [])]
        uri = body.get("nextResultUri")
    if columns == ["result"] and data == [["OK"]]:
        return ["!ok"]
    if len(columns) == 1 and len(data) == 1 and "\n" in str(data[0][0]):
        return ["!text", *str(data[0][0]).rstrip("\n").split("\n"), "!end"]
    return ["| " + " | ".join(columns) + " |"] + [
        "| " + " | ".join(_cell(v) for v in row) + " |" for row in data
    ]


def agrees(expected: list[str], actual: list[str]) -> bool:
    if expected[0].startswith("!error "):
        return actual[0].startswith("!error ") and bool(
            re.search(expected[0][len("!error ") :], actual[0], re.S)
        )
    return len(expected) == len(actual) and all(
        e == a or (e.startswith("~ ") and re.fullmatch(e[2:], a) is not None)
        for e, a in zip(expected, actual, strict=True)
    )


@pytest.mark.parametrize("name", CASES)
def test_script(client: httpx.Client, name: str) -> None:
    script = SCRIPTS / f"{name}.q"
    response = client.post("/v4/sessions", json={"sessionName": f"q-{name}"})
    session = response.json()["sessionHandle"]
    failures = []
    try:
        for case in cases(script.read_text("utf-8")):
            actual = answer(client, session, case.statement)
            if not agrees(case.expected, actual):
                failures.append(
                    f"{script.name}:{case.line}: {case.statement}\n"
                    f"  expected: {case.expected}\n  actual:   {actual}"
                )
    finally:
        client.delete(f"/v4/sessions/{session}")
    assert not failures, "\n".join(failures)


def test_the_script_reader() -> None:
    text = "# c\nSELECT 1\n  AS x;\n| x |\n| 1 |\n\nDROP VIEW v;\n!error not found\n"
    assert cases(text) == [
        Case(2, "SELECT 1\n  AS x", ["| x |", "| 1 |"]),
        Case(7, "DROP VIEW v", ["!error not found"]),
    ]
    assert agrees(["!error not f.und"], ["!error [The view was not found]"])
    assert not agrees(["| x |", "| 1 |"], ["| x |", "| 2 |"])
