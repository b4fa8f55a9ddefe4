"""The latency workloads warm each target up by count and by time before they count."""

from __future__ import annotations

import time
from typing import Any, cast

from bench.workloads import _interleaved, _Unit


def _unit(pause: float) -> tuple[_Unit, list[float]]:
    calls: list[float] = []

    def run() -> None:
        calls.append(time.perf_counter())
        time.sleep(pause)

    return _Unit("t", cast(Any, None), run), calls


def test_a_warm_up_lasts_its_seconds_and_no_run_of_it_is_counted() -> None:
    unit, calls = _unit(0.01)
    _interleaved([unit], warmup=3, repeats=5, budget=60.0, warmup_s=0.3)
    warm = len(calls) - len(unit.timings)
    assert len(unit.timings) == 5
    assert warm > 3  # more than the minimum count: the time ruled
    assert calls[warm - 1] - calls[0] >= 0.3 - 0.02


def test_a_warm_up_by_count_alone_runs_that_many() -> None:
    unit, calls = _unit(0.0)
    _interleaved([unit], warmup=4, repeats=2, budget=60.0)
    assert len(calls) == 6 and len(unit.timings) == 2
