"""Opening, finding, expiring and closing sessions (FLIP-91 SessionManager)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sparkgate.api.errors import SessionLimitError, SessionNotFoundError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.session.session import Session

__all__ = ["SessionManager"]

log = logging.getLogger(__name__)


class SessionManager:
    """Holds the live sessions; a background thread closes idle ones.

    ``idle_timeout`` <= 0 disables expiry. ``factory`` builds a
    :class:`Session` for a new handle (the service wires Spark into it).
    """

    def __init__(
        self,
        factory: Callable[[SessionHandle, SessionEnvironment], Session],
        *,
        max_sessions: int,
        idle_timeout: float,
        check_interval: float,
        max_per_user: int = 0,
    ) -> None:
        self._factory = factory
        self.max_sessions = max_sessions
        #: Sessions one authenticated user may hold at once (0: no limit).
        self.max_per_user = max_per_user
        self._opening_users: dict[str, int] = {}
        self.idle_timeout = idle_timeout
        self.check_interval = check_interval
        self._sessions: dict[SessionHandle, Session] = {}
        self._lock = threading.Lock()
        self._opening = 0
        self._stop = threading.Event()
        self._checker: threading.Thread | None = None

    def start(self) -> None:
        if self.idle_timeout > 0 and self.check_interval > 0 and self._checker is None:
            self._stop.clear()
            self._checker = threading.Thread(
                target=self._check_loop, name="sparkgate-session-expiry", daemon=True
            )
            self._checker.start()

    def stop(self) -> None:
        """Stop expiry and close every session (idempotent)."""
        self._stop.set()
        if self._checker is not None:
            self._checker.join(timeout=5)
            self._checker = None
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            self._close(session)

    def open(self, environment: SessionEnvironment) -> Session:
        principal = environment.principal
        user = principal.name if principal is not None and principal.authenticated else None
        with self._lock:
            if len(self._sessions) + self._opening >= self.max_sessions:
                raise SessionLimitError(
                    f"Failed to create a session: the gateway already has the maximum of "
                    f"{self.max_sessions} sessions (sql-gateway.session.max-num)."
                )
            if user is not None and self.max_per_user:
                held = self._opening_users.get(user, 0) + sum(
                    1 for s in self._sessions.values() if _user_of(s) == user
                )
                if held >= self.max_per_user:
                    raise SessionLimitError(
                        f"Failed to create a session: user '{user}' already has the maximum "
                        f"of {self.max_per_user} sessions (sql-gateway.user.max-sessions); "
                        "close one first."
                    )
                self._opening_users[user] = self._opening_users.get(user, 0) + 1
            self._opening += 1
        try:
            handle = SessionHandle.create()
            session = self._factory(handle, environment)
            with self._lock:
                self._sessions[handle] = session
        finally:
            with self._lock:
                self._opening -= 1
                if user is not None and self.max_per_user:
                    left = self._opening_users.get(user, 1) - 1
                    if left > 0:
                        self._opening_users[user] = left
                    else:
                        self._opening_users.pop(user, None)
        log.info("Session %s opened (%s)", handle, environment.session_name or "unnamed")
        return session

    def get(self, handle: SessionHandle) -> Session:
        """Find a live session and mark it used: every call keeps a session alive."""
        with self._lock:
            session = self._sessions.get(handle)
        if session is None:
            raise SessionNotFoundError(f"Session '{handle}' does not exist.")
        session.touch()
        return session

    def close(self, handle: SessionHandle) -> None:
        with self._lock:
            session = self._sessions.pop(handle, None)
        if session is None:
            raise SessionNotFoundError(f"Session '{handle}' does not exist.")
        self._close(session)

    def detach_all(self) -> list[Session]:
        """Take every session out, unclosed (to move them onto a new engine)."""
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        return sessions

    def adopt(self, session: Session) -> None:
        """Take back a session :meth:`detach_all` took out."""
        with self._lock:
            self._sessions[session.handle] = session
        session.touch()

    def has(self, handle: SessionHandle) -> bool:
        """Whether ``handle`` names an open session (without marking it used)."""
        with self._lock:
            return handle in self._sessions

    def holds(self, session: Session) -> bool:
        """Whether ``session`` is one of the open sessions."""
        with self._lock:
            return self._sessions.get(session.handle) is session

    def sessions(self) -> list[Session]:
        with self._lock:
            return list(self._sessions.values())

    def handles(self) -> list[SessionHandle]:
        with self._lock:
            return list(self._sessions)

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def expire_idle(self) -> int:
        """Close sessions idle for longer than the timeout; returns how many."""
        if self.idle_timeout <= 0:
            return 0
        now = time.monotonic()
        with self._lock:
            idle = [s for s in self._sessions.values() if now - s.last_access > self.idle_timeout]
            for session in idle:
                del self._sessions[session.handle]
        for session in idle:
            log.info("Session %s expired after %.0f s idle", session.handle, self.idle_timeout)
            self._close(session)
        return len(idle)

    def _check_loop(self) -> None:
        while not self._stop.wait(self.check_interval):
            try:
                self.expire_idle()
            except Exception:
                log.exception("Idle session check failed")

    @staticmethod
    def _close(session: Session) -> None:
        try:
            session.close()
        except Exception:
            log.warning("Closing session %s failed", session.handle, exc_info=True)
        log.info("Session %s closed", session.handle)


def _user_of(session: Session) -> str | None:
    principal = session.environment.principal
    return principal.name if principal is not None and principal.authenticated else None
