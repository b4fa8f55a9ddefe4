"""Every few seconds: both processes' RSS and the engine's health; a progress line a minute."""

from __future__ import annotations

import logging
import threading
import time

from bench.soak.clients import Context
from bench.soak.errors import Failure
from bench.soak.gateway import Gateway
from bench.soak.rest import Rest
from bench.soak.stats import Sample

__all__ = ["Sampler"]

log = logging.getLogger(__name__)


class Sampler(threading.Thread):
    """Samples until :meth:`stop`; stops the run (``halt``) if the gateway dies."""

    def __init__(self, ctx: Context, gateway: Gateway) -> None:
        super().__init__(name="sampler", daemon=True)
        self.ctx = ctx
        self.gateway = gateway
        self.rest = Rest(ctx.url)
        self._stopping = threading.Event()
        self.last: Sample | None = None
        self._next_heap = ctx.settings.heap_every_s

    def stop(self) -> None:
        self._stopping.set()

    def run(self) -> None:
        every = self.ctx.settings.sample_every_s
        next_progress = self.ctx.settings.progress_every_s
        try:
            while True:
                self.sample_once()  # after stop() too: the last sample is the run's end
                if self._stopping.is_set():
                    return
                if self.ctx.elapsed() >= next_progress:
                    self.progress()
                    next_progress += self.ctx.settings.progress_every_s
                self._stopping.wait(every)
        finally:
            self.rest.close()

    def sample_once(self) -> Sample:
        memory = self.gateway.memory()
        ready, restarts = self._readiness()
        sample = Sample(
            t_s=round(self.ctx.elapsed(), 1),
            gateway_mb=None if memory is None else round(memory.gateway_mb, 1),
            engine_mb=None if memory is None else round(memory.engine_mb, 1),
            workers_mb=None if memory is None else round(memory.workers_mb, 1),
            engine_pids=() if memory is None else memory.engine_pids,
            ready=ready,
            restarts=restarts,
            engine_heap_mb=self._live_heap(memory.engine_pids if memory else ()),
        )
        self.ctx.recorder.sample(sample)
        if self._engine_came_back(sample):
            self.ctx.engine_back_at = time.monotonic()
            log.info("The engine serves again (restarts: %s)", sample.restarts)
        self.last = sample
        if not self.gateway.alive():
            self._gateway_died()
        return sample

    def _live_heap(self, engine_pids: tuple[int, ...]) -> float | None:
        """The engine's live heap, every ``heap_every_s`` (and at the end)."""
        due = self.ctx.elapsed() >= self._next_heap or self._stopping.is_set()
        if not due or len(engine_pids) != 1 or self.ctx.big_running.is_set():
            return None
        self._next_heap = self.ctx.elapsed() + self.ctx.settings.heap_every_s
        heap = self.gateway.live_heap_mb(engine_pids[0])
        return None if heap is None else round(heap, 1)

    def _engine_came_back(self, sample: Sample) -> bool:
        """UP after a sample that was not, or more restarts than the sample before."""
        last = self.last
        if last is None or sample.ready != "UP":
            return False
        more = None not in (sample.restarts, last.restarts) and sample.restarts != last.restarts
        return last.ready != "UP" or more

    def _readiness(self) -> tuple[str, int | None]:
        """The engine's state (UP, DOWN, RESTARTING, ...) and restart count, if known."""
        try:
            status, body = self.rest.readiness()
        except Failure as failure:
            self.ctx.recorder.event(f"readiness probe failed: {failure.cause}")
            return "unreachable", None
        restarts = body.get("restarts")
        state = str(body.get("engine", "UP" if status == 200 else "DOWN"))
        return state, int(restarts) if isinstance(restarts, int) else None

    def _gateway_died(self) -> None:
        if self.ctx.halt.is_set():
            return
        code = self.gateway.proc.returncode if self.gateway.proc else None
        self.ctx.recorder.problem("gateway exited", f"exit code {code}:\n{self.gateway.tail()}")
        log.error("The gateway exited (code %s); stopping the run", code)
        self.ctx.draining.set()
        self.ctx.halt.set()

    def progress(self) -> None:
        """One line: what was served so far, memory now, the engine's state."""
        totals = self.ctx.recorder.totals()
        last = self.last
        memory = (
            f"RSS gateway {last.gateway_mb or 0:.0f} MB, engine {last.engine_mb or 0:.0f} MB"
            if last
            else "RSS unknown"
        )
        engine = f"engine {last.ready}, restarts {last.restarts}" if last else ""
        log.info(
            "[%5.1f min] served %d, verified %d, lost %d, errors %d "
            "(unexpected: 5xx %d, HS2 %d) | %s | %s",
            self.ctx.elapsed() / 60,
            totals["served"],
            totals["verified"],
            totals["lost"],
            totals["errors"],
            totals["unexpected_5xx"],
            totals["unexpected_hs2"],
            memory,
            engine,
        )
