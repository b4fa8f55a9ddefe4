"""The operations of one session (FLIP-91 OperationManager)."""

from __future__ import annotations

import logging
import threading
import time

from sparkgate.api.errors import OperationNotFoundError, SessionLimitError
from sparkgate.api.handles import OperationHandle
from sparkgate.service.operation.operation import Operation
from sparkgate.service.operation.pool import WorkerPool

__all__ = ["OperationManager", "UserStatements"]

log = logging.getLogger(__name__)


class UserStatements:
    """Each user's sessions, to count the statements a user runs across them."""

    def __init__(self, max_running: int) -> None:
        #: The most a user may run at once (0: no limit).
        self.max_running = max_running
        self._lock = threading.Lock()
        self._managers: dict[str, set[OperationManager]] = {}

    def add(self, user: str, manager: OperationManager) -> None:
        with self._lock:
            self._managers.setdefault(user, set()).add(manager)

    def remove(self, user: str, manager: OperationManager) -> None:
        with self._lock:
            managers = self._managers.get(user)
            if managers is not None:
                managers.discard(manager)
                if not managers:
                    del self._managers[user]

    def running(self, user: str) -> int:
        with self._lock:
            managers = list(self._managers.get(user, ()))
        return sum(manager.running() for manager in managers)


class OperationManager:
    def __init__(
        self,
        pool: WorkerPool,
        max_running: int | None = None,
        user: tuple[UserStatements, str] | None = None,
    ) -> None:
        self._pool = pool
        self._max_running = max_running
        # The session's user and their sessions: a cap across them (authenticated users).
        self._user = user
        self._operations: dict[OperationHandle, Operation] = {}
        self._lock = threading.Lock()
        self._closed = False

    def statuses(self) -> list[str]:
        """The status of each of the session's operations (metrics)."""
        with self._lock:
            return [op.status.value for op in self._operations.values()]

    def open_operations(self) -> dict[str, bool]:
        """Each open operation's handle, and whether it is still working."""
        with self._lock:
            return {str(h): op.busy for h, op in self._operations.items()}

    def restore(self, operation: Operation) -> None:
        """Hold an operation made again under its old handle (after a restart)."""
        self._register(operation)

    def running(self) -> int:
        """Statements of this session still working."""
        with self._lock:
            return sum(1 for op in self._operations.values() if op.busy)

    def submit(self, operation: Operation) -> OperationHandle:
        if self._max_running is not None:
            running = self.running()
            if running >= self._max_running:
                raise SessionLimitError(
                    f"The session already runs {running} statements, the most "
                    "sql-gateway.session.max-running-statements allows; wait for one to "
                    "end, or cancel one."
                )
        if self._user is not None:
            users, name = self._user
            running = users.running(name)
            if users.max_running and running >= users.max_running:
                raise SessionLimitError(
                    f"User '{name}' already runs {running} statements in their sessions, the "
                    "most sql-gateway.user.max-running-statements allows; wait for one to "
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
        if self._user is not None:
            self._user[0].remove(self._user[1], self)
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
