"""The full-screen table view (``sql-client.execution.result-mode = table``).

Rows stream in on a background thread while the user reads: the view
fetches ahead only about three screens past what is shown, so a huge result
is never read in full unless the user goes to its end (``G`` loads the rest
and follows the end as rows arrive). It keeps at most ``max_rows`` rows;
beyond that the oldest are dropped (as Flink's table mode does). Columns are
as wide as the widest value loaded so far (values are not cut), each at most
the screen's width; left/right scroll across columns. Keys: arrows/j/k
scroll, PgUp/PgDn/space/b page, g/G first and last row, left/right move
across columns, / search, n/N next/previous match, q or Esc leave, Ctrl-C
cancels a running query and leaves.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Iterator, Sequence

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition, has_focus
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import BufferControl, ConditionalContainer, HSplit, Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from sparkgate.api.errors import GatewayError
from sparkgate.api.results import RowKind
from sparkgate.api.types import ResultSchema
from sparkgate.client.client import TableViewOutcome
from sparkgate.client.executor import TextRow
from sparkgate.client.tableau import NULL_TEXT, bounded_width
from sparkgate.client.terminal import display_width

__all__ = ["TableView", "run_table_view"]

log = logging.getLogger(__name__)

_STYLE = Style.from_dict(
    {
        "header": "bold reverse",
        "status": "reverse",
        "match": "bg:ansiyellow fg:ansiblack",
        "search": "",
    }
)
_AHEAD_SCREENS = 3


def _fit_left(text: str, width: int) -> str:
    cells = display_width(text)
    if cells <= width:
        return text + " " * (width - cells)
    out: list[str] = []
    used = 0
    for ch in text:
        w = display_width(ch)
        if used + w > width - 3:
            break
        out.append(ch)
        used += w
    return "".join(out) + "..." + " " * (width - 3 - used)


class TableView:
    """A pageable, searchable view of a streaming result."""

    def __init__(
        self,
        schema: ResultSchema,
        pages: Iterator[Sequence[tuple[RowKind, TextRow]]],
        *,
        max_rows: int,
        cancel: Callable[[], None] | None = None,
        input: Input | None = None,
        output: Output | None = None,
    ) -> None:
        self.schema = schema
        self._pages = pages
        self._cancel = cancel
        self.rows: collections.deque[tuple[RowKind, TextRow]] = collections.deque(maxlen=max_rows)
        self.dropped = 0  # rows that fell off the front
        self.top = 0  # absolute index of the first row shown
        self.column = 0  # first column shown
        self.done = False
        self.error: str | None = None
        self.search_term = ""
        # Content widths (uncapped): names, then every value loaded; the screen caps them.
        self._widths = [
            max(display_width(name), bounded_width(t) or 0)
            for name, t in zip(schema.names, schema.types, strict=True)
        ]
        self._follow_end = False  # after G: load the rest and keep showing the end
        self._lock = threading.Lock()
        self._want_more = threading.Event()
        self._want_more.set()
        self._stop = threading.Event()
        self._search = Buffer(multiline=False, accept_handler=self._accept_search)
        self._searching = False
        self.app: Application[None] = Application(
            layout=self._layout(),
            key_bindings=self._bindings(),
            full_screen=True,
            style=_STYLE,
            input=input,
            output=output,
            mouse_support=False,
        )

    # -- data -------------------------------------------------------------------------
    @property
    def total(self) -> int:
        """Rows received so far (including dropped ones)."""
        return self.dropped + len(self.rows)

    def _apply(self, kind: RowKind, row: TextRow) -> None:
        """Materialise the changelog (FLIP-24's materialized result stream).

        An UPDATE_BEFORE or DELETE removes the latest equal row; a retraction
        of a row that already fell off the front of the bounded view is moot.
        """
        if kind in (RowKind.UPDATE_BEFORE, RowKind.DELETE):
            for index in range(len(self.rows) - 1, -1, -1):
                if self.rows[index][1] == row:
                    del self.rows[index]
                    return
            return
        if len(self.rows) == self.rows.maxlen:
            self.dropped += 1
        self.rows.append((RowKind.INSERT, row))

    def _fetch(self) -> None:
        try:
            while not self._stop.is_set():
                self._want_more.wait()
                if self._stop.is_set():
                    break
                page = next(self._pages, None)
                if page is None:
                    break
                widths = self._measure(page)
                with self._lock:
                    self._widths = widths
                    for kind, row in page:
                        self._apply(kind, row)
                    self.top = min(max(self.top, self.dropped), self.total)
                    if self._follow_end:
                        self.top = self._last_top()
                self._update_want()
                self.app.invalidate()
        except GatewayError as exc:
            self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        except Exception as exc:  # the view must close cleanly whatever happened
            log.warning("Fetching rows for the table view failed", exc_info=True)
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.done = True
            self.app.invalidate()

    def _measure(self, page: Sequence[tuple[RowKind, TextRow]]) -> list[int]:
        """The column widths once ``page``'s values are in: they only grow."""
        widths = list(self._widths)
        for _kind, row in page:
            for i, value in enumerate(row):
                cells = len(NULL_TEXT) if value is None else display_width(value)
                if cells > widths[i]:
                    widths[i] = cells
        return widths

    def _last_top(self) -> int:
        return max(self.total - self._height(), self.dropped)

    def _height(self) -> int:
        try:
            rows = self.app.output.get_size().rows
        except Exception:
            rows = 24
        return max(rows - 4, 1)

    def _update_want(self) -> None:
        limit = min(self._height() * (_AHEAD_SCREENS + 1), self.rows.maxlen or 1)
        if self._follow_end or self.total - self.top < limit:
            self._want_more.set()
        else:
            self._want_more.clear()

    # -- rendering ---------------------------------------------------------------------
    def _screen_width(self) -> int:
        try:
            return int(self.app.output.get_size().columns)
        except Exception:
            log.debug("No terminal size", exc_info=True)
            return 120

    def _visible_columns(self) -> list[tuple[int, int]]:
        """``(column, width)`` of the columns on screen; a column is at most a screen wide."""
        screen = self._screen_width()
        cap = max(screen - 3, 4)
        used = 0
        shown: list[tuple[int, int]] = []
        for i in range(self.column, len(self._widths)):
            width = min(self._widths[i], cap)
            if shown and used + width + 3 > screen:
                break
            shown.append((i, width))
            used += width + 3
        return shown

    def _header(self) -> StyleAndTextTuples:
        names = self.schema.names
        cells = [_fit_left(names[i], width) for i, width in self._visible_columns()]
        return [("class:header", " " + " | ".join(cells) + " ")]

    def _body(self) -> StyleAndTextTuples:
        out: StyleAndTextTuples = []
        with self._lock:
            cols = self._visible_columns()
            start = self.top - self.dropped
            visible = list(self.rows)[start : start + self._height()] if start >= 0 else []
        term = self.search_term.lower()
        for _kind, row in visible:
            cells = [
                _fit_left(NULL_TEXT if row[i] is None else str(row[i]), width) for i, width in cols
            ]
            line = " " + " | ".join(cells) + " "
            if term and term in line.lower():
                out.append(("class:match", line))
            else:
                out.append(("", line))
            out.append(("", "\n"))
        return out

    def _status(self) -> StyleAndTextTuples:
        height = self._height()
        first = self.top + 1 if self.total else 0
        last = min(self.top + height, self.total)
        if self.done:
            state = ""
        elif self._want_more.is_set():
            state = " (loading...)"
        else:
            state = " (more rows: scroll or G)"
        if self.error:
            state = f" ERROR: {self.error}"
        pages = max((self.total + height - 1) // height, 1)
        page = pages if self.top >= self._last_top() else self.top // height + 1
        dropped = f", {self.dropped} oldest dropped" if self.dropped else ""
        text = (
            f" Rows {first}-{last} of {self.total}{state}{dropped} | Page {page}/{pages}"
            f"{'+' if not self.done else ''} | q quit  / search  n/N next/prev  "
            "arrows PgUp/PgDn g/G "
        )
        return [("class:status", text)]

    def _layout(self) -> Layout:
        searching = Condition(lambda: self._searching)
        self._body_window = Window(
            FormattedTextControl(self._body, focusable=True), wrap_lines=False
        )
        return Layout(
            HSplit(
                [
                    Window(FormattedTextControl(self._header), height=1),
                    self._body_window,
                    Window(FormattedTextControl(self._status), height=1),
                    ConditionalContainer(
                        HSplit(
                            [
                                Window(
                                    BufferControl(self._search),
                                    height=1,
                                    get_line_prefix=lambda _l, _w: [("", "/")],
                                )
                            ]
                        ),
                        filter=searching,
                    ),
                ]
            ),
            focused_element=self._body_window,
        )

    # -- navigation ---------------------------------------------------------------------
    def scroll(self, delta: int) -> None:
        with self._lock:
            self._follow_end = False
            self.top = min(max(self.top + delta, self.dropped), self._last_top())
        self._update_want()

    def to_end(self) -> None:
        """The last row: loads the rest of the result and keeps showing its end."""
        with self._lock:
            self._follow_end = not self.done
            self.top = self._last_top()
        self._update_want()
        self.app.invalidate()

    def find(self, forward: bool = True) -> bool:
        """Move to the next (or previous) row containing the search term."""
        term = self.search_term.lower()
        if not term:
            return False
        with self._lock:
            rows = list(self.rows)
            base = self.dropped
        order = (
            range(self.top - base + 1, len(rows)) if forward else range(self.top - base - 1, -1, -1)
        )
        for index in order:
            kind, row = rows[index]
            text = " ".join(NULL_TEXT if v is None else v for v in row).lower()
            if term in text or term == kind.value.lower():
                with self._lock:
                    self._follow_end = False
                    self.top = base + index
                self._update_want()
                return True
        return False

    def _accept_search(self, buffer: Buffer) -> bool:
        self.search_term = buffer.text
        self._searching = False
        self.app.layout.focus(self._body_window)
        if not self.find(True):
            self.top = max(self.top, self.dropped)
        return False

    def _bindings(self) -> KeyBindings:
        kb = KeyBindings()
        not_searching = ~has_focus(self._search)

        def page() -> int:
            return self._height()

        @kb.add("down", filter=not_searching)
        @kb.add("j", filter=not_searching)
        def _down(_e: KeyPressEvent) -> None:
            self.scroll(1)

        @kb.add("up", filter=not_searching)
        @kb.add("k", filter=not_searching)
        def _up(_e: KeyPressEvent) -> None:
            self.scroll(-1)

        @kb.add("pagedown", filter=not_searching)
        @kb.add(" ", filter=not_searching)
        def _page_down(_e: KeyPressEvent) -> None:
            self.scroll(page())

        @kb.add("pageup", filter=not_searching)
        @kb.add("b", filter=not_searching)
        def _page_up(_e: KeyPressEvent) -> None:
            self.scroll(-page())

        @kb.add("g", filter=not_searching)
        @kb.add("home", filter=not_searching)
        def _first(_e: KeyPressEvent) -> None:
            self.scroll(-self.total)

        @kb.add("G", filter=not_searching)
        @kb.add("end", filter=not_searching)
        def _last(_e: KeyPressEvent) -> None:
            self.to_end()

        @kb.add("right", filter=not_searching)
        @kb.add("l", filter=not_searching)
        def _right(_e: KeyPressEvent) -> None:
            self.column = min(self.column + 1, max(len(self._widths) - 1, 0))

        @kb.add("left", filter=not_searching)
        @kb.add("h", filter=not_searching)
        def _left(_e: KeyPressEvent) -> None:
            self.column = max(self.column - 1, 0)

        @kb.add("/", filter=not_searching)
        def _search(event: KeyPressEvent) -> None:
            self._searching = True
            self._search.reset()
            event.app.layout.focus(self._search)

        @kb.add("escape", filter=has_focus(self._search))
        def _search_abort(event: KeyPressEvent) -> None:
            self._searching = False
            event.app.layout.focus(self._body_window)

        @kb.add("n", filter=not_searching)
        def _next(_e: KeyPressEvent) -> None:
            self.find(True)

        @kb.add("N", filter=not_searching)
        def _previous(_e: KeyPressEvent) -> None:
            self.find(False)

        @kb.add("q", filter=not_searching)
        @kb.add("escape", filter=not_searching)
        def _quit(event: KeyPressEvent) -> None:
            event.app.exit()

        @kb.add("c-c")
        def _interrupt(event: KeyPressEvent) -> None:
            if not self.done and self._cancel is not None:
                self._cancel()
            event.app.exit()

        return kb

    def run(self) -> TableViewOutcome:
        fetcher = threading.Thread(target=self._fetch, name="sql-client-table-view", daemon=True)
        fetcher.start()
        try:
            self.app.run()
        finally:
            complete = self.done and self.error is None
            self._stop.set()
            self._want_more.set()
            if not self.done and self._cancel is not None:
                self._cancel()  # leaving early: stop the query's Spark work
            fetcher.join(timeout=10)
        return TableViewOutcome(self.total, complete, self.error)


def run_table_view(
    schema: ResultSchema,
    pages: Iterator[Sequence[tuple[RowKind, TextRow]]],
    *,
    max_rows: int,
    cancel: Callable[[], None] | None = None,
) -> TableViewOutcome:
    """The :data:`~sparkgate.client.client.TableViewFactory` the REPL uses."""
    view = TableView(schema, pages, max_rows=max_rows, cancel=cancel)
    return view.run()
