"""The operations of one session (FLIP-91 OperationManager)."""

from __future__ import annotations

import logging
import threading
import time

from sparkgate.api.errors import OperationNotFoundError, SessionLimitError
from sparkgate.api.handles import OperationHandle
from sparkgate.service.operation.operation import Operation
from sparkgate.service.operation.pool import WorkerPool

__all__ = ["OperationManager"]

log = logging.getLogger(__name__)


class OperationManager:
    def __init__(self, pool: WorkerPool, max_running: int | None = None) -> None:
        self._pool = pool
        self._max_running = max_running
        self._operations: dict[OperationHandle, Operation] = {}
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, operation: Operation) -> OperationHandle:
        if self._max_running is not None:
            with self._lock:
                running = sum(1 for op in self._operations.values() if op.busy)
            if running >= self._max_running:
                raise SessionLimitError(
                    f"The session already runs {running} statements, the most "
                    "sql-gateway.session.max-running-statements allows; wait for one to "
                    "end, or cancel one."
                )
        self._register(operation)
        operation.submit(self._pool.submit)
        return operation.handle

    def run_inline(self, operation: Operation) -> Operation:
        self._register(operation)
        operation.run_inline()
        return operation

    def _register(self, operation: Operation) -> None:
        with self._lock:
            if self._closed:
                raise OperationNotFoundError("The session is closing; no new operations.")
            self._operations[operation.handle] = operation

    def get(self, handle: OperationHandle) -> Operation:
        with self._lock:
            operation = self._operations.get(handle)
        if operation is None:
            raise OperationNotFoundError(f"Operation {handle} does not exist or is closed.")
        return operation

    def cancel(self, handle: OperationHandle) -> None:
        self.get(handle).cancel()

    def close(self, handle: OperationHandle) -> None:
        with self._lock:
            operation = self._operations.pop(handle, None)
        if operation is None:
            raise OperationNotFoundError(f"Operation {handle} does not exist or is closed.")
        operation.close()

    def close_all(self, wait: float = 10.0) -> None:
        """Cancel and close every operation, then give their workers ``wait``
        seconds to let go of Spark; no new operations are accepted."""
        with self._lock:
            self._closed = True
            operations = list(self._operations.values())
            self._operations.clear()
        for operation in operations:
            try:
                operation.close()
            except Exception:
                log.warning("Could not close operation %s", operation.handle, exc_info=True)
        deadline = time.monotonic() + wait
        for operation in operations:
            if not operation.wait_done(max(deadline - time.monotonic(), 0.0)):
                log.warning("Operation %s is still stopping", operation.handle)

    def __len__(self) -> int:
        with self._lock:
            return len(self._operations)
