"""What went wrong for a client, as one comparable kind per failure.

A kind is the channel, the HTTP status (REST) and the root cause's class or
first line, with handles and other ids blanked, so that a thousand failures
of one cause count under one key.
"""

from __future__ import annotations

import re
from typing import Any

import httpx

__all__ = ["Failure", "Halted", "hs2_failure", "rest_failure", "transport_failure"]

_ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = re.compile(r"\b[0-9a-f]{32}\b")
_PARENS = re.compile(r"\([^)]*\)")
# The documented answers while an engine restarts (docs/operations.md, Engine health):
# new work refused ("The Spark engine is down/restarting (...); retry shortly.") and a
# statement cut off by the death ("... the Spark engine stopped (...); retry it ...").
_ENGINE_UNAVAILABLE = ("The Spark engine is", "the Spark engine stopped")
_SESSION_LOST = "was lost with the Spark engine"


class Halted(Exception):
    """The run is being stopped now (Ctrl-C or the drain timed out)."""


def _normalize(text: str, limit: int = 120) -> str:
    first = text.strip().splitlines()[0] if text.strip() else "(no message)"
    first = _PARENS.sub("(...)", _HEX.sub("<id>", _ID.sub("<id>", first)))
    return first[:limit]


class Failure(Exception):
    """A request that did not get the answer its client wanted."""

    def __init__(
        self,
        channel: str,
        status: int | None,
        cause: str,
        message: str,
        *,
        retry_after_s: float | None = None,
    ) -> None:
        status_text = "" if status is None else f" {status}"
        super().__init__(f"{channel}{status_text}: {message[:500]}")
        self.channel = channel  # REST, HS2 or transport
        self.status = status
        self.cause = cause
        self.message = message
        self.retry_after_s = retry_after_s

    @property
    def kind(self) -> str:
        status = f" {self.status}" if self.status is not None else ""
        return f"{self.channel}{status} {self.cause}"

    @property
    def engine_unavailable(self) -> bool:
        """The documented answer while the engine is down or restarting: new work
        refused, or a statement the death cut off; on REST a 503 with Retry-After."""
        said = any(marker in self.message for marker in _ENGINE_UNAVAILABLE)
        if self.channel == "REST":
            return said and self.status == 503 and self.retry_after_s is not None
        return self.channel == "HS2" and said

    @property
    def session_lost(self) -> bool:
        """A session of an engine that died: documented, the client opens a new one."""
        return _SESSION_LOST in self.message

    @property
    def session_gone(self) -> bool:
        """The session is unknown (expired or lost): the client needs a new one."""
        return self.session_lost or (
            self.channel == "REST" and self.status == 404 and "Session" in self.message
        )

    @property
    def expected(self) -> bool:
        """What docs/operations.md promises while an engine restarts (the recorder
        counts it as expected only during one, see :class:`~bench.soak.stats.Recorder`)."""
        return self.engine_unavailable or self.session_lost

    @property
    def server_error(self) -> bool:
        """A 5xx (REST), or a HiveServer2 error status: the server's fault, not the client's."""
        if self.channel == "REST":
            return self.status is not None and self.status >= 500
        return self.channel == "HS2"


def _root_cause(errors: list[str]) -> str:
    """The class of the last ``Caused by:`` of Flink's server-side trace, if there is one."""
    trace = errors[-1] if errors else ""
    causes = [line for line in trace.splitlines() if line.startswith("Caused by: ")]
    if not causes:
        return _normalize(errors[0] if errors else "")
    name = causes[-1].removeprefix("Caused by: ").split(":", 1)[0]
    return name.rsplit(".", 1)[-1]


def rest_failure(response: httpx.Response) -> Failure:
    """A non-200 REST answer, with Flink's error body when it has one."""
    try:
        errors = [str(e) for e in response.json().get("errors", [])]
    except ValueError:
        errors = [response.text[:500]]
    retry = response.headers.get("retry-after")
    return Failure(
        "REST",
        response.status_code,
        _root_cause(errors) if response.status_code == 500 else _normalize(" ".join(errors)),
        "\n".join(errors),
        retry_after_s=float(retry) if retry and retry.isdigit() else None,
    )


def transport_failure(exc: BaseException) -> Failure:
    """No answer at all: connection refused or reset, a timeout, a broken stream."""
    return Failure("transport", None, type(exc).__name__, str(exc) or type(exc).__name__)


def _hs2_message(exc: BaseException) -> str:
    """PyHive puts the Thrift response in ``args[0]``; its status carries the message."""
    for arg in getattr(exc, "args", ()):
        status: Any = getattr(arg, "status", None)
        # TGetOperationStatusResp has the message itself; other responses in their status.
        message = getattr(arg, "errorMessage", None) or getattr(status, "errorMessage", None)
        if message:
            return str(message)
    return str(exc)


def hs2_failure(exc: BaseException) -> Failure:
    """A PyHive error: an error status of the server (HS2) or a transport failure."""
    from pyhive import exc as pyhive_exc  # type: ignore[import-untyped]

    if isinstance(exc, pyhive_exc.Error):
        message = _hs2_message(exc)
        return Failure("HS2", None, f"{type(exc).__name__}: {_normalize(message)}", message)
    return transport_failure(exc)
