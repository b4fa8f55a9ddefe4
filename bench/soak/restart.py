"""The soak's planned engine death: one SIGKILL of the gateway's Spark JVM.

At ``kill_engine_at_s`` into the run (later if a big SELECT is running then:
it waits for its end) the engine JVM, the gateway's child running Spark's
``SparkSubmit``, is killed as a crash would end it; the gateway process is
left alone and must heal itself (docs/operations.md, Engine health). From the
kill until a grace after ``/health/ready`` says the new engine serves, the
documented answers of a restarting engine (REST 503 with Retry-After,
HiveServer2 error statuses saying the engine is down, restarting or stopped
under the statement) count as expected; the same answers at any other time,
and every other error, do not (:class:`~bench.soak.stats.Recorder`).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import time

import psutil  # type: ignore[import-untyped]

from bench.soak.clients import Client, Context, last_committed_batch
from bench.soak.errors import Failure
from bench.soak.gateway import Gateway
from bench.soak.rest import Rest
from bench.soak.stats import EngineKill

__all__ = ["EngineKiller"]

log = logging.getLogger(__name__)


class EngineKiller(Client):
    """Kills the engine JVM once, then waits for the gateway to serve on a new one."""

    kind = "engine-kill"

    def __init__(self, ctx: Context, gateway: Gateway) -> None:
        super().__init__(ctx)
        self.gateway = gateway
        self.rest = Rest(ctx.url)
        self.done = False

    def step(self) -> None:
        at = self.ctx.settings.kill_engine_at_s
        if self.done or at is None or self.ctx.elapsed() < at or self.ctx.big_running.is_set():
            self.ctx.draining.wait(0.5)
            return
        self.done = True
        self.kill()

    def _readiness(self) -> tuple[int, int | None]:
        """``/health/ready``'s status and engine restart count (0, None: no answer)."""
        try:
            status, body = self.rest.readiness()
        except Failure:
            return 0, None
        restarts = body.get("restarts")
        return status, restarts if isinstance(restarts, int) else None

    def kill(self) -> None:
        _, before = self._readiness()
        jvm = self.gateway.engine_jvm()
        if jvm is None:
            self.ctx.recorder.problem("engine kill", "no engine JVM under the gateway to kill")
            return
        at = self.ctx.elapsed()
        self.ctx.engine_kills += 1
        self.ctx.recorder.restart_began()
        log.warning("Killing the engine JVM (pid %d), %.0f s into the run", jvm.pid, at)
        with contextlib.suppress(psutil.NoSuchProcess):
            jvm.send_signal(signal.SIGKILL)
        with contextlib.suppress(psutil.Error):
            jvm.wait(60)
        # Dead, the engine commits nothing more: the streaming job's last batch on it.
        self.ctx.batch_at_kill = last_committed_batch(self.ctx.streaming_checkpoint)
        killed = time.monotonic()
        deadline = killed + self.ctx.settings.engine_back_timeout_s
        while not self.ctx.halt.is_set() and time.monotonic() < deadline:
            status, restarts = self._readiness()
            if status == 200 and (restarts or 0) > (before or 0):
                break
            self.ctx.halt.wait(0.5)
        else:
            self.ctx.recorder.engine_kill(EngineKill(round(at, 1), jvm.pid, before))
            if not self.ctx.halt.is_set():
                self.ctx.recorder.problem(
                    "engine restart",
                    f"the engine did not serve again within "
                    f"{self.ctx.settings.engine_back_timeout_s:.0f} s of the kill",
                )
            return
        back = time.monotonic()
        self.ctx.recorder.restart_ended()
        self.ctx.engine_back_at = back
        new = self.gateway.engine_jvm()
        self.ctx.recorder.engine_kill(
            EngineKill(
                round(at, 1),
                jvm.pid,
                before,
                round(back - killed, 1),
                None if new is None else new.pid,
            )
        )
        log.info(
            "The engine serves again %.1f s after the kill (new JVM pid %s)",
            back - killed,
            None if new is None else new.pid,
        )

    def close(self) -> None:
        self.rest.close()
