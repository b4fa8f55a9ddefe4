"""Routing what the gateway logs while an operation runs into that operation's log.

Worker threads mark the operation they run; a handler on the ``sparkgate``
and ``py4j`` loggers copies records emitted on such a thread into the
operation, so ``fetch_log`` shows what happened for that statement alone.
Secret values are masked in every line (:mod:`sparkgate.sql.secret_logs`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from sparkgate.sql.secret_logs import install_secret_masking, mask_record

if TYPE_CHECKING:
    from sparkgate.service.operation.operation import Operation

__all__ = ["OperationLogHandler", "operation_context"]

# Per thread, not per process: the operation whose log the running thread writes.
_current = threading.local()
_FORMAT = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")


@contextlib.contextmanager
def operation_context(operation: Operation) -> Iterator[None]:
    previous = getattr(_current, "operation", None)
    _current.operation = operation
    try:
        yield
    finally:
        _current.operation = previous


class OperationLogHandler(logging.Handler):
    """Copies the records of a thread running an operation into its log, masked."""

    def __init__(self, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        # A service running in another program's process (an embedding application,
        # tests) masks every record there too, not only those of its operations.
        install_secret_masking()

    def emit(self, record: logging.LogRecord) -> None:
        operation = getattr(_current, "operation", None)
        if operation is None:
            return
        try:
            mask_record(record)  # a record made before masking was installed
            operation.append_log(_FORMAT.format(record))
        except Exception:
            self.handleError(record)

    @classmethod
    @contextlib.contextmanager
    def installed(cls, *logger_names: str) -> Iterator[OperationLogHandler]:
        handler = cls(level=logging.INFO)
        loggers = [logging.getLogger(name) for name in logger_names or ("sparkgate",)]
        for logger in loggers:
            logger.addHandler(handler)
        try:
            yield handler
        finally:
            for logger in loggers:
                logger.removeHandler(handler)
