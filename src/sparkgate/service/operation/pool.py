"""A bounded worker pool with FLIP-91's min / max / keep-alive semantics.

``concurrent.futures.ThreadPoolExecutor`` neither keeps a core of threads nor
retires idle ones, and the gateway is long-running with bursty load. Threads
start on demand up to ``max_threads``; one idle for ``keepalive`` retires
unless only ``min_threads`` are left. Work beyond ``max_threads`` waits in a
queue (operations stay PENDING) rather than being refused.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from collections.abc import Callable

__all__ = ["WorkerPool"]

log = logging.getLogger(__name__)

_STOP = object()


class WorkerPool:
    def __init__(
        self,
        min_threads: int,
        max_threads: int,
        keepalive: float,
        name: str = "sparkgate-worker",
    ) -> None:
        if max_threads < 1 or min_threads < 0 or min_threads > max_threads:
            raise ValueError(f"Invalid worker pool size: min={min_threads}, max={max_threads}.")
        self.min_threads = min_threads
        self.max_threads = max_threads
        self.keepalive = keepalive
        self._name = name
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        self._idle = 0
        self._pending = 0
        self._counter = itertools.count(1)
        self._shutdown = False

    def start(self) -> None:
        with self._lock:
            for _ in range(self.min_threads):
                self._spawn()

    def submit(self, task: Callable[[], None]) -> None:
        with self._lock:
            if self._shutdown:
                raise RuntimeError("worker pool is stopped")
            self._pending += 1
            # Spawn only when the waiting tasks outnumber idle threads.
            if self._pending > self._idle and len(self._threads) < self.max_threads:
                self._spawn()
            self._queue.put(task)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop taking work and let threads finish their current task."""
        with self._lock:
            if self._shutdown:
                return
            self._shutdown = True
            threads = list(self._threads)
        for _ in threads:
            self._queue.put(_STOP)
        for thread in threads:
            thread.join(timeout)

    @property
    def size(self) -> int:
        with self._lock:
            return len(self._threads)

    def _spawn(self) -> None:
        thread = threading.Thread(
            target=self._work, name=f"{self._name}-{next(self._counter)}", daemon=True
        )
        self._threads.add(thread)
        thread.start()

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            with self._lock:
                self._idle += 1
            try:
                task = self._queue.get(timeout=self.keepalive if self.keepalive > 0 else None)
            except queue.Empty:
                with self._lock:
                    self._idle -= 1
                    # Stay if work arrived while this thread was timing out.
                    if len(self._threads) > self.min_threads and self._pending <= self._idle:
                        self._threads.discard(me)
                        return
                continue
            with self._lock:
                self._idle -= 1
                if task is _STOP:
                    self._threads.discard(me)
                    return
                self._pending -= 1
            try:
                task()  # type: ignore[operator]
            except BaseException:  # a task must never kill its worker
                log.exception("Uncaught error in a gateway worker task")
            # An idle worker must not hold its last task (an operation, and through it
            # a closed session and its Spark session).
            del task
