"""A failing statement of the ``-i`` file says it came from there (both modes)."""

from __future__ import annotations

from tests.client.helpers import ExecutorFactory, text_client

INIT = """\
SET 'pipeline.name' = 'from init';

-- the second statement fails
CREATE TEMPORARY VIEW init_broken AS
  SELECT * FROM init_no_such_table;
SET 'pipeline.name' = 'never reached';
"""


def test_a_failing_init_statement_names_the_file_and_the_statement(
    make_executor: ExecutorFactory,
) -> None:
    client, out = text_client(make_executor())
    try:
        ok = client.run_init(INIT, "the initialization file conf/init.sql")
    finally:
        client.close()
    assert not ok
    lines = out.getvalue().splitlines()
    assert lines[0] == (
        "[ERROR] Failed to initialize from the initialization file conf/init.sql: "
        "statement 2 (line 4) failed:"
    ), lines
    assert lines[1:3] == [
        "CREATE TEMPORARY VIEW init_broken AS",
        "  SELECT * FROM init_no_such_table;",
    ], lines
    assert lines[3] == "[ERROR] Could not execute SQL statement. Reason:", lines
    assert "TABLE_OR_VIEW_NOT_FOUND" in lines[4], lines


def test_an_init_file_that_is_not_sql_names_the_file(make_executor: ExecutorFactory) -> None:
    client, out = text_client(make_executor())
    try:
        ok = client.run_init("SET 'a' = 'unterminated;\n", "the initialization file i.sql")
    finally:
        client.close()
    assert not ok
    text = out.getvalue()
    assert text.startswith(
        "[ERROR] Failed to initialize from the initialization file i.sql: it is not valid SQL."
    ), text
