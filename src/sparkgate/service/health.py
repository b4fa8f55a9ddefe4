"""Watching the engine: a death is seen within a check interval, and healed.

The watcher polls a check (the engine's failure cause, or None) and, on a
death, hands the cause to a recovery function on its own thread: the gateway
tears down what lived on the dead engine and starts a new one. Restarts are
bounded: at most ``attempts`` within ``window`` seconds, each failed start
waiting twice as long as the one before (up to a minute). Each death and each
restart is logged at WARNING with its cause; restarts are counted in the health.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from sparkgate.api.health import EngineState, GatewayHealth

__all__ = ["EngineWatch", "RestartBudget", "next_backoff"]

log = logging.getLogger(__name__)

_MAX_BACKOFF_S = 60.0


def next_backoff(backoff_s: float) -> float:
    """The wait before the next start after a failed one: twice the last (at least
    1 s, so a 0 back-off does not spin on an engine that cannot start), up to a minute."""
    return min(max(backoff_s * 2, 1.0), _MAX_BACKOFF_S)


class RestartBudget:
    """At most ``attempts`` restarts in any ``window`` seconds (of ``clock``)."""

    def __init__(
        self, attempts: int, window_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.attempts = attempts
        self.window_s = window_s
        self._clock = clock
        self._times: deque[float] = deque()

    def take(self) -> bool:
        """Whether one more restart is allowed now (then it is counted)."""
        now = self._clock()
        while self._times and now - self._times[0] > self.window_s:
            self._times.popleft()
        if len(self._times) >= self.attempts:
            return False
        self._times.append(now)
        return True


class EngineWatch:
    """The engine's health, and the thread that keeps it true."""

    def __init__(
        self,
        check: Callable[[], str | None],
        recover: Callable[[str], None],
        *,
        interval_s: float,
        budget: RestartBudget,
        backoff_s: float,
        pause: Callable[[float], bool] | None = None,
    ) -> None:
        """``pause(s)`` waits out a back-off of ``s`` seconds and says whether the
        watch was stopped meanwhile (by default: waits on :meth:`stop`)."""
        self._check = check
        self._recover = recover
        self._interval_s = interval_s
        self._budget = budget
        self._backoff_s = backoff_s
        self._health = GatewayHealth(EngineState.STARTING)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pause = pause if pause is not None else self._stop.wait
        self._thread: threading.Thread | None = None

    @property
    def health(self) -> GatewayHealth:
        return self._health

    def _set(self, state: EngineState, cause: str | None = None, restarted: int = 0) -> None:
        with self._lock:
            self._health = GatewayHealth(state, cause, self._health.restarts + restarted)

    def up(self) -> None:
        self._set(EngineState.UP)

    def start(self) -> None:
        self._stop.clear()
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="sparkgate-engine-watch", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            if self._health.state is not EngineState.UP:
                continue
            try:
                cause = self._check()
            except Exception as exc:  # the check itself must not end the watch
                cause = f"engine check failed: {exc}"
            if cause is not None and not self._stop.is_set():
                self.heal(cause)

    def heal(self, cause: str) -> None:
        """Report the engine dead of ``cause`` and start new ones until one serves or
        the budget is spent (the watch's thread calls it on a death)."""
        log.warning("The Spark engine died: %s", cause)
        self._set(EngineState.DOWN, cause)
        backoff = self._backoff_s
        while not self._stop.is_set():
            if not self._budget.take():
                log.error(
                    "The Spark engine stays down: %d restarts within %.0f s already "
                    "(sql-gateway.engine.restart-attempts); restart the gateway",
                    self._budget.attempts,
                    self._budget.window_s,
                )
                self._set(EngineState.DOWN, f"{cause}; no more restarts allowed")
                return
            if self._pause(backoff):
                return
            self._set(EngineState.RESTARTING, cause)
            try:
                self._recover(cause)
            except Exception as exc:
                log.warning(
                    "A new Spark engine failed to start (after: %s): %s", cause, exc, exc_info=True
                )
                self._set(EngineState.DOWN, f"{cause}; restart failed: {exc}")
                backoff = next_backoff(backoff)
                continue
            self._set(EngineState.UP, restarted=1)
            log.warning(
                "A new Spark engine serves (restart %d, after: %s)", self._health.restarts, cause
            )
            return
