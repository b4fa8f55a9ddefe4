"""The rate limit on connection-failure log lines (real loggers, a short interval)."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator

import pytest

from sparkgate.endpoints.log_limits import Kind, RateLimitFilter

INTERVAL = 0.5


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    @property
    def messages(self) -> list[str]:
        return [r.getMessage() for r in self.records]


@pytest.fixture
def logger() -> Iterator[tuple[logging.Logger, RateLimitFilter, _Records]]:
    log = logging.getLogger(f"tests.log_limits.{uuid.uuid4().hex}")
    log.setLevel(logging.DEBUG)
    log.propagate = False
    records = _Records()
    log.addHandler(records)
    limit = RateLimitFilter(
        [Kind("Client %s sent garbage"), Kind("Connection from %s failed", expected=False)],
        interval_s=INTERVAL,
    )
    log.addFilter(limit)
    yield log, limit, records
    limit.flush()
    log.removeFilter(limit)
    log.removeHandler(records)


def _wait_for(predicate: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.02)


def test_one_line_per_kind_then_one_with_the_count(
    logger: tuple[logging.Logger, RateLimitFilter, _Records],
) -> None:
    log, _, records = logger
    for n in range(1000):
        log.error("Client %s sent garbage", f"10.0.0.{n % 250}")
    assert records.messages == ["Client 10.0.0.0 sent garbage"]
    _wait_for(lambda: len(records.records) == 2)
    assert records.messages[1] == ("Client 10.0.0.249 sent garbage (and 998 more in the last 1 s)")
    # Expected failures go out at WARNING at most.
    assert {r.levelno for r in records.records} == {logging.WARNING}


def test_a_steady_flood_makes_one_line_per_interval(
    logger: tuple[logging.Logger, RateLimitFilter, _Records],
) -> None:
    log, limit, records = logger
    started = time.monotonic()
    sent = 0
    while time.monotonic() - started < INTERVAL * 4:
        log.info("Client %s sent garbage", "10.0.0.1")
        sent += 1
        time.sleep(0.001)
    limit.flush()
    # One line at the start, then one per interval at most (and the flush).
    assert 2 <= len(records.records) <= 6, records.messages
    counted = len(records.records) + sum(
        int(m.split("(and ")[1].split()[0]) for m in records.messages if "(and " in m
    )
    assert counted == sent


def test_other_records_pass_untouched(
    logger: tuple[logging.Logger, RateLimitFilter, _Records],
) -> None:
    log, _, records = logger
    for _ in range(3):
        log.error("Statement %s failed", "x")
    assert records.messages == ["Statement x failed"] * 3
    assert all(r.levelno == logging.ERROR for r in records.records)


def test_expected_failures_lose_their_traceback_and_unexpected_keep_the_first(
    logger: tuple[logging.Logger, RateLimitFilter, _Records],
) -> None:
    log, limit, records = logger
    for _ in range(3):
        try:
            raise ConnectionResetError("reset by peer")
        except ConnectionResetError:
            log.exception("Client %s sent garbage", "a")
            log.exception("Connection from %s failed", "b")
    limit.flush()
    garbage = [r for r in records.records if "garbage" in r.getMessage()]
    failed = [r for r in records.records if "failed" in r.getMessage()]
    assert [r.getMessage() for r in garbage] == [
        "Client a sent garbage: ConnectionResetError: reset by peer",
        "Client a sent garbage: ConnectionResetError: reset by peer (and 1 more in the last 1 s)",
    ]
    assert all(r.levelno == logging.WARNING and r.exc_info is None for r in garbage)
    # A failure of the gateway keeps its level, and its first record its traceback.
    assert [r.levelno for r in failed] == [logging.ERROR, logging.ERROR]
    assert failed[0].exc_info is not None and failed[1].exc_info is None
    assert failed[1].getMessage().endswith("(and 1 more in the last 1 s)")


def test_flush_logs_what_is_held_back_and_starts_afresh(
    logger: tuple[logging.Logger, RateLimitFilter, _Records],
) -> None:
    log, limit, records = logger
    log.warning("Client %s sent garbage", "a")
    log.warning("Client %s sent garbage", "b")
    limit.flush()
    assert records.messages == ["Client a sent garbage", "Client b sent garbage"]
    log.warning("Client %s sent garbage", "c")
    assert records.messages[-1] == "Client c sent garbage"
