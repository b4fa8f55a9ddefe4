"""Summaries of repeated measurements."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

__all__ = ["percentile", "summarise"]


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100), linear between the closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summarise(seconds: Sequence[float], unit: str = "ms") -> dict[str, Any]:
    """n, median, p99, min, max and mean of durations, in ``ms`` or ``s``."""
    scale = 1000.0 if unit == "ms" else 1.0
    values = [s * scale for s in seconds]
    if not values:
        return {"n": 0, "unit": unit}
    return {
        "n": len(values),
        "unit": unit,
        "median": round(statistics.median(values), 4),
        "p99": round(percentile(values, 99), 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
        "mean": round(statistics.fmean(values), 4),
    }
