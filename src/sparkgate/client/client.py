"""The SQL client's core: runs statements through an executor and shows their results.

Interactive (:mod:`sparkgate.client.repl`), script (``-f``) and init
(``-i``) modes all come through :class:`SqlClient`, so they print the same
things: ``[INFO] Execute statement succeeded.`` for SET/RESET/DDL, Flink's
tableau for query and ``SHOW`` results, ``[ERROR] Could not execute SQL
statement. Reason:`` with the root cause first for failures. Results stream
page by page: rows are printed (or handed to the table view) as pages
arrive, so memory holds one page, whatever the size of the result.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from sparkgate.api.config import ConfigOption, Configuration
from sparkgate.api.errors import ConfigurationError, ExecutionError, GatewayError
from sparkgate.api.handles import OperationHandle
from sparkgate.api.results import ResultKind, ResultType, RowKind
from sparkgate.api.session_options import DML_SYNC, RUNTIME_MODE
from sparkgate.api.types import CharType
from sparkgate.client import options
from sparkgate.client.executor import Executor, Page, TextRow
from sparkgate.client.options import ResultMode
from sparkgate.client.progress import InterruptGuard, format_progress
from sparkgate.client.tableau import (
    TableauPrinter,
    bounded_width,
    column_widths,
    row_count_text,
)
from sparkgate.client.terminal import Terminal
from sparkgate.sql import split_statements, strip_trailing_semicolon, tokenize

__all__ = [
    "HELP_TEXT",
    "PROMPT",
    "ClientCommand",
    "SqlClient",
    "TableViewFactory",
    "TableViewOutcome",
    "error_lines",
    "parse_client_command",
    "prints_raw",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

PROMPT = "Spark SQL> "
_POLL = 0.2
_STATUS_AFTER = 0.4
_PROGRESS_EVERY = 0.5
_HEARTBEAT_EVERY = 60.0
_EXECUTE_FAILED = "Could not execute SQL statement. Reason:"
_OP_TYPE = CharType(2, nullable=False)
# Session options of the service the client reads to print as Flink's client does.

HELP_TEXT = """\
The following commands are available:

CLEAR           Clears the terminal.
HELP            Prints the available commands.
QUIT/EXIT       Quits the SQL client (so does Ctrl-D).
SET             Sets a session property: SET 'key' = 'value'; SET; lists all properties.
RESET           Resets a session property to its default: RESET 'key'; RESET; resets all.
ADD JAR         Adds a jar to the session: ADD JAR '<path>.jar';
REMOVE JAR      Removes a jar from the session: REMOVE JAR '<path>.jar';
SHOW JARS       Lists the jars added to the session.

Any other statement runs on Spark: queries, DDL, DML, SHOW, DESCRIBE, EXPLAIN...

