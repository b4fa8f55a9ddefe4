"""Client pieces that need no gateway: tableau layout, error chains, input, progress,
and the full-screen table view driven through a pipe."""

from __future__ import annotations

import io
import threading

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from sparkgate.api.errors import ExecutionError, SqlParseError
from sparkgate.api.results import RowKind
from sparkgate.api.service import OperationProgress
from sparkgate.api.types import BIGINT, INT, STRING, DecimalType, ResultSchema, TimestampType
from sparkgate.client.client import error_lines, parse_client_command, prints_raw
from sparkgate.client.progress import format_elapsed, format_progress
from sparkgate.client.repl import is_ready, word_start
from sparkgate.client.rest import _negotiate, parse_error_chain
from sparkgate.client.table_view import TableView
from sparkgate.client.tableau import TableauPrinter, column_widths, row_count_text, type_width
from sparkgate.client.terminal import Terminal, display_width


@pytest.mark.parametrize(
    ("names", "rows", "max_width", "types", "widths"),
    [
        (["a", "b"], [["1", "Hello"]], 30, None, [1, 5]),
        (["a"], [[None]], 30, None, [6]),  # <NULL>
        (["long"], [["x" * 50]], 10, None, [10]),
        (["n"], [["1"]], 30, [BIGINT], [20]),
        (["s"], [["abc"]], 30, [STRING], [30]),
        (["d"], [], 30, [DecimalType(10, 2)], [12]),
        (["t"], [], 30, [TimestampType(3)], [23]),
        (["w"], [["日本"]], 30, None, [4]),
    ],
)
def test_column_widths(
    names: list[str],
    rows: list[list[str | None]],
    max_width: int,
    types: list[object] | None,
    widths: list[int],
) -> None:
    assert column_widths(names, rows, max_width, types) == widths  # type: ignore[arg-type]


def test_type_width_respects_nullability_and_cap() -> None:
    assert type_width(INT, 30) == 11
    assert type_width(INT.not_null(), 30) == 11
    assert type_width(STRING, 12) == 12


def test_tableau_prints_borders_right_aligned_and_truncates() -> None:
    out = io.StringIO()
    printer = TableauPrinter(Terminal(out, interactive=False), ["id", "name"], [6, 6])
    printer.header()
    printer.rows([["1", "abc"], ["22", "abcdefghij"], [None, "日本語テキ"]])
    printer.end()
    assert out.getvalue().splitlines() == [
        "+--------+--------+",
        "|     id |   name |",
        "+--------+--------+",
        "|      1 |    abc |",
        "|     22 | abc... |",
        "| <NULL> | 日...  |",
        "+--------+--------+",
    ]
    assert printer.count == 3


@pytest.mark.parametrize(
    ("count", "text"), [(0, "Empty set"), (1, "1 row in set"), (5, "5 rows in set")]
)
def test_row_count_text(count: int, text: str) -> None:
    assert row_count_text(count) == text


@pytest.mark.parametrize(("text", "width"), [("abc", 3), ("日本語", 6), ("", 0), ("a日", 3)])
def test_display_width(text: str, width: int) -> None:
    assert display_width(text) == width


_TRACE = (
    "org.apache.flink.table.gateway.api.utils.SqlGatewayException: Failed to fetchResults.\n"
    "\tat org.apache.Foo.bar(Foo.java:1)\n"
    "Caused by: org.apache.flink.table.api.TableException: outer problem\n"
    "\tat org.apache.Foo.baz(Foo.java:2)\n"
    "\t... 3 more\n"
    "Caused by: java.lang.ArithmeticException: / by zero\n"
    "second line of the message\n"
    "\tat org.apache.Foo.qux(Foo.java:3)\n"
)


@pytest.mark.parametrize(
    ("errors", "chain"),
    [
        (
            ["Internal server error.", _TRACE],
            (
                "org.apache.flink.table.api.TableException: outer problem",
                "java.lang.ArithmeticException: / by zero\nsecond line of the message",
            ),
        ),
        (  # Flink's framing of the trace (AbstractHandler) is not a cause
            [
                "Internal server error.",
                f"<Exception on server side:\n{_TRACE}\nEnd of exception on server side>",
            ],
            (
                "org.apache.flink.table.api.TableException: outer problem",
                "java.lang.ArithmeticException: / by zero\nsecond line of the message",
            ),
        ),
        (["Session not found."], ("Session not found.",)),
        ([], ()),
    ],
)
def test_parse_error_chain(errors: list[str], chain: tuple[str, ...]) -> None:
    assert parse_error_chain(errors) == chain


@pytest.mark.parametrize(
    ("offered", "chosen"),
    [(["V1", "V2", "V3", "V4"], "V4"), (["V1", "V2"], "V2"), (["V4", "V9"], "V4")],
)
def test_version_negotiation_picks_the_highest_common(offered: list[str], chosen: str) -> None:
    assert _negotiate(offered) == chosen


