"""Restarts of a dead engine are bounded: a back-off doubling up to a minute, at most
so many restarts in a window, each death and restart logged at WARNING with its cause
and counted. Driven by a fake clock and a back-off that does not sleep (no JVM)."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from sparkgate.api.health import EngineState
from sparkgate.service.health import EngineWatch, RestartBudget, next_backoff

_LOGGER = "sparkgate.service.health"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Engine:
    """A recovery that fails its first ``failures`` starts; the back-offs waited."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.starts: list[str] = []
        self.pauses: list[float] = []

    def recover(self, cause: str) -> None:
        self.starts.append(cause)
        if len(self.starts) <= self.failures:
            raise RuntimeError(f"no JVM, start {len(self.starts)}")

    def pause(self, seconds: float) -> bool:
        self.pauses.append(seconds)
        return False  # not stopped meanwhile


def watch_of(engine: Engine, budget: RestartBudget, backoff_s: float = 1.0) -> EngineWatch:
    watch = EngineWatch(
        lambda: None,
        engine.recover,
        interval_s=0.01,
        budget=budget,
        backoff_s=backoff_s,
        pause=engine.pause,
    )
    watch.up()
    return watch


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


# -- the back-off ------------------------------------------------------------------


def test_the_backoff_doubles_up_to_a_minute() -> None:
    waits = [1.0]
    for _ in range(8):
        waits.append(next_backoff(waits[-1]))
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60, 60]
    assert next_backoff(45) == 60 and next_backoff(90) == 60
    # A zero (or tiny) back-off still waits a second after a failed start.
    assert next_backoff(0) == 1 and next_backoff(0.2) == 1


def test_each_failed_start_waits_twice_as_long_as_the_one_before(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=_LOGGER)
    engine = Engine(failures=7)
    watch = watch_of(engine, RestartBudget(10, 600, Clock()))
    watch.heal("engine JVM killed by signal 9")
    assert engine.pauses == [1, 2, 4, 8, 16, 32, 60, 60]
    assert len(engine.starts) == 8
    health = watch.health
    assert health.state is EngineState.UP and health.ready and health.restarts == 1
    logged = warnings(caplog)
    assert logged[0] == "The Spark engine died: engine JVM killed by signal 9"
    failed = [m for m in logged if m.startswith("A new Spark engine failed to start")]
    assert len(failed) == 7
    assert all("engine JVM killed by signal 9" in m and "no JVM" in m for m in failed)
    assert (
        logged[-1] == "A new Spark engine serves (restart 1, after: engine JVM killed by signal 9)"
    )


def test_the_configured_backoff_is_the_first_wait() -> None:
    engine = Engine(failures=2)
    watch_of(engine, RestartBudget(5, 600, Clock()), backoff_s=5).heal("exited with 52")
    assert engine.pauses == [5, 10, 20]


# -- the budget --------------------------------------------------------------------


def test_restarts_past_the_limit_in_a_window_are_refused_then_allowed_again() -> None:
    clock = Clock()
    budget = RestartBudget(3, 600, clock)
    assert [budget.take() for _ in range(3)] == [True, True, True]
    assert not budget.take()
    clock.now += 300
    assert not budget.take()  # all three still within the window
    clock.now += 300
    assert not budget.take()  # exactly a window after: still counted
    clock.now += 0.5
    assert budget.take()  # the oldest three have left the window
    assert budget.take() and budget.take()
    assert not budget.take()


def test_the_window_slides() -> None:
    clock = Clock()
    budget = RestartBudget(2, 10, clock)
    assert budget.take()
    clock.now += 6
    assert budget.take()
    clock.now += 5  # the first is 11 s old, the second 5 s
    assert budget.take()
    assert not budget.take()


def test_no_restarts_allowed() -> None:
    assert not RestartBudget(0, 600, Clock()).take()


def test_an_engine_that_cannot_start_stays_down_once_the_budget_is_spent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=_LOGGER)
    engine = Engine(failures=100)
    watch = watch_of(engine, RestartBudget(3, 600, Clock()))
    watch.heal("exited with 52: java.lang.OutOfMemoryError")
    assert len(engine.starts) == 3 and engine.pauses == [1, 2, 4]
    health = watch.health
    assert health.state is EngineState.DOWN and not health.ready and health.restarts == 0
    assert health.cause == "exited with 52: java.lang.OutOfMemoryError; no more restarts allowed"
    refused = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(refused) == 1 and "3 restarts within 600 s" in refused[0].getMessage()


def test_deaths_past_the_limit_in_a_window_are_not_healed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=_LOGGER)
    clock = Clock()
    engine = Engine()
    watch = watch_of(engine, RestartBudget(2, 600, clock))
    watch.heal("signal 9")
    clock.now += 10
    watch.heal("exited with 3")
    assert watch.health.state is EngineState.UP and watch.health.restarts == 2
    # Each restart is logged at WARNING with its cause, and counted.
    logged = warnings(caplog)
    assert "A new Spark engine serves (restart 1, after: signal 9)" in logged
    assert "A new Spark engine serves (restart 2, after: exited with 3)" in logged
    clock.now += 10
    watch.heal("exited with 52")
    assert engine.starts == ["signal 9", "exited with 3"]
    health = watch.health
    assert health.state is EngineState.DOWN and health.restarts == 2
    assert health.cause == "exited with 52; no more restarts allowed"


def test_a_death_once_the_window_has_passed_is_healed_again() -> None:
    clock = Clock()
    engine = Engine()
    watch = watch_of(engine, RestartBudget(2, 600, clock))
    watch.heal("signal 9")
    clock.now += 10
    watch.heal("exited with 3")
    clock.now += 600  # the first restart has left the window, the second not
    watch.heal("signal 15")
    assert watch.health.state is EngineState.UP and watch.health.restarts == 3
    assert engine.starts == ["signal 9", "exited with 3", "signal 15"]
    watch.heal("exited with 52")  # two restarts within the window again
    assert watch.health.state is EngineState.DOWN and watch.health.restarts == 3


# -- the watch's thread ------------------------------------------------------------


def test_the_watch_heals_a_death_it_sees(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=_LOGGER)
    deaths = ["engine JVM killed by signal 9"]
    healed = threading.Event()

    def recover(cause: str) -> None:
        healed.set()

    watch = EngineWatch(
        lambda: deaths.pop() if deaths else None,
        recover,
        interval_s=0.01,
        budget=RestartBudget(3, 600),
        backoff_s=0.01,
    )
    watch.up()
    watch.start()
    try:
        assert healed.wait(10)
        deadline = time.monotonic() + 10
        while watch.health.restarts < 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        watch.stop()
    assert watch.health.state is EngineState.UP
    assert "The Spark engine died: engine JVM killed by signal 9" in warnings(caplog)


def test_a_stopped_watch_starts_no_engine() -> None:
    started: list[str] = []
    watch = EngineWatch(
        lambda: None,
        started.append,
        interval_s=0.01,
        budget=RestartBudget(3, 600),
        backoff_s=60,
    )
    watch.up()
    stopper = threading.Timer(0.05, watch.stop)
    stopper.start()
    watch.heal("signal 9")  # waits out its back-off until stopped
    stopper.join()
    assert started == [] and watch.health.state is EngineState.DOWN
