"""The fetch-token protocol over a :class:`ResultBuffer` (FLIP-91 ResultFetcher).

Token N returns the next page and advances to N+1; N-1 replays the page just
returned (a client that lost a response can ask again); anything else is an
error. The orientation API walks the same cursor: FORWARD is "the next token",
BACKWARD replays the last page, once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from sparkgate.api.errors import InvalidTokenError
from sparkgate.api.results import FetchOrientation, ResultKind, ResultSet, ResultType
from sparkgate.api.types import ResultSchema
from sparkgate.service.result.buffer import ResultBuffer

__all__ = ["ResultFetcher", "ResultTraits"]


@dataclass(frozen=True)
class ResultTraits:
    """Facts about a result that every page repeats."""

    is_query_result: bool = False
    result_kind: ResultKind = ResultKind.SUCCESS
    job_id: str | None = None


class ResultFetcher:
    def __init__(self, schema: ResultSchema, buffer: ResultBuffer, traits: ResultTraits) -> None:
        self.schema = schema
        self.buffer = buffer
        self.traits = traits
        self._next_token = 0
        self._last: ResultSet | None = None
        self._stepped_back = False
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
            raise InvalidTokenError(
                f"Invalid fetch token {token}: expecting {self._next_token} for the next "
                f"page or {self._next_token - 1} to fetch the last page again."
                if self._next_token > 0
                else f"Invalid fetch token {token}: expecting 0 for the first page."
            )

    def fetch_orientation(
        self, orientation: FetchOrientation, max_rows: int, wait: float = 0.0
    ) -> ResultSet:
        if orientation is FetchOrientation.FORWARD:
            with self._lock:
                self._stepped_back = False
            return self.fetch(self._next_token, max_rows, wait)
        with self._lock:
            if self._last is None or self._stepped_back:
                raise InvalidTokenError("Can only fetch BACKWARD once, to the page fetched last.")
            self._stepped_back = True
            return self._last

    def _advance(self, max_rows: int, wait: float) -> ResultSet:
        take = self.buffer.take(max_rows, wait)
        eos = take.end_of_stream and take.num_rows == 0
        page = ResultSet(
            result_type=ResultType.EOS if eos else ResultType.PAYLOAD,
            next_token=None if eos else self._next_token + 1,
            schema=self.schema,
            batches=take.batches,
            kinds=take.kinds,
            is_query_result=self.traits.is_query_result,
            result_kind=self.traits.result_kind,
            job_id=self.traits.job_id,
        )
        self._last = page
        self._next_token += 1
        return page
