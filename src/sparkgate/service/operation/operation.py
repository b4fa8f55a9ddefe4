"""One operation: its state machine, its result and its log.

The operation knows nothing of Spark: it runs an :data:`Executor` on a worker
thread inside a ``scope`` (where the session sets Spark job tags) and calls
``interrupt`` to stop Spark work on cancel, timeout and close. That keeps the
state machine testable with fakes.

A query moves to FINISHED as soon as its schema is known and its rows start
to flow (results are *ready*, as in Flink); the rows keep streaming into the
bounded buffer while clients fetch. A producer error after that point moves
FINISHED to ERROR, and the next fetch raises it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sparkgate.api.errors import (
    ExecutionError,
    GatewayError,
    IllegalStateError,
    InvalidTokenError,
    OperationNotFoundError,
)
from sparkgate.api.handles import OperationHandle
from sparkgate.api.results import FetchOrientation, OperationInfo, ResultSet, ResultType, RowKind
from sparkgate.api.status import OperationStatus, OperationType, check_transition
from sparkgate.api.types import ResultSchema
from sparkgate.service.result.buffer import BufferClosedError, ResultBuffer
from sparkgate.service.result.fetcher import ResultFetcher, ResultTraits
from sparkgate.sql.secrets import mask_secrets

if TYPE_CHECKING:
    import pyarrow as pa

    from sparkgate.service.result.spool import ResultSpool

__all__ = ["Execution", "Executor", "Operation"]

log = logging.getLogger(__name__)

_S = OperationStatus
_ACTIVE = frozenset({_S.INITIALIZED, _S.PENDING, _S.RUNNING})


@dataclass
class Execution:
    """What an executor hands back: the schema, and rows to stream.

    ``batches`` yields Arrow batches, each optionally with one row kind per
    row; it is closed (if it is a generator) when the operation stops early.
    """

    schema: ResultSchema
    traits: ResultTraits = field(default_factory=ResultTraits)
    batches: Iterable[tuple[pa.RecordBatch, tuple[RowKind, ...] | None]] = ()


Executor = Callable[["Operation"], Execution]

_INTERRUPT_EVERY_S = 0.5
_INTERRUPT_FOR_S = 300.0
# How long a log read waits for a finished result's teardown (a few py4j calls).
_SETTLE_S = 10.0


def _no_scope(_operation: Operation) -> AbstractContextManager[None]:
    return contextlib.nullcontext()


class Operation:
    def __init__(
        self,
        executor: Executor,
        *,
        operation_type: OperationType = OperationType.EXECUTE_STATEMENT,
        statement: str | None = None,
        buffer_rows: int = 100_000,
        buffer_bytes: int | None = None,
        timeout: float | None = None,
        scope: Callable[[Operation], AbstractContextManager[None]] = _no_scope,
        interrupt: Callable[[Operation], None] = lambda _op: None,
        explain: Callable[[BaseException], BaseException] = lambda exc: exc,
        on_end: Callable[[Operation], None] | None = None,
        on_close: Callable[[Operation, OperationStatus], None] | None = None,
        spool: Callable[[Operation, ResultSchema, ResultTraits], ResultSpool | None] | None = None,
    ) -> None:
        self.handle = OperationHandle.create()
        # Makes the file a query result is kept in (result spooling), or None.
        self._spool = spool
        #: Told when its work is done: ended, and its result no longer streaming.
        self.on_idle: Callable[[Operation], None] | None = None
        # Told once, when the operation first reaches an end state (metrics).
        self._on_end = on_end
        # Told once, when it is closed, with the status it had (the audit log).
        self._on_close = on_close
        # What a failure means (a broken connection to a dead engine: the engine's death).
        self._explain = explain
        self.type = operation_type
        self.statement = statement
        self.timeout = timeout if timeout and timeout > 0 else None
        self.created = time.time()
        self.started: float | None = None
        self.ended: float | None = None
        #: Rows handed to the client by fetches (a page fetched again counts again).
        self.rows_fetched = 0
        self._executor = executor
        self._buffer_rows = buffer_rows
        self._buffer_bytes = buffer_bytes
        self._scope = scope
        self._interrupt = interrupt
        self._status = _S.INITIALIZED
        self._cond = threading.Condition()
        self._fetcher: ResultFetcher | None = None
        self._error: BaseException | None = None
        self._producing = False
        self._running = False  # the executor's thread has not returned yet
        self._settling = False  # rows all given, the scope's teardown still running
        self._timer: threading.Timer | None = None
        self._log: list[str] = []
        self._log_cursor = 0
        self._log_lock = threading.Lock()

    @classmethod
    def of_kept_result(
        cls, handle: OperationHandle, fetcher: ResultFetcher, statement: str | None = None
    ) -> Operation:
        """A FINISHED operation serving a result kept by an earlier process (spooling)."""

        def kept(_operation: Operation) -> Execution:
            raise IllegalStateError("A kept result does not run again")

        operation = cls(kept, statement=statement)
        operation.handle = handle
        operation._fetcher = fetcher
        operation._status = _S.FINISHED
        operation.started = operation.ended = time.time()
        return operation

    @property
    def result_spool(self) -> ResultSpool | None:
        """The file its result is kept in (result spooling), if any."""
        fetcher = self._fetcher
        return None if fetcher is None else fetcher.spool

    # -- state ---------------------------------------------------------------
    @property
    def status(self) -> OperationStatus:
        return self._status

    @property
    def busy(self) -> bool:
        """Still working: not ended, or FINISHED while its result streams from Spark."""
        return not self._status.is_terminal or self._producing

    @property
    def error(self) -> BaseException | None:
        return self._error

    @property
    def job_tag(self) -> str:
        return f"sparkgate-{self.handle.identifier.hex}"

    def info(self) -> OperationInfo:
        return OperationInfo(
            status=self._status,
            type=self.type,
            has_result=self._fetcher is not None,
            error=self._error,
        )

    def _transition(self, target: OperationStatus, only_from: frozenset[_S] | None = None) -> bool:
        """Move to ``target``; the one place status changes.

        With ``only_from``, a status outside it means another thread won the
        race (cancel against finish): nothing moves and False is returned.
        Otherwise an edge the machine lacks is a bug and raises.
        """
        with self._cond:
            source = self._status
            if only_from is not None and source not in only_from:
                return False
            check_transition(source, target)
            self._status = target
            self._cond.notify_all()
        log.debug("Operation %s: %s -> %s", self.handle, source.value, target.value)
        if target.is_terminal and not source.is_terminal:
            self.ended = time.time()
        if self._on_end is not None and target.is_terminal and not source.is_terminal:
            try:
                self._on_end(self)
            except Exception:  # a metric must never fail a statement
                log.debug("on_end of operation %s failed", self.handle, exc_info=True)
        return True

    # -- running -------------------------------------------------------------
    def submit(self, run: Callable[[Callable[[], None]], None]) -> None:
        """Hand the operation to ``run`` (a worker pool's submit)."""
        self._start()
        run(self._run)

    def run_inline(self) -> None:
        """Run on the calling thread (configure-session is synchronous)."""
        self._start()
        self._run()

    def _start(self) -> None:
        self._transition(_S.PENDING)
        if self.timeout is not None:
            self._timer = threading.Timer(self.timeout, self._on_timeout)
            self._timer.daemon = True
            self._timer.start()

    def _run(self) -> None:
        if not self._transition(_S.RUNNING, only_from=frozenset({_S.PENDING})):
            return
        self.started = time.time()
        self._running = True
        execution: Execution | None = None
        try:
            with self._scope(self):
                execution = self._executor(self)
                buffer = ResultBuffer(self._buffer_rows, self._buffer_bytes)
                spool = None
                if self._spool is not None and execution.traits.is_query_result:
                    spool = self._spool(self, execution.schema, execution.traits)
                with self._cond:
                    self._fetcher = ResultFetcher(execution.schema, buffer, execution.traits, spool)
                    self._producing = True
                if not self._transition(_S.FINISHED, only_from=frozenset({_S.RUNNING})):
                    buffer.close()
                    return
                for batch, kinds in execution.batches:
                    if spool is not None:
                        if kinds is None:
                            spool.write(batch)  # before the client can have it
                        else:  # a changelog is not kept
                            spool.discard()
                            self._fetcher.spool = spool = None
                    buffer.put(batch, kinds)
                if spool is not None:
                    spool.finish()
                # End of stream now, not after the scope's teardown (its Spark job
                # lines, its JVM settings reset): nothing a client waits for. The log
                # is read after the teardown (read_log).
                with self._cond:
                    self._settling = True
                buffer.finish()
        except BufferClosedError:
            pass  # cancelled, timed out or closed while streaming
        except BaseException as exc:
            self._fail(exc)
        finally:
            with self._cond:
                self._producing = False
                self._running = False
                self._settling = False
                self._cond.notify_all()
            if self.on_idle is not None:
                try:
                    self.on_idle(self)
                except Exception:  # a record of the session must never fail a statement
                    log.debug("on_idle of operation %s failed", self.handle, exc_info=True)
            if execution is not None:
                closer = getattr(execution.batches, "close", None)
                if closer is not None:
                    with contextlib.suppress(Exception):
                        closer()
            if self._timer is not None:
                self._timer.cancel()

    def _fail(self, exc: BaseException) -> None:
        if self._status not in (_S.RUNNING, _S.FINISHED):
            return  # cancelled / timed out / closed: the failure is the interruption
        try:
            exc = self._explain(exc)
        except Exception:  # the explanation is a courtesy: the failure stands as it is
            log.debug("Could not explain the failure of %s", self.handle, exc_info=True)
        self._error = exc
        if self._transition(_S.ERROR, only_from=frozenset({_S.RUNNING, _S.FINISHED})):
            if self._fetcher is not None:
                self._fetcher.buffer.fail(exc)
            if not isinstance(exc, GatewayError):
                log.exception("Operation %s failed unexpectedly", self.handle, exc_info=exc)
            else:
                log.info("Operation %s failed: %s", self.handle, exc)

    def _on_timeout(self) -> None:
        with self._cond:
            still_working = self._status in _ACTIVE or (
                self._status is _S.FINISHED and self._producing and not self._settling
            )
        if still_working and self._transition(
            _S.TIMEOUT, only_from=frozenset(_ACTIVE | {_S.FINISHED})
        ):
            log.info("Operation %s timed out after %s s", self.handle, self.timeout)
            self._stop_work()

    def cancel(self) -> None:
        if self._status is _S.CLOSED:
            raise OperationNotFoundError(f"Operation {self.handle} is closed.")
        if self._transition(_S.CANCELED, only_from=frozenset(_ACTIVE | {_S.FINISHED})):
            log.info("Operation %s cancelled", self.handle)
            self._stop_work()

    def close(self) -> None:
        with self._cond:
            if self._status is _S.CLOSED:
                return
            active = self._status in _ACTIVE or (self._producing and not self._settling)
            status = self._status
        self._transition(_S.CLOSED)
        if self._on_close is not None:
            try:
                self._on_close(self, status)
            except Exception:  # the audit log must never fail a close
                log.warning(
                    "Recording the close of operation %s failed", self.handle, exc_info=True
                )
        if active:
            log.info("Operation %s closed while running; its Spark work is cancelled", self.handle)
            self._stop_work()
        elif self._fetcher is not None:
            self._fetcher.buffer.close()
        if self._timer is not None:
            self._timer.cancel()

    def _stop_work(self) -> None:
        if self._fetcher is not None:
            self._fetcher.buffer.close()
        if self._interrupted():
            # The executor's thread may still be on its way to a Spark job (resolving a
            # table, say): one it starts after this interrupt is interrupted next time.
            threading.Thread(
                target=self._keep_interrupting, name="sparkgate-interrupt", daemon=True
            ).start()

    def _interrupted(self) -> bool:
        try:
            self._interrupt(self)
        except Exception:  # interrupting is best effort; the state already moved
            log.warning("Could not interrupt the Spark work of %s", self.handle, exc_info=True)
            return False
        return True

    def _keep_interrupting(self) -> None:
        deadline = time.monotonic() + _INTERRUPT_FOR_S
        while time.monotonic() < deadline:
            with self._cond:
                if self._cond.wait_for(lambda: not self._running, _INTERRUPT_EVERY_S):
                    return
            if not self._interrupted():
                return

    def wait_done(self, timeout: float | None = None) -> bool:
        """Wait until no work is left (terminal status and producer stopped)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._status.is_terminal or self._producing:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    # -- results -------------------------------------------------------------
    def _wait_ready(self, wait: float) -> None:
        deadline = time.monotonic() + max(wait, 0.0)
        with self._cond:
            while self._fetcher is None and self._status in _ACTIVE:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                self._cond.wait(remaining)

    def _check_fetchable(self) -> None:
        status = self._status
        if status is _S.ERROR:
            raise self._as_error()
        if status is _S.CANCELED:
            raise IllegalStateError(f"Operation {self.handle} was cancelled; it has no results.")
        if status is _S.TIMEOUT:
            raise IllegalStateError(
                f"Operation {self.handle} timed out after {self.timeout} s; it has no results."
            )
        if status is _S.CLOSED:
            raise OperationNotFoundError(f"Operation {self.handle} is closed.")

    def _as_error(self) -> GatewayError:
        error = self._error
        if isinstance(error, GatewayError):
            return error
        text = mask_secrets(f"{type(error).__name__}: {error}")  # Spark's messages quote values
        return ExecutionError(text, causes=(text,))

    def result_schema(self, wait: float | None = None) -> ResultSchema:
        self._wait_ready(3600.0 if wait is None else wait)
        self._check_fetchable()
        if self._fetcher is None:
            raise IllegalStateError(f"The result of operation {self.handle} is not ready yet.")
        return self._fetcher.schema

    def fetch(self, token: int, max_rows: int, wait: float = 0.0) -> ResultSet:
        if token < 0:
            raise InvalidTokenError(f"Invalid fetch token {token}: tokens start at 0.")
        deadline = time.monotonic() + max(wait, 0.0)
        self._check_fetchable()
        if self._fetcher is None:
            if token != 0:
                raise InvalidTokenError(
                    f"Invalid fetch token {token}: expecting 0 for the first page."
                )
            self._wait_ready(wait)
            self._check_fetchable()
            if self._fetcher is None:
                return ResultSet(ResultType.NOT_READY, next_token=0, schema=ResultSchema(()))
        try:
            page = self._fetcher.fetch(token, max_rows, max(deadline - time.monotonic(), 0.0))
        except BaseException:
            self._check_fetchable()  # an error state explains the failure better
            raise
        self.rows_fetched += page.num_rows
        return page

    def fetch_orientation(
        self, orientation: FetchOrientation, max_rows: int, wait: float = 0.0
    ) -> ResultSet:
        self._check_fetchable()
        if self._fetcher is None:
            self._wait_ready(wait)
            self._check_fetchable()
            if self._fetcher is None:
                return ResultSet(ResultType.NOT_READY, next_token=0, schema=ResultSchema(()))
        page = self._fetcher.fetch_orientation(orientation, max_rows, wait)
        self.rows_fetched += page.num_rows
        return page

    # -- log -----------------------------------------------------------------
    def append_log(self, line: str) -> None:
        with self._log_lock:
            self._log.append(line)

    def read_log(self, orientation: FetchOrientation, max_rows: int) -> list[str]:
        """FORWARD reads on from the cursor; BACKWARD starts again from the top.

        A result read to its end has its log whole: the lines of its scope's
        teardown (the Spark jobs it ran) are waited for."""
        with self._cond:
            self._cond.wait_for(lambda: not self._settling, _SETTLE_S)
        with self._log_lock:
            if orientation is FetchOrientation.BACKWARD:
                self._log_cursor = 0
            lines = self._log[self._log_cursor : self._log_cursor + max_rows]
            self._log_cursor += len(lines)
            return lines
