"""Streaming on Spark: Flink's connector tables, runtime mode, changelog results,
long-running jobs and statement sets (see docs/streaming.md)."""

from __future__ import annotations

__all__: list[str] = []
