"""A batch value is never cut, however far into the result it comes (both modes)."""

from __future__ import annotations

import io

from sparkgate.client.tableau import TableauPrinter
from sparkgate.client.terminal import Terminal
from tests.client.helpers import ExecutorFactory, text_client

ROWS = 25_000  # many pages in both modes; the string grows by one every 1,000 rows
QUERY = f"SELECT id, repeat('x', CAST(id / 1000 AS INT)) AS s FROM range({ROWS})"


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_batch_values_are_never_cut(make_executor: ExecutorFactory) -> None:
    client, out = text_client(make_executor())
    try:
        assert client.execute(QUERY)
    finally:
        client.close()
    text = out.getvalue()
    assert "..." not in text
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    assert _cells(lines[0]) == ["id", "s"]
    rows = [_cells(line) for line in lines[1:]]
    assert rows == [[str(i), "x" * (i // 1000)] for i in range(ROWS)]
    assert f"{ROWS} rows in set" in text
    # BIGINT's widest value fits from the first row: the id column never moves.
    borders = {line for line in text.splitlines() if line.startswith("+")}
    assert all(border.startswith("+" + "-" * 22 + "+") for border in borders), borders


def test_a_wider_value_widens_its_column_under_a_border() -> None:
    out = io.StringIO()
    printer = TableauPrinter(Terminal(out, interactive=False), ["s"], [3], grow=True)
    printer.header()
    printer.rows([["abc"], ["abcdef"], ["ab"]])
    printer.end()
    assert out.getvalue().splitlines() == [
        "+-----+",
        "|   s |",
        "+-----+",
        "| abc |",
        "+--------+",
        "| abcdef |",
        "|     ab |",
        "+--------+",
    ]
