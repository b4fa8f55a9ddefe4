"""Gateways of one service: those sharing a state database (``sql-gateway.state.url``).

Each gateway writes a heartbeat with the URL of its REST endpoint every third
of ``sql-gateway.state.lease``. A session or job is served by the gateway that
owns its record: the others forward calls on that session to it. A gateway
whose heartbeat is older than the lease, or that left (a clean stop), has
ended: the first gateway to notice takes its records over (one atomic update
per record, so each goes to one gateway) and serves its sessions and streaming
jobs from there on, as a restarted gateway would.

A gateway that was only slow (a pause longer than the lease) finds its records
gone; lease and heartbeat are the usual trade: a longer lease is slower to take
over, a shorter one takes over a gateway that is merely busy.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping

from sparkgate.service.state import StateDatabase

__all__ = ["ServicePeers", "advertised_url"]

log = logging.getLogger(__name__)


def advertised_url(config: Mapping[str, str], given: str) -> str:
    """Where the other gateways reach this one's REST endpoint: ``given``, else the
    REST endpoint's address and port (``https`` with its TLS on)."""
    if given.strip():
        return given.strip().rstrip("/")
    prefix = "sql-gateway.endpoint.rest."
    tls = config.get(prefix + "ssl.enabled", "false").strip().lower() == "true"
    host = config.get(prefix + "address", "127.0.0.1").strip() or "127.0.0.1"
    port = config.get(prefix + "port", "8083").strip() or "8083"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{'https' if tls else 'http'}://{host}:{port}"


class ServicePeers:
    """This gateway among the others of its service: heartbeats, who is alive where,
    and noticing a gateway that ended (``take_over`` is called with its name).
    ``follow`` runs at each heartbeat, to pick up what the others changed."""

    def __init__(
        self,
        database: StateDatabase,
        me: str,
        url: str,
        lease_s: float,
        take_over: Callable[[str], None],
        follow: Callable[[], None] = lambda: None,
    ) -> None:
        self.database = database
        self.me = me
        self.url = url
        self.lease_s = lease_s
        self._take_over = take_over
        self._follow = follow
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Say this gateway is alive (raises :class:`~sparkgate.service.state.StateWriteError`
        when the database cannot be written), then keep saying it."""
        self.database.heartbeat(self.me, self.url)
        self._stop.clear()
        # Heartbeats on a thread of their own: a slow take-over must not make this
        # gateway look dead to the others.
        self._threads = [
            threading.Thread(target=self._beat, name="sparkgate-heartbeat", daemon=True),
            threading.Thread(target=self._watch, name="sparkgate-peers", daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        log.info(
            "Gateway %s serves at %s among the gateways of %s",
            self.me,
            self.url,
            self.database.display,
        )

    def stop(self) -> None:
        """Stop the heartbeats and leave: the others take over what this gateway owns."""
        self._stop.set()
        threads, self._threads = self._threads, []
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(self.lease_s)
        self.database.leave(self.me)

    def url_of(self, gateway: str) -> str | None:
        """The URL of ``gateway`` while it is alive; None once it has ended."""
        if gateway == self.me:
            return self.url
        return self.database.alive(self.lease_s).get(gateway)

    def check(self) -> None:
        """Take over the records of every gateway that has ended."""
        alive = self.database.alive(self.lease_s)
        for gateway in sorted(self.database.owners() - set(alive) - {self.me}):
            log.warning(
                "Gateway %s has ended (no heartbeat for %.0f s): taking over its sessions and jobs",
                gateway,
                self.lease_s,
            )
            self._take_over(gateway)

    def _beat(self) -> None:
        while not self._stop.wait(max(self.lease_s / 3, 0.2)):
            try:
                self.database.heartbeat(self.me, self.url)
            except Exception as exc:  # the database is away: try again next time
                log.warning("Service heartbeat failed: %s", exc)

    def _watch(self) -> None:
        while not self._stop.wait(max(self.lease_s / 3, 0.2)):
            try:
                self.check()
                self._follow()
            except Exception as exc:
                log.warning("Could not look at the other gateways of the service: %s", exc)
