"""The full-screen table view on real results (both modes), keys sent through a pipe.

``G`` reaches the result's real last row, values are shown whole when the
screen has room, the status line tells loading from waiting, and leaving
prints the row count (or how far retrieval got).
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from sparkgate.client.client import SqlClient, TableViewOutcome
from sparkgate.client.table_view import TableView
from sparkgate.client.terminal import Terminal
from tests.client.helpers import ExecutorFactory

ROWS = 30_000  # several pages in both modes; far beyond the view's read-ahead
QUERY = f"SELECT id, uuid() AS u FROM range({ROWS})"
_WAIT = 120.0


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + _WAIT
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.02)


def _text(fragments: Any) -> str:
    return "".join(text for _style, text, *_ in fragments)


class _Driver:
    """Runs the client's table view with DummyOutput (80 columns) and scripted keys."""

    def __init__(self, pipe: PipeInput, keys: Callable[[TableView, PipeInput], None]) -> None:
        self.pipe = pipe
        self.keys = keys
        self.view: TableView | None = None

    def __call__(self, schema: Any, pages: Iterator[Any], **kwargs: Any) -> TableViewOutcome:
        view = TableView(schema, pages, input=self.pipe, output=DummyOutput(), **kwargs)
        self.view = view

        def press() -> None:
            self.keys(view, self.pipe)

        presser = threading.Thread(target=press, daemon=True)
        presser.start()
        outcome = view.run()
        presser.join(timeout=_WAIT)
        return outcome


def _run(make_executor: ExecutorFactory, keys: Callable[[TableView, PipeInput], None]) -> str:
    out = io.StringIO()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        driver = _Driver(pipe, keys)
        client = SqlClient(
            make_executor(), Terminal(out, interactive=True, color=False), table_view=driver
        )
        client.start()
        try:
            assert client.execute("SET 'sql-client.execution.result-mode' = 'table'")
            assert client.execute(QUERY)
        finally:
            client.close()
    return out.getvalue()


def test_big_g_goes_to_the_real_last_row_and_q_prints_the_count(
    make_executor: ExecutorFactory,
) -> None:
    seen: dict[str, str] = {}

    def keys(view: TableView, pipe: PipeInput) -> None:
        # Waiting for more, not loading: the status says so.
        _wait_for(lambda: view.total > 0 and not view._want_more.is_set(), "the view to pause")
        seen["paused"] = _text(view._status())
        seen["first screen"] = _text(view._body())
        pipe.send_text("G")
        _wait_for(lambda: view.done, "the whole result")
        _wait_for(lambda: str(ROWS - 1) in _text(view._body()), "the last row on screen")
        seen["last screen"] = _text(view._body())
        seen["end"] = _text(view._status())
        pipe.send_text("q")

    out = _run(make_executor, keys)
    assert "(loading...)" not in seen["paused"], seen
    assert "more rows" in seen["paused"], seen
    # A UUID (36 characters) is shown whole on an 80-column screen.
    first_uuid = seen["first screen"].splitlines()[0].split("|")[1].strip()
    assert len(first_uuid) == 36 and "..." not in seen["first screen"], seen
    last_row = seen["last screen"].rstrip("\n").splitlines()[-1]
    assert last_row.split("|")[0].strip() == str(ROWS - 1), seen
    assert f"of {ROWS}" in seen["end"] and "loading" not in seen["end"], seen
    assert f"{ROWS} rows in set" in out, out


def test_leaving_early_says_how_far_retrieval_got(make_executor: ExecutorFactory) -> None:
    def keys(view: TableView, pipe: PipeInput) -> None:
        _wait_for(lambda: view.total > 0, "the first rows")
        pipe.send_text("q")

    out = _run(make_executor, keys)
    assert "[INFO] Result retrieval cancelled after " in out, out
    assert "rows in set" not in out, out
