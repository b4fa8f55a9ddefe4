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
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field

import pyarrow as pa

from sparkgate.api.errors import InvalidTokenError
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import FetchOrientation, ResultType
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


@dataclass
class _State:
    session: uuid.UUID
    replay: bool
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
    ) -> None:
        self.service = service
        self.fetch_timeout = fetch_timeout
        self.max_rows = max_rows
        self.replay_max_rows = replay_max_rows
        self._states: OrderedDict[uuid.UUID, _State] = OrderedDict()
        self._lock = threading.Lock()

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
    ) -> Page:
        """The next page (``first``: from the first row again)."""
        limit = max(1, min(max_rows if max_rows > 0 else 1000, self.max_rows))
        state = self.track(session, operation, replay=is_metadata)
        with state.lock:
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
            return self._from_service(session, operation, state, limit)

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

    def _from_service(
        self, session: SessionHandle, operation: OperationHandle, state: _State, limit: int
    ) -> Page:
        start = state.cursor
        if state.end_of_stream and state.schema is not None:
            return Page(state.schema, (), start, False)
        deadline = time.monotonic() + self.fetch_timeout
        while True:
            remaining = max(deadline - time.monotonic(), 0.0)
            page = self.service.fetch_results_by_orientation(
                session, operation, FetchOrientation.FORWARD, limit, wait=min(remaining, _POLL)
            )
            if page.result_type is not ResultType.NOT_READY:
                state.schema = page.schema
            rows = page.num_rows
            if page.result_type is ResultType.EOS or rows:
                break
            if time.monotonic() >= deadline:
                if state.schema is None:
                    state.schema = self.service.get_operation_result_schema(
                        session, operation, timeout=0.0
                    )
                return Page(state.schema, (), start, True)
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
