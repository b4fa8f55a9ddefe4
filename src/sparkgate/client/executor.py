"""The one interface the SQL client talks to, whatever runs the statements.

Two executors implement it and behave identically: :class:`~sparkgate.client.
embedded.EmbeddedExecutor` adapts any in-process ``GatewayService`` and
:class:`~sparkgate.client.rest.RestExecutor` speaks Flink's SQL Gateway REST
protocol. Results cross this interface as pages of PLAIN_TEXT fields (Flink's
``RowDataToStringConverter`` forms), so printers never see Arrow or JSON and
never hold more than the page they print.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from sparkgate.api.errors import GatewayError
from sparkgate.api.handles import OperationHandle
from sparkgate.api.results import ResultKind, ResultType, RowKind
from sparkgate.api.service import OperationProgress
from sparkgate.api.types import ResultSchema

__all__ = ["ConnectionLostError", "Executor", "Page", "RenderError", "TextRow"]

TextRow = list[str | None]
"""One row's fields as Flink prints them; None is SQL NULL."""


class ConnectionLostError(GatewayError):
    """The gateway could not be reached, or answered with something that is not the protocol."""


class RenderError(GatewayError):
    """A fetched page holds values the client could not turn into text.

    The statement fails like any other; the client goes on.
    """


@dataclass(frozen=True)
class Page:
    """One fetched page: ``rows`` and their ``kinds`` are parallel lists.

    ``next_token`` is None at end of stream. NOT_READY pages carry no rows and
    the same token to ask again. ``warnings`` are for the user (e.g. the time
    zone values print in is a fallback).
    """

    result_type: ResultType
    next_token: int | None
    schema: ResultSchema = field(default_factory=ResultSchema)
    rows: Sequence[TextRow] = ()
    kinds: Sequence[RowKind] = ()
    is_query_result: bool = False
    result_kind: ResultKind = ResultKind.SUCCESS
    job_id: str | None = None
    extra: dict[str, str] = field(default_factory=dict, compare=False)
    warnings: tuple[str, ...] = ()


@runtime_checkable
class Executor(Protocol):
    """A session on some gateway, as the client needs it.

    ``open`` starts the session with the start-up properties and jars;
    ``close`` is idempotent. Errors are :class:`GatewayError` subclasses; a
    failed statement is an :class:`~sparkgate.api.errors.ExecutionError`
    whose ``causes`` run outermost first.
    """

    @property
    def description(self) -> str:
        """Where statements run, for the banner (``embedded Spark 4.0.1``)."""
        ...

    def open(self) -> None: ...

    def close(self) -> None: ...

    def heartbeat(self) -> None: ...

    def session_config(self) -> dict[str, str]: ...

    def configure(self, statement: str) -> None:
        """Run an initialization statement (SET, RESET, DDL, USE, ADD JAR...)."""
        ...

    def submit(self, statement: str) -> OperationHandle: ...

    def fetch(self, operation: OperationHandle, token: int, max_rows: int, wait: float) -> Page:
        """Fetch ``token``; ``wait`` bounds how long to wait for rows (a long poll)."""
        ...

    def progress(self, operation: OperationHandle) -> OperationProgress | None:
        """Spark work done so far, or None when the gateway cannot say."""
        ...

    def cancel(self, operation: OperationHandle) -> None: ...

    def close_operation(self, operation: OperationHandle) -> None: ...

    def complete(self, statement: str, position: int) -> list[str]: ...
