"""Secret values kept out of every log record the process writes.

Two ways in, one masking (:func:`sparkgate.sql.secrets.mask_secrets`):

- :func:`install_secret_masking` makes every record the process creates a
  :class:`MaskingLogRecord`: its message, its exception (``str(exc)`` of a
  Spark error quotes the statement) and the formatted traceback come out
  masked, whatever the handler and formatter (the gateway's console and file,
  the operation log, PySpark's JSON formatter, a test's capture, an embedding
  application's own handlers). Lazily: a record no handler formats costs
  nothing, and one formatted by several handlers is masked once.
- :class:`SecretMaskingFilter` on a handler masks records made elsewhere
  (``logging.makeLogRecord``, another record factory) in place.
"""

from __future__ import annotations

import logging
import threading
from types import TracebackType
from typing import Any, TypeAlias

from sparkgate.sql.secrets import mask_secrets

__all__ = ["MaskingLogRecord", "SecretMaskingFilter", "install_secret_masking", "mask_record"]

ExcInfo: TypeAlias = (
    "tuple[type[BaseException], BaseException, TracebackType | None] | tuple[None, None, None]"
)

_install_lock = threading.Lock()
_FORMATTER = logging.Formatter()
_MAX_CHAIN = 20
# One stand-in class per exception class that ever showed a secret (a few).
_stand_ins: dict[type[BaseException], type[Exception]] = {}


class MaskingLogRecord(logging.LogRecord):
    """A log record whose message and exception come out masked."""

    # The masked message, and the (msg, args) it was made from.
    _masked: tuple[object, object, str] | None = None

    def getMessage(self) -> str:
        cached = self._masked
        if cached is not None and cached[0] is self.msg and cached[1] is self.args:
            return cached[2]
        message = mask_secrets(super().getMessage())
        self._masked = (self.msg, self.args, message)
        return message

    def __getstate__(self) -> dict[str, Any]:
        # The cache holds the original arguments, which a queue or pickle must not need.
        state = dict(self.__dict__)
        state.pop("_masked", None)
        return state

    # What formatters read of the exception (str(exc), its causes, the traceback).
    @property
    def exc_info(self) -> ExcInfo | None:
        info: ExcInfo | None = self.__dict__.get("_exc_info")
        if not isinstance(info, tuple) or info[1] is None:
            return info
        masked: ExcInfo | None = self.__dict__.get("_exc_info_masked")
        if masked is None:
            masked = (info[0], masked_exception(info[1]), info[2])
            self.__dict__["_exc_info_masked"] = masked
        return masked

    @exc_info.setter
    def exc_info(self, info: ExcInfo | None) -> None:
        self.__dict__["_exc_info"] = info
        self.__dict__.pop("_exc_info_masked", None)

    # Where formatters keep the formatted traceback: masked as it is kept.
    @property
    def exc_text(self) -> str | None:
        text: str | None = self.__dict__.get("_exc_text")
        return text

    @exc_text.setter
    def exc_text(self, text: str | None) -> None:
        self.__dict__["_exc_text"] = mask_secrets(text) if text else text


def masked_exception(exc: BaseException, depth: int = 0) -> BaseException:
    """``exc`` itself when neither it nor its causes show a secret, else a stand-in
    of the same module and name whose message (and causes) are masked, with
    ``exc``'s traceback: what a formatter prints of it is what it would print
    of ``exc``, secrets masked."""
    try:
        text = str(exc)
    except Exception:  # a message that cannot be made (a JVM gone) shows nothing
        return exc
    masked = mask_secrets(text)
    cause, context = exc.__cause__, exc.__context__
    if depth < _MAX_CHAIN:
        cause = masked_exception(cause, depth + 1) if cause is not None else None
        context = masked_exception(context, depth + 1) if context is not None else None
    if masked == text and cause is exc.__cause__ and context is exc.__context__:
        return exc
    stand_in = _stand_in_class(type(exc))(masked)
    stand_in.__cause__ = cause
    stand_in.__context__ = context
    stand_in.__suppress_context__ = exc.__suppress_context__
    return stand_in.with_traceback(exc.__traceback__)


def _stand_in_class(original: type[BaseException]) -> type[Exception]:
    stand_in = _stand_ins.get(original)
    if stand_in is None:
        # A race makes two equal classes; either serves.
        stand_in = _stand_ins[original] = type(
            original.__name__,
            (Exception,),
            {"__module__": original.__module__, "__qualname__": original.__qualname__},
        )
    return stand_in


class SecretMaskingFilter(logging.Filter):
    """Masks a record's message and exception in place; drops nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        mask_record(record)
        return True


def mask_record(record: logging.LogRecord) -> None:
    """Mask ``record`` in place (a :class:`MaskingLogRecord` masks itself)."""
    if isinstance(record, MaskingLogRecord) or getattr(record, "_secrets_masked", False):
        return
    message = record.getMessage()
    masked = mask_secrets(message)
    if masked != message:
        record.msg, record.args = masked, None
    info = record.exc_info
    if info and info[1] is not None:
        if not record.exc_text:
            record.exc_text = _FORMATTER.formatException(info)
        record.exc_info = (info[0], masked_exception(info[1]), info[2])
    if record.exc_text:
        record.exc_text = mask_secrets(record.exc_text)
    record._secrets_masked = True


def _as_masking(record: logging.LogRecord) -> None:
    """Turn a plain record into a :class:`MaskingLogRecord` (its exception fields
    move behind the masking properties)."""
    exc_info, exc_text = (
        record.__dict__.pop("exc_info", None),
        record.__dict__.pop("exc_text", None),
    )
    record.__class__ = MaskingLogRecord
    record.exc_info = exc_info
    record.exc_text = exc_text


def install_secret_masking() -> None:
    """Make every log record created from now on a masking one (idempotent).

    A record factory someone installed before is kept: its records are
    masked as they are made.
    """
    with _install_lock:
        current = logging.getLogRecordFactory()
        if current is MaskingLogRecord or getattr(current, "_masks_secrets", False):
            return
        if current is logging.LogRecord:
            logging.setLogRecordFactory(MaskingLogRecord)
            return

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = current(*args, **kwargs)
            if type(record) is logging.LogRecord:
                _as_masking(record)
            else:
                mask_record(record)
            return record

        factory._masks_secrets = True  # type: ignore[attr-defined]
        logging.setLogRecordFactory(factory)
