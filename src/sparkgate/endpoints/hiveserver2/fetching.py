"""FetchResults over the service's bounded result buffer, with FETCH_FIRST.

HiveServer2 clients stop reading at the first empty page, so a FETCH_NEXT
waits (up to ``fetch-timeout``) until the buffer has rows or the result
ended, rather than answering an empty page while Spark is still busy.

FETCH_FIRST restarts a result from its first row. Unless it keeps results
(``sql-gateway.result.spool``, then it reads them again itself), the service
keeps only one page for a replay, so the endpoint keeps what FETCH_FIRST needs, but only
where a client can use it, and bounded: for metadata results (small, and
what JDBC tools scroll), and for a statement whose client's *first* fetch
was FETCH_FIRST (Hive JDBC does that after ``beforeFirst()``). Up to
``fetch-first.max-rows`` rows are kept; past that, or for any other result
already read past its first page, FETCH_FIRST fails with a clear message.
The per-operation bookkeeping is bounded too (least recently used entries
beyond :data:`MAX_TRACKED` are dropped).

A JDBC client decodes a page about as long as the endpoint takes to fetch
and encode one. Once a full page of a statement is answered, the next one is
fetched from the service and encoded (``encode``) on a worker thread while
the client decodes, so the client's next FETCH_NEXT finds it ready. Never for
results kept for FETCH_FIRST, and never more than one page ahead.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from sparkgate.api.errors import InvalidTokenError
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import FetchOrientation, ResultSet, ResultType
from sparkgate.api.service import GatewayService
from sparkgate.api.types import ResultSchema
from sparkgate.endpoints.hiveserver2.errors import HiveServer2Error

__all__ = ["MAX_TRACKED", "Page", "ResultPager"]

#: Operations whose fetch position the endpoint remembers at once.
MAX_TRACKED = 4096
_POLL = 1.0


@dataclass(frozen=True)
class Page:
    schema: ResultSchema
    batches: tuple[pa.RecordBatch, ...]
    start_offset: int
    has_more: bool
    #: The page as ``encode`` made it, when that ran ahead of the request.
    encoded: Any = None


@dataclass(frozen=True)
class _Ahead:
    """The next page, read from the service on a worker thread (and encoded)."""

    limit: int
    future: Future[tuple[ResultSet | None, Any]]


@dataclass
class _State:
    session: uuid.UUID
    replay: bool
    ahead: _Ahead | None = None
    pending: ResultSet | None = None  # read ahead, not handed out: the next rows
    lock: threading.Lock = field(default_factory=threading.Lock)
    schema: ResultSchema | None = None
    cached: list[pa.RecordBatch] = field(default_factory=list)
    cached_rows: int = 0
    overflowed: bool = False
    end_of_stream: bool = False
    cursor: int = 0  # rows handed to the client since the last FETCH_FIRST
    served: int = 0  # rows read from the service


class ResultPager:
    def __init__(
        self,
        service: GatewayService,
        *,
        fetch_timeout: float,
        max_rows: int,
        replay_max_rows: int,
        read_ahead: ThreadPoolExecutor | None = None,
    ) -> None:
        self.service = service
        self.fetch_timeout = fetch_timeout
        self.max_rows = max_rows
        self.replay_max_rows = replay_max_rows
        self._states: OrderedDict[uuid.UUID, _State] = OrderedDict()
        self._lock = threading.Lock()
        self._read_ahead = read_ahead

    # -- bookkeeping -------------------------------------------------------------
    def track(self, session: SessionHandle, operation: OperationHandle, replay: bool) -> _State:
        with self._lock:
            state = self._states.get(operation.identifier)
            if state is None:
                state = _State(session.identifier, replay and self.replay_max_rows > 0)
                self._states[operation.identifier] = state
                while len(self._states) > MAX_TRACKED:
                    self._states.popitem(last=False)
            else:
                self._states.move_to_end(operation.identifier)
            return state

    def forget(self, operation: OperationHandle) -> None:
        with self._lock:
            self._states.pop(operation.identifier, None)

    def forget_session(self, session: SessionHandle) -> None:
        with self._lock:
            for key in [k for k, s in self._states.items() if s.session == session.identifier]:
                del self._states[key]

    @property
    def tracked(self) -> int:
        return len(self._states)

    # -- fetching ----------------------------------------------------------------
    def fetch(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        *,
        first: bool,
        max_rows: int,
        is_metadata: bool,
        encode: Callable[[Page], Any] | None = None,
    ) -> Page:
        """The next page (``first``: from the first row again). With ``encode``, a
        full page is followed by the next one read and encoded ahead."""
        limit = max(1, min(max_rows if max_rows > 0 else 1000, self.max_rows))
        state = self.track(session, operation, replay=is_metadata)
        with state.lock:
            ahead, state.ahead = state.ahead, None
            if ahead is not None:
                taken, encoded = ahead.future.result()  # its failure is this fetch's
                if first or ahead.limit != limit or state.replay:
                    # Not the page asked for: FETCH_FIRST re-reads the service's kept
                    # result (rows read ahead included); another size asks again.
                    state.pending = taken if taken is not None and taken.num_rows else None
                else:
                    page = self._account(state, taken, session, operation)
                    page = replace(page, encoded=encoded)
                    self._maybe_ahead(session, operation, state, page, limit, encode)
                    return page
            if first:
                if state.served == 0:
                    state.replay = state.replay or self.replay_max_rows > 0
                elif not state.replay or state.overflowed:
                    kept = self._first_again(session, operation, state, limit)
                    if kept is not None:
                        return kept
                    reason = (
                        f"more than fetch-first.max-rows ({self.replay_max_rows}) rows were read"
                        if state.overflowed
                        else "its client read past the first page with FETCH_NEXT first"
                    )
                    raise HiveServer2Error(
                        "FETCH_FIRST cannot restart this result: " + reason + ". Run the "
                        "statement again to read it from the start (or keep results: "
                        "sql-gateway.result.spool).",
                        "HY106",
                    )
                state.cursor = 0
            if state.replay and state.cursor < state.cached_rows:
                return self._from_cache(state, limit)
            page = self._from_service(session, operation, state, limit)
            self._maybe_ahead(session, operation, state, page, limit, encode)
            return page

    def _maybe_ahead(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        state: _State,
        page: Page,
        limit: int,
        encode: Callable[[Page], Any] | None,
    ) -> None:
        """Read the next page ahead after a full one (lock held)."""
        rows = sum(b.num_rows for b in page.batches)
        if encode is None or self._read_ahead is None or state.replay:
            return
        if not page.has_more or rows < limit or state.pending is not None:
            return
        schema = page.schema
        start = state.cursor

        def read() -> tuple[ResultSet | None, Any]:
            taken = self._service_page(session, operation, limit)
            if taken is None or not taken.num_rows:
                return taken, None
            batches = tuple(b for b in taken.batches if b.num_rows)
            more = taken.result_type is not ResultType.EOS
            return taken, encode(Page(schema, batches, start, more))

        with contextlib.suppress(RuntimeError):  # the endpoint is stopping: no page ahead
            state.ahead = _Ahead(limit, self._read_ahead.submit(read))

    def _first_again(
        self, session: SessionHandle, operation: OperationHandle, state: _State, limit: int
    ) -> Page | None:
        """FETCH_FIRST from the result the service keeps (result spooling); None when
        it keeps none. The service then goes on where the result had got to."""
        try:
            page = self.service.fetch_results_by_orientation(
                session, operation, FetchOrientation.FIRST, limit
            )
        except InvalidTokenError:
            return None
        state.replay = False
        state.end_of_stream = False
        state.pending = None  # the service reads the rows read ahead again, too
        state.schema = page.schema
        state.cursor = page.num_rows
        batches = tuple(b for b in page.batches if b.num_rows)
        return Page(page.schema, batches, 0, page.result_type is not ResultType.EOS)

    def _from_cache(self, state: _State, limit: int) -> Page:
        assert state.schema is not None
        table = pa.Table.from_batches(state.cached)
        piece = table.slice(state.cursor, limit)
        start = state.cursor
        state.cursor += piece.num_rows
        batches = tuple(piece.combine_chunks().to_batches()) if piece.num_rows else ()
        return Page(state.schema, batches, start, True)

    def _service_page(
        self, session: SessionHandle, operation: OperationHandle, limit: int
    ) -> ResultSet | None:
        """The service's next page with rows, or its end; None when none came within
        ``fetch_timeout``. Touches no state: it also runs ahead, off the lock."""
        deadline = time.monotonic() + self.fetch_timeout
        while True:
            remaining = max(deadline - time.monotonic(), 0.0)
            page = self.service.fetch_results_by_orientation(
                session, operation, FetchOrientation.FORWARD, limit, wait=min(remaining, _POLL)
            )
            if page.result_type is ResultType.EOS or page.num_rows:
                return page
            if time.monotonic() >= deadline:
                return None

    def _from_service(
        self, session: SessionHandle, operation: OperationHandle, state: _State, limit: int
    ) -> Page:
        if state.pending is not None:
            taken, state.pending = _split(state.pending, limit)
            return self._account(state, taken, session, operation)
        if state.end_of_stream and state.schema is not None:
            return Page(state.schema, (), state.cursor, False)
        return self._account(
            state, self._service_page(session, operation, limit), session, operation
        )

    def _account(
        self,
        state: _State,
        page: ResultSet | None,
        session: SessionHandle,
        operation: OperationHandle,
    ) -> Page:
        """A page taken from the service, handed to the client (lock held)."""
        start = state.cursor
        if page is None:
            if state.schema is None:
                state.schema = self.service.get_operation_result_schema(
                    session, operation, timeout=0.0
                )
            return Page(state.schema, (), start, True)
        state.schema = page.schema
        rows = page.num_rows
        batches = tuple(b for b in page.batches if b.num_rows)
        state.served += rows
        state.cursor += rows
        if page.result_type is ResultType.EOS:
            state.end_of_stream = True
        if state.replay and not state.overflowed:
            if state.cached_rows + rows > self.replay_max_rows:
                state.overflowed = True
                state.cached = []
                state.cached_rows = 0
            else:
                state.cached.extend(batches)
                state.cached_rows += rows
        assert state.schema is not None
        return Page(state.schema, batches, start, page.result_type is not ResultType.EOS)


def _split(page: ResultSet, limit: int) -> tuple[ResultSet, ResultSet | None]:
    """The first ``limit`` rows of a page, and the rest (None: no rest)."""
    if page.num_rows <= limit:
        return page, None
    table = pa.Table.from_batches([b for b in page.batches if b.num_rows])
    head = tuple(table.slice(0, limit).to_batches())
    rest = tuple(table.slice(limit).to_batches())
    return replace(page, batches=head), replace(page, batches=rest)
