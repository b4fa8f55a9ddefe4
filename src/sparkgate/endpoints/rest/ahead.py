"""Result pages read and encoded one page ahead of the client.

A client reading a large result spends about as long parsing a page as the
gateway spends encoding it; done one after the other, each waits for the
other. Once a page is answered, the endpoint fetches and encodes the next
one on a worker thread while the client parses, so the client's next request
finds it ready: at most one page ahead per operation, only after a page
with rows (never after "not ready" or the end of the stream).

Nothing is lost when a page read ahead is dropped (the operation closed, too
many waiting, another row format asked for): the service keeps the pages it
gave last (``ResultFetcher``), so the endpoint asks it for the same token
again and encodes that page anew.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.responses import Response

from sparkgate.api.handles import OperationHandle

__all__ = ["Answer", "PagesAhead", "Render"]


@dataclass(frozen=True)
class Answer:
    """A page's answer, and the token to read ahead after it (None: none)."""

    response: Response
    read_on: int | None


#: Fetches and encodes a page on a worker thread.
Render = Callable[[], Awaitable[Answer]]


@dataclass(frozen=True)
class _Key:
    operation: OperationHandle
    token: int
    row_format: str


class PagesAhead:
    """The pages read ahead, one per operation, at most ``limit`` in all."""

    def __init__(self, limit: int = 1024) -> None:
        self._limit = limit
        self._tasks: OrderedDict[_Key, asyncio.Task[Answer]] = OrderedDict()
        self._by_operation: dict[OperationHandle, _Key] = {}

    def take(
        self, operation: OperationHandle, token: int, row_format: str
    ) -> Awaitable[Answer] | None:
        """The answer read ahead for this request, or None (then fetch as usual)."""
        key = _Key(operation, token, row_format)
        task = self._tasks.pop(key, None)
        if task is None:
            self.drop(operation)  # another token or format: the page ahead is not this one
            return None
        self._by_operation.pop(operation, None)
        return task

    def start(
        self, operation: OperationHandle, token: int, row_format: str, render: Render
    ) -> None:
        """Fetch and encode page ``token`` now, for the client's next request."""
        self.drop(operation)
        key = _Key(operation, token, row_format)
        task = asyncio.ensure_future(render())
        task.add_done_callback(_quiet)
        self._tasks[key] = task
        self._by_operation[operation] = key
        while len(self._tasks) > self._limit:
            old, _ = self._tasks.popitem(last=False)
            self._by_operation.pop(old.operation, None)

    def drop(self, operation: OperationHandle) -> None:
        """Forget the page read ahead for ``operation`` (closed, or not wanted)."""
        key = self._by_operation.pop(operation, None)
        if key is not None:
            self._tasks.pop(key, None)


def _quiet(task: asyncio.Task[Answer]) -> None:
    """A page read ahead that failed fails the request that takes it, or nobody's:
    never "exception was never retrieved"."""
    if not task.cancelled():
        with contextlib.suppress(BaseException):
            task.exception()
