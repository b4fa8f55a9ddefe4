"""The small interface every target implements.

A *target* is one way of running SQL on Spark (in-process PySpark, the
gateway over REST, Spark's Thrift server, ...). A *mode* is one way a target
returns rows (``arrow``, ``json``, ``rows``, ``jdbc``); latency workloads use the
target's first mode, fetch workloads every mode. ``Session.execute`` runs one
statement, fetches its result to the end of the stream, decodes every value
and returns the number of rows. Server sessions also ``submit`` a statement
as a :class:`Background` one, left running while the client does other work.
"""

from __future__ import annotations

import abc
import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from bench.settings import BenchSettings

__all__ = ["Background", "BenchError", "Session", "Target", "launched", "touch_arrow"]

log = logging.getLogger(__name__)


class BenchError(RuntimeError):
    """A statement failed, timed out or returned something unexpected."""


class Session(Protocol):
    def execute(self, sql: str) -> int:
        """Run ``sql``, fetch and decode the whole result; return the row count."""

    def close(self) -> None: ...


class Background(Protocol):
    """A statement left running while the client does other things."""

    def wait(self) -> int:
        """Block until the statement ends (or is cancelled); return the rows read."""

    def cancel(self) -> None:
        """Ask for the statement to end; thread-safe, returns at once."""

    def close(self) -> None: ...


class Target(abc.ABC):
    #: Short name used on the command line and in the JSON (``--targets``).
    name: str = ""
    #: Human label for tables.
    label: str = ""
    #: Row formats; the first is the one latency workloads use.
    modes: tuple[str, ...] = ()

    def __init__(self, settings: BenchSettings, work_dir: Path) -> None:
        self.settings = settings
        self.work_dir = work_dir
        self.startup_s: float | None = None

    def unavailable(self) -> str | None:
        """Why this target cannot run here (checked before starting), or None."""
        return None

    @abc.abstractmethod
    def launch(self) -> None:
        """Start what the target needs without waiting for it (servers boot in parallel)."""

    @abc.abstractmethod
    def wait_ready(self) -> None:
        """Block until the target accepts sessions and has answered one query."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop everything the target started; idempotent, never raises."""

    @abc.abstractmethod
    def open_session(self, mode: str | None = None) -> Session: ...

    def server_pids(self) -> list[int]:
        """Root processes whose process trees are "the server" for memory figures."""
        return []

    def client_pids(self) -> list[int]:
        """Client processes the benchmark runs for this target (the JDBC client's
        JVM): children of the benchmark's process, left out of its memory figures."""
        return []

    def info(self) -> dict[str, Any]:
        return {"label": self.label, "modes": list(self.modes)}

    def variant(self, mode: str) -> str:
        return f"{self.name}/{mode}"


T = TypeVar("T", bound=Target)


@contextlib.contextmanager
def launched(target: T) -> Iterator[T]:
    """Start a target a workload needs for itself and stop it when the block ends."""
    target.launch()
    try:
        target.wait_ready()
        yield target
    finally:
        target.stop()


def touch_arrow(table: pa.Table | pa.RecordBatch) -> float:
    """Read every value of every column with Arrow kernels (the Arrow client's
    "decode": the values are in memory in their final types, so one pass over
    each column is what a consumer does at least). Returns a checksum."""
    total = 0.0
    for column in table.columns:
        kind = column.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            value = pc.sum(pc.utf8_length(column)).as_py()
        elif pa.types.is_timestamp(kind) or pa.types.is_date(kind):
            value = pc.sum(column.cast(pa.int64())).as_py()
        elif pa.types.is_decimal(kind):
            value = pc.sum(column.cast(pa.float64())).as_py()
        elif pa.types.is_integer(kind) or pa.types.is_floating(kind):
            value = pc.sum(column).as_py()
        else:
            value = len(column.to_pylist())
        total += float(value or 0)
    return total
