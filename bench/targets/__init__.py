"""The targets under test, one module each, behind :class:`bench.targets.base.Target`."""

from __future__ import annotations

from bench.targets.base import BenchError, Session, Target
from bench.targets.hiveserver2 import HiveServer2Target
from bench.targets.inprocess import InProcessTarget
from bench.targets.rest import RestTarget
from bench.targets.thrift import ThriftTarget

__all__ = ["ALL_TARGETS", "BenchError", "Session", "Target"]

#: In report order; ``--targets`` picks by ``name``.
ALL_TARGETS: tuple[type[Target], ...] = (
    InProcessTarget,
    RestTarget,
    HiveServer2Target,
    ThriftTarget,
)