def test_version_negotiation_fails_without_a_common_version() -> None:
    with pytest.raises(Exception, match="V9"):
        _negotiate(["V9"])


@pytest.mark.parametrize(
    ("error", "verbose", "lines"),
    [
        (ExecutionError("outer", causes=("A: outer", "B: root\n")), False, ["B: root"]),
        (
            ExecutionError("outer", causes=("A: outer", "B: root")),
            True,
            ["B: root", "", "The cause chain, outermost first:", "A: outer", "Caused by: B: root"],
        ),
        (SqlParseError("unterminated string"), False, ["unterminated string"]),
    ],
)
def test_error_lines_put_the_root_cause_first(
    error: Exception, verbose: bool, lines: list[str]
) -> None:
    assert error_lines(error, verbose) == lines


@pytest.mark.parametrize(
    ("text", "ready"),
    [
        ("SELECT 1;", True),
        ("SELECT 1", False),
        ("SELECT ';'", False),
        ("SELECT 1; -- done", True),
        ("SELECT /* ; */ 1", False),
        ("quit", True),
        ("EXIT;", True),
        ("help", True),
        ("   ", False),
    ],
)
def test_enter_runs_only_complete_statements(text: str, ready: bool) -> None:
    assert is_ready(text) is ready


@pytest.mark.parametrize(
    ("text", "command"),
    [("quit;", "QUIT"), ("Exit", "QUIT"), ("help ;", "HELP"), ("clear", "CLEAR"), ("SET;", None)],
)
def test_client_commands(text: str, command: str | None) -> None:
    assert parse_client_command(text) == command


@pytest.mark.parametrize(
    ("before", "start"),
    [("SELECT * FROM db.ta", 14), ("SELECT ab", 7), ("SELECT ", 7), ("SELECT `my t`.c", 7)],
)
def test_completion_replaces_the_dotted_name_at_the_cursor(before: str, start: int) -> None:
    assert word_start(before) == start


def test_progress_line() -> None:
    progress = OperationProgress(1, 0, 3, 1, 200, 120, 4, 7.0)
    text = format_progress(progress, 7.0)
    assert "Stages 1/3" in text
    assert "Tasks 120/200 (4 running)" in text
    assert "00:07" in text
    assert "Stages" not in format_progress(None, 3.0)
    assert format_elapsed(3725) == "1:02:05"


def test_table_view_pages_searches_and_cancels_on_early_exit() -> None:
    schema = ResultSchema.of(("id", INT), ("name", STRING))
    pulled: list[int] = []

    def pages() -> object:
        for p in range(1000):  # far more than the view may read ahead
            pulled.append(p)
            yield [(RowKind.INSERT, [str(p * 10 + i), f"name{p * 10 + i}"]) for i in range(10)]

    cancelled = threading.Event()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        view = TableView(
            schema,
            pages(),  # type: ignore[arg-type]
            max_rows=100,
            cancel=cancelled.set,
            input=pipe,
            output=DummyOutput(),
        )
        pipe.send_text("/name55\r")
        pipe.send_text("q")
        view.run()
    assert view.search_term == "name55"
    assert cancelled.is_set()  # left before the end: the query is cancelled
    assert len(pulled) < 1000  # it never read the whole result
    assert len(view.rows) <= 100


def test_table_view_materialises_the_changelog() -> None:
    schema = ResultSchema.of(("word", STRING), ("n", INT))
    changes = [
        [(RowKind.INSERT, ["a", "1"]), (RowKind.INSERT, ["b", "1"])],
        [(RowKind.UPDATE_BEFORE, ["a", "1"]), (RowKind.UPDATE_AFTER, ["a", "2"])],
        [(RowKind.DELETE, ["b", "1"]), (RowKind.INSERT, ["c", "5"])],
    ]
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        view = TableView(
            schema,
            iter(changes),  # type: ignore[arg-type]
            max_rows=100,
            input=pipe,
            output=DummyOutput(),
        )
        view._fetch()  # read the whole (finite) stream without a screen
    assert [row for _, row in view.rows] == [["a", "2"], ["c", "5"]]
    assert all(kind is RowKind.INSERT for kind, _ in view.rows)


@pytest.mark.parametrize(
    ("statement", "raw"),
    [
        ("EXPLAIN SELECT 1", True),
        ("explain extended SELECT 1", True),
        ("-- the plan\nEXPLAIN SELECT 1", True),
        ("SHOW CREATE TABLE t", True),
        ("show  create table t AS SERDE", True),
        ("SHOW TABLES", False),
        ("SELECT 'EXPLAIN'", False),
        ("DESCRIBE t", False),
    ],
)
def test_plans_and_ddl_print_as_plain_text(statement: str, raw: bool) -> None:
    assert prints_raw(statement) is raw
