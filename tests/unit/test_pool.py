from __future__ import annotations

import threading
import time

import pytest

from sparkgate.service.operation.pool import WorkerPool


def test_runs_up_to_max_in_parallel_and_queues_the_rest() -> None:
    pool = WorkerPool(0, 3, 10.0)
    pool.start()
    gate = threading.Event()
    running = 0
    peak = 0
    lock = threading.Lock()
    done = threading.Semaphore(0)

    def task() -> None:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        gate.wait(5)
        with lock:
            running -= 1
        done.release()

    for _ in range(7):
        pool.submit(task)
    time.sleep(0.3)
    assert pool.size == 3
    assert peak == 3
    gate.set()
    for _ in range(7):
        assert done.acquire(timeout=5)
    pool.stop()


def test_idle_threads_retire_down_to_min() -> None:
    pool = WorkerPool(1, 4, 0.2)
    pool.start()
    gate = threading.Event()
    for _ in range(4):
        pool.submit(lambda: gate.wait(5) and None)
    time.sleep(0.1)
    assert pool.size == 4
    gate.set()
    deadline = time.monotonic() + 5
    while pool.size > 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pool.size == 1
    pool.stop()


def test_failing_task_does_not_kill_the_worker() -> None:
    pool = WorkerPool(1, 1, 5.0)
    pool.start()
    ran = threading.Event()

    def boom() -> None:
        raise RuntimeError("boom")

    pool.submit(boom)
    pool.submit(ran.set)
    assert ran.wait(2)
    pool.stop()


def test_stop_is_idempotent_and_refuses_new_work() -> None:
    pool = WorkerPool(2, 2, 1.0)
    pool.start()
    pool.stop()
    pool.stop()
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)


@pytest.mark.parametrize(("lo", "hi"), [(0, 0), (3, 2), (-1, 2)])
def test_invalid_sizes(lo: int, hi: int) -> None:
    with pytest.raises(ValueError):
        WorkerPool(lo, hi, 1.0)