Hints:
  A statement ends with ';' - Enter on an unfinished one starts a new line.
  Tab completes keywords, catalogs, databases, tables, columns and functions.
  Ctrl-C cancels the running statement (its Spark jobs stop); at the prompt it
  clears the line. Ctrl-D exits.
  SET 'sql-client.execution.result-mode' = 'table'; pages large results full-screen,
  'changelog' shows each change with an 'op' column, 'tableau' (the default)
  prints them as they arrive."""


class ClientCommand:
    """Statements the client answers itself."""

    HELP = "HELP"
    QUIT = "QUIT"
    CLEAR = "CLEAR"


_COMMANDS = {
    "HELP": ClientCommand.HELP,
    "QUIT": ClientCommand.QUIT,
    "EXIT": ClientCommand.QUIT,
    "CLEAR": ClientCommand.CLEAR,
}


def parse_client_command(statement: str) -> str | None:
    """``HELP``/``QUIT``/``EXIT``/``CLEAR`` (any case, ``;`` optional), else None."""
    word = strip_trailing_semicolon(statement).strip().upper()
    return _COMMANDS.get(word)


_RAW_STATEMENTS = (("EXPLAIN",), ("SHOW", "CREATE"))


def prints_raw(statement: str) -> bool:
    """Whether the statement's result is text to print as is (a plan, a DDL), not a table.

    As Flink's ``TableResult.print()`` (and its 1.x SQL client) does for
    ``EXPLAIN`` and ``SHOW CREATE``: a multi-line value in a table cell would
    break the table's borders.
    """
    words = [t.upper for t in tokenize(statement)[:4] if not t.is_comment]
    return any(tuple(words[: len(lead)]) == lead for lead in _RAW_STATEMENTS)


def error_lines(error: BaseException, verbose: bool) -> list[str]:
    """The reason lines of a failure: the root cause, then (verbose) the whole chain."""
    if isinstance(error, ExecutionError):
        causes = error.causes or (error.message,)
    else:
        causes = (f"{type(error).__name__}: {error}" if not str(error) else str(error),)
    causes = tuple(c.rstrip() for c in causes)
    lines = [causes[-1]]
    if verbose:
        lines.append("")
        lines.append("The cause chain, outermost first:")
        lines.append(causes[0])
        lines.extend(f"Caused by: {cause}" for cause in causes[1:])
    return lines


class _Cancelled(Exception):
    pass


@dataclass
class _Outcome:
    ok: bool
    quit: bool = False


@dataclass(frozen=True)
class TableViewOutcome:
    """How the table view ended: rows received, whether that was the whole result, any error."""

    rows: int
    complete: bool
    error: str | None = None


TableViewFactory = Callable[..., TableViewOutcome]
"""Builds and runs the full-screen table view (see :mod:`sparkgate.client.table_view`)."""


class SqlClient:
    """One client session: ``start``, then ``execute`` statements, then ``close``."""

    def __init__(
        self,
        executor: Executor,
        terminal: Terminal | None = None,
        *,
        table_view: TableViewFactory | None = None,
    ) -> None:
        self.executor = executor
        self.terminal = terminal or Terminal()
        self._table_view = table_view
        self._config = Configuration({})
        self._heartbeat_stop = threading.Event()
        self._heartbeat: threading.Thread | None = None
        self._lock = threading.Lock()  # executor calls: heartbeat vs. statements
        self.quit_requested = False
        self._status_enabled = True

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> None:
        self.executor.open()
        self.refresh_config()
        self._heartbeat = threading.Thread(
            target=self._beat, name="sql-client-heartbeat", daemon=True
        )
        self._heartbeat.start()

    def close(self) -> None:
        self._heartbeat_stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join(timeout=5)
            self._heartbeat = None
        with self._lock:
            self.executor.close()

    def _beat(self) -> None:
        while not self._heartbeat_stop.wait(_HEARTBEAT_EVERY):
            try:
                with self._lock:
                    self.executor.heartbeat()
            except GatewayError:
                log.warning("Session heartbeat failed", exc_info=True)

    # -- configuration -----------------------------------------------------------
    def refresh_config(self) -> None:
        try:
            self._config = Configuration(self.executor.session_config())
        except GatewayError:
            log.warning("Could not read the session configuration", exc_info=True)

    def option(self, option: ConfigOption[T]) -> T:
        try:
            return self._config.get(option)
        except ConfigurationError as exc:
            log.warning("%s; using the default", exc)
            return option.default

    # -- entry points ---------------------------------------------------------------
    def execute(self, statement: str) -> bool:
        """Run one statement (``;`` optional) and print its outcome; False when it failed."""
        command = parse_client_command(statement)
        if command is not None:
            return self._command(command)
        text = strip_trailing_semicolon(statement)
        if not text:
            return True
        try:
            with self._lock:
                return self._run(text).ok
        except GatewayError as exc:
            self.print_error(exc)
            return False
        except Exception as exc:  # a failure the client did not foresee must not end it
            log.exception("Statement failed in the client: %s", text)
            self.print_error(exc)
            return False

    def run_script(self, script: str, *, echo: bool = True) -> bool:
        """Run every statement of ``script``; stop at the first failure (returns False)."""
        try:
            statements = split_statements(script)
        except GatewayError as exc:
            self.print_error(exc)
            return False
        for statement in statements:
            if echo:
                self.terminal.line(PROMPT + statement + ";")
            ok = self.execute(statement)
            if echo:
                self.terminal.line()
            if not ok:
                return False
            if self.quit_requested:
                break
        return True

    def run_init(self, script: str, source: str = "the initialization file") -> bool:
        """Initialization statements (``-i``): through configure-session, silent on success.

        A failure names ``source`` (the file), the statement's number and line,
        and the statement, then the reason, so it is not taken for the user's own.
        """
        try:
            statements = split_statements(script)
        except GatewayError as exc:
            self.terminal.error(f"Failed to initialize from {source}: it is not valid SQL.")
            self.print_error(exc)
            return False
        position = 0
        for number, statement in enumerate(statements, start=1):
            position = script.find(statement, position)
            line = script.count("\n", 0, max(position, 0)) + 1
            try:
                with self._lock:
                    self.executor.configure(statement)
            except Exception as exc:  # any failure: the client reports it and stops
                if not isinstance(exc, GatewayError):
                    log.exception("Initialization statement failed in the client")
                self.terminal.error(
                    f"Failed to initialize from {source}: statement {number} (line {line}) failed:"
                )
                self.terminal.line(statement + ";")
                self.print_error(exc)
                return False
        self.refresh_config()
        return True

    def print_error(self, error: BaseException, statement: str | None = None) -> None:
        lines = error_lines(error, self.option(options.VERBOSE))
        if statement is not None and self.option(options.VERBOSE):
            lines.append(f"Statement: {statement}")
        self.terminal.error(_EXECUTE_FAILED, "\n".join(lines))
        self.terminal.flush()

    # -- client commands ---------------------------------------------------------------
    def _command(self, command: str) -> bool:
        if command == ClientCommand.HELP:
            self.terminal.line(HELP_TEXT)
        elif command == ClientCommand.CLEAR:
            self.terminal.clear_screen()
        elif command == ClientCommand.QUIT:
            self.quit_requested = True
        return True

    # -- statements -------------------------------------------------------------------
    def _run(self, statement: str) -> _Outcome:
        started = time.monotonic()
        op = self.executor.submit(statement)
        try:
            with InterruptGuard() as guard:
                pages = self._pages(op, guard, started)
                try:
                    first = next(pages)
                    if first.result_kind is ResultKind.SUCCESS_WITH_CONTENT and prints_raw(
                        statement
                    ):
                        return self._raw(first, pages)
                    return self._show(op, first, pages, started)
                except _AlreadyReported:
                    self._cancel(op)
                    return _Outcome(ok=True)
                except _Cancelled:
                    self._cancel(op)
                    self.terminal.clear_status()
                    self.terminal.info("Statement cancelled.")
                    return _Outcome(ok=True)
        finally:
            self.terminal.clear_status()
            try:
                self.executor.close_operation(op)
            except GatewayError:
                log.debug("Closing operation %s failed", op, exc_info=True)

    def _cancel(self, op: OperationHandle) -> None:
        try:
            self.executor.cancel(op)
        except GatewayError:
            log.debug("Cancelling operation %s failed", op, exc_info=True)

    def _pages(self, op: OperationHandle, guard: InterruptGuard, started: float) -> Iterator[Page]:
        """Every page with rows or metadata, until end of stream; waits show progress."""
        token = 0
        page_rows = self.option(options.FETCH_PAGE_ROWS)
        idle_since = time.monotonic()
        last_progress = 0.0
        progress = None
        tick = 0
        while True:
            if guard.interrupted.is_set():
                raise _Cancelled
            page = self.executor.fetch(op, token, page_rows, _POLL)
            for warning in page.warnings:
                self.terminal.clear_status()
                self.terminal.warning(warning)
            if page.result_type is not ResultType.NOT_READY:
                if page.rows or page.result_type is ResultType.EOS or token == 0:
                    idle_since = time.monotonic()
                    yield page
                if page.result_type is ResultType.EOS or page.next_token is None:
                    return
            token = page.next_token if page.next_token is not None else token
            now = time.monotonic()
            if (
                self._status_enabled
                and self.terminal.interactive
                and now - idle_since > _STATUS_AFTER
            ):
                if now - last_progress > _PROGRESS_EVERY:
                    last_progress = now
                    try:
                        progress = self.executor.progress(op)
                    except GatewayError:
                        progress = None
                tick += 1
                self.terminal.status(format_progress(progress, now - started, tick))

    def _show(
        self, op: OperationHandle, first: Page, pages: Iterator[Page], started: float
    ) -> _Outcome:
        if first.is_query_result:
            return self._show_query(op, first, pages, started)
        if first.job_id is not None and first.schema.names == ("job id",):
            _drain(first, pages)
            if self._dml_returns_at_once() and first.rows:
                self.terminal.info("Submitting SQL update statement to the cluster...")
                self.terminal.info(
                    "SQL update statement has been successfully submitted to the cluster:"
                )
                self.terminal.line(f"Job ID: {first.rows[0][0]}")
            else:
                self.terminal.info("Complete execution of the SQL update statement.")
        elif first.result_kind is ResultKind.SUCCESS:
            _drain(first, pages)
            self.terminal.info("Execute statement succeeded.")
        else:
            self._tableau(first, pages, started, show_kind=False, timed=False)
        self.refresh_config()  # SET, RESET, USE ... may have changed it
        return _Outcome(ok=True)

    def _raw(self, first: Page, pages: Iterator[Page]) -> _Outcome:
        """Every row's fields as plain text, one row after the other."""
        for page in _chain(first, pages):
            for row in page.rows:
                text = "\t".join("" if v is None else v for v in row)
                self.terminal.line(text.rstrip("\n"))
        self.terminal.flush()
        return _Outcome(ok=True)

    def _show_query(
        self, op: OperationHandle, first: Page, pages: Iterator[Page], started: float
    ) -> _Outcome:
        mode = self.option(options.EXECUTION_RESULT_MODE)
        if mode is ResultMode.TABLE and self.terminal.interactive and self._table_view:
            self.terminal.clear_status()
            self._status_enabled = False
            try:
                outcome = self._table_view(
                    first.schema,
                    _rows_of(first, pages),
                    max_rows=self.option(options.EXECUTION_MAX_TABLE_RESULT_ROWS),
                    cancel=lambda: self._cancel(op),
                )
            finally:
                self._status_enabled = True
            return self._after_table_view(outcome)
        streaming = self._streaming()
        self._tableau(
            first,
            pages,
            started,
            show_kind=streaming or mode is ResultMode.CHANGELOG,
            timed=True,
            streaming=streaming,
        )
        return _Outcome(ok=True)

    def _after_table_view(self, outcome: TableViewOutcome) -> _Outcome:
        """What leaving the view leaves on screen: the row count, or why it stopped."""
        if outcome.error:
            self.terminal.error(_EXECUTE_FAILED, outcome.error)
            self.terminal.flush()
            return _Outcome(ok=False)
        if outcome.complete:
            self.terminal.line(row_count_text(outcome.rows))  # no time: it is the reading's
            self.terminal.flush()
        else:
            # Flink says "Result retrieval cancelled."; the count tells how far it got.
            self.terminal.info(f"Result retrieval cancelled after {outcome.rows} rows.")
        return _Outcome(ok=True)

    def _streaming(self) -> bool:
        """Whether the session runs queries as streams (Flink's client asks the same)."""
        return self.option(RUNTIME_MODE) == "streaming"

    def _dml_returns_at_once(self) -> bool:
        """Streaming INSERTs, and DML without ``table.dml-sync``, return a running job."""
        return self._streaming() or not self.option(DML_SYNC)

    def _tableau(
        self,
        first: Page,
        pages: Iterator[Page],
        started: float,
        *,
        show_kind: bool,
        timed: bool,
        streaming: bool = False,
    ) -> None:
        schema = first.schema
        max_width = self.option(options.DISPLAY_MAX_COLUMN_WIDTH)
        page_rows = self.option(options.FETCH_PAGE_ROWS)
        # Width sample: a page's worth of rows, or the whole result if smaller; a
        # stream prints at once. One chain throughout: dropping it would close pages.
        chain = _chain(first, pages)
        sample: list[TextRow] = []
        complete = first.result_type is ResultType.EOS
        for page in chain:
            sample.extend(_with_kind(page) if show_kind else page.rows)
            if page.result_type is ResultType.EOS:
                complete = True
                break
            if streaming or len(sample) >= page_rows:
                break
        names = (["op"] if show_kind else []) + list(schema.names)
        if not sample and complete and not show_kind:
            self._footer(row_count_text(0), started, timed)
            return
        types = ([_OP_TYPE] if show_kind else []) + list(schema.types)
        if streaming:
            # Flink's streaming tableau: widths by type, long values cut at max-width.
            widths = column_widths(names, [], max_width, types)
        elif show_kind:
            widths = column_widths(names, sample, max_width, None if complete else types)
        else:
            # A batch value is never cut: the sample's widths, the type's widest value
            # when more rows follow, and the printer widens a column for a wider value.
            widths = column_widths(names, sample, None)
            if not complete:
                widths = [max(w, bounded_width(t) or 0) for w, t in zip(widths, types, strict=True)]
        if show_kind:
            widths[0] = 2
        grow = not streaming and not show_kind
        printer = TableauPrinter(self.terminal, names, widths, grow=grow)
        printer.header()
        printer.rows(sample)
        sample.clear()
        try:
            if not complete:
                for page in chain:
                    printer.rows(_with_kind(page) if show_kind else page.rows)
        except _Cancelled:
            printer.end()
            self.terminal.info(f"Query cancelled after {printer.count} rows.")
            raise _AlreadyReported from None
        except Exception:
            printer.end()  # the table is closed before the error is reported
            raise
        printer.end()
        if show_kind:
            self._footer(f"Received a total of {printer.count} rows", started, timed)
        else:
            self._footer(row_count_text(printer.count), started, timed)

    def _footer(self, text: str, started: float, timed: bool) -> None:
        if timed and self.option(options.DISPLAY_PRINT_TIME_COST):
            text += f" ({time.monotonic() - started:.2f} seconds)"
        self.terminal.line(text)
        self.terminal.flush()


class _AlreadyReported(_Cancelled):
    """Cancelled after partial output that already said so."""


def _chain(first: Page, rest: Iterator[Page]) -> Iterator[Page]:
    yield first
    if first.result_type is not ResultType.EOS:
        yield from rest


def _drain(first: Page, pages: Iterator[Page]) -> None:
    if first.result_type is not ResultType.EOS:
        for _ in pages:
            pass


def _with_kind(page: Page) -> list[TextRow]:
    return [[kind.value, *row] for kind, row in zip(page.kinds, page.rows, strict=True)]


def _rows_of(first: Page, pages: Iterator[Page]) -> Iterator[Sequence[tuple[RowKind, TextRow]]]:
    for page in _chain(first, pages):
        if page.rows:
            yield list(zip(page.kinds, page.rows, strict=True))
