"""Incomplete statements over REST say ``Encountered "<EOF>"``, as Flink's parser does.

Flink's SQL client sends what the user typed up to the first ``;`` and keeps
reading lines only when the gateway's error carries that text; the
statements here are cut where that client cuts them.
"""

from __future__ import annotations

import time

import httpx
import pytest

from tests.rest.conftest import run, submit

EOF_TEXT = 'Encountered "<EOF>"'


def _error_text(client: httpx.Client, session: str, statement: str) -> str:
    op = submit(client, session, statement)
    uri = f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON"
    deadline = time.monotonic() + 120
    while True:
        response = client.get(uri)
        if response.status_code != 200:
            return "\n".join(response.json()["errors"])
        assert response.json()["resultType"] == "NOT_READY", response.text
        assert time.monotonic() < deadline


@pytest.mark.parametrize(
    "statement",
    [
        "EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO t SELECT 1;",
        "EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO t SELECT 1;\nINSERT INTO t SELECT 2;",
        "EXECUTE STATEMENT SET",
        "BEGIN\n  SELECT 1;",
        "SELECT 'it''s;",
        "SELECT `a;",
        "SELECT 1 /* comment;",
        "SELECT (1 + 2;",
        "SELECT * FROM VALUES (1, 2;",
        "CREATE TABLE t (a INT, b STRING;",
    ],
)
def test_incomplete_statement_error_says_eof(
    client: httpx.Client, session: str, statement: str
) -> None:
    assert EOF_TEXT in _error_text(client, session, statement)


@pytest.mark.parametrize(
    "statement",
    ["SELECT * FROM no_such_table_eof;", "SELECT 1 +;", "SHOW NO_SUCH_THING;"],
)
def test_complete_but_wrong_statement_does_not_say_eof(
    client: httpx.Client, session: str, statement: str
) -> None:
    assert EOF_TEXT not in _error_text(client, session, statement)


def test_complete_statement_set_still_runs(client: httpx.Client, session: str) -> None:
    run(client, session, "CREATE TABLE eof_sink (a INT) USING parquet")
    try:
        bodies = run(
            client,
            session,
            "EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO eof_sink SELECT 1;\n"
            "INSERT INTO eof_sink SELECT 2;\nEND;",
        )
        first = next(b for b in bodies if "results" in b)
        assert first["results"]["columns"][0]["name"] == "job id"
    finally:
        run(client, session, "DROP TABLE IF EXISTS eof_sink")
