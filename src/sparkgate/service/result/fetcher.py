"""The fetch-token protocol over a :class:`ResultBuffer` (FLIP-91 ResultFetcher).

Token N returns the next page and advances to N+1; N-1 replays the page just
returned (a client that lost a response can ask again), and so does N-2: the
REST endpoint reads one page ahead of its client (``endpoints.rest.ahead``), so
the page its client had last may be the one before. Anything else is an
error, unless the result is kept (result spooling, :mod:`.spool`): then any
page handed out before is given again. The orientation API walks the same
cursor: FORWARD is "the next token", BACKWARD replays the last page, once;
FIRST (a kept result only) reads the result again from its first row, then
goes on where the result had got to.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from sparkgate.api.errors import InvalidTokenError
from sparkgate.api.results import FetchOrientation, ResultKind, ResultSet, ResultType
from sparkgate.api.types import ResultSchema
from sparkgate.service.result.buffer import Take

if TYPE_CHECKING:
    import pyarrow as pa

    from sparkgate.service.result.spool import ResultSpool

__all__ = ["ResultFetcher", "ResultTraits", "RowSource"]


class RowSource(Protocol):
    """Where a fetcher's pages come from: a result buffer, or a kept result."""

    def take(self, max_rows: int, wait: float = 0.0) -> Take: ...

    def close(self) -> None: ...

    def fail(self, error: BaseException) -> None: ...


@dataclass(frozen=True)
class ResultTraits:
    """Facts about a result that every page repeats."""

    is_query_result: bool = False
    result_kind: ResultKind = ResultKind.SUCCESS
    job_id: str | None = None


class ResultFetcher:
    def __init__(
        self,
        schema: ResultSchema,
        buffer: RowSource,
        traits: ResultTraits,
        spool: ResultSpool | None = None,
        next_token: int = 0,
    ) -> None:
        self.schema = schema
        self.buffer = buffer
        self.traits = traits
        #: The result as kept on disk, its pages recorded (None: not kept).
        self.spool = spool
        self._next_token = next_token
        self._last: ResultSet | None = None
        self._previous: ResultSet | None = None  # the page before the last
        self._stepped_back = False
        # FIRST: the row a re-read of a kept result has got to (None: not re-reading).
        self._again: int | None = None
        self._lock = threading.Lock()

    @property
    def next_token(self) -> int:
        return self._next_token

    def fetch(self, token: int, max_rows: int, wait: float = 0.0) -> ResultSet:
        if max_rows < 1:
            raise ValueError(f"max_rows must be positive, got {max_rows}.")
        with self._lock:
            if token == self._next_token:
                return self._advance(max_rows, wait)
            if token == self._next_token - 1 and self._last is not None:
                return self._last
            if token == self._next_token - 2 and self._previous is not None:
                return self._previous
            kept = self._kept_page(token) if 0 <= token < self._next_token else None
            if kept is not None:
                return kept
            raise InvalidTokenError(
                f"Invalid fetch token {token}: expecting {self._next_token} for the next "
                f"page or {self._next_token - 1} to fetch the last page again."
                if self._next_token > 0
                else f"Invalid fetch token {token}: expecting 0 for the first page."
            )

    def fetch_orientation(
        self, orientation: FetchOrientation, max_rows: int, wait: float = 0.0
    ) -> ResultSet:
        if orientation is FetchOrientation.FIRST:
            with self._lock:
                if self.spool is None:
                    raise InvalidTokenError(
                        "This result cannot be read again from its first row: the gateway "
                        "keeps results only with sql-gateway.result.spool on."
                    )
                self._again = 0
                self._stepped_back = False
        if orientation in (FetchOrientation.FORWARD, FetchOrientation.FIRST):
            with self._lock:
                self._stepped_back = False
                again = self._read_again(max_rows)
            return again if again is not None else self.fetch(self._next_token, max_rows, wait)
        with self._lock:
            if self._last is None or self._stepped_back:
                raise InvalidTokenError("Can only fetch BACKWARD once, to the page fetched last.")
            self._stepped_back = True
            return self._last

    def _advance(self, max_rows: int, wait: float) -> ResultSet:
        take = self.buffer.take(max_rows, wait)
        eos = take.end_of_stream and take.num_rows == 0
        page = self._page(take.batches, take.kinds, self._next_token, eos)
        if self.spool is not None and take.kinds is None:
            self.spool.paged(take.num_rows, eos)
        self._previous, self._last = self._last, page
        self._next_token += 1
        return page

    def _page(
        self,
        batches: tuple[pa.RecordBatch, ...],
        kinds: tuple[Any, ...] | None,
        token: int,
        eos: bool,
    ) -> ResultSet:
        return ResultSet(
            result_type=ResultType.EOS if eos else ResultType.PAYLOAD,
            next_token=None if eos else token + 1,
            schema=self.schema,
            batches=batches,
            kinds=kinds,
            is_query_result=self.traits.is_query_result,
            result_kind=self.traits.result_kind,
            job_id=self.traits.job_id,
        )

    def _kept_page(self, token: int) -> ResultSet | None:
        """Page ``token`` again, from the kept result (lock held); None: not kept."""
        if self.spool is None:
            return None
        batches = self.spool.page(token)
        if batches is None:
            return None
        rows = sum(b.num_rows for b in batches)
        eos = rows == 0 and token == len(self.spool.pages) - 1 and self.spool.complete
        return self._page(tuple(batches), None, token, eos)

    def _read_again(self, max_rows: int) -> ResultSet | None:
        """The next page of a FIRST re-read (lock held); None once it has caught up
        with the rows handed out before (the result goes on from there)."""
        if self._again is None or self.spool is None:
            return None
        handed = self.spool.paged_rows
        if self._again >= handed:
            self._again = None
            return None
        batches = self.spool.read(self._again, min(max_rows, handed - self._again))
        if batches is None:
            self._again = None
            raise InvalidTokenError("This result was not kept: it cannot be read again.")
        self._again += sum(b.num_rows for b in batches)
        return self._page(tuple(batches), None, self._next_token - 1, False)
