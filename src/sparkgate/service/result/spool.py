"""Result spooling (``sql-gateway.result.spool``): a query's result kept in files.

With spooling on, the Arrow batches a query's result streams from Spark are
also written, as they come, to ``<data-dir>/results/<session>/<operation>.arrow``
(an Arrow IPC stream), and the pages handed to the client are recorded by
row count beside it (``.json``). A client can then fetch any page again by
its token, not only the last one, restart the result from its first row
(HiveServer2's FETCH_FIRST), and, with persistent sessions, go on fetching
after a restart of the gateway.

Bounded: all kept results together take at most ``spool.max-size`` bytes (a
result that would pass it stops being kept: the pages kept so far stay
replayable), and results older than ``spool.retention`` are deleted. A
result goes when its operation or session is closed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from sparkgate.api.errors import InvalidTokenError
from sparkgate.api.results import ResultKind
from sparkgate.api.types import ResultSchema
from sparkgate.service.result.buffer import Take

__all__ = ["ResultSpool", "SpoolStore", "SpooledRows"]

log = logging.getLogger(__name__)

_META_EVERY_S = 1.0
_MESSAGE_BYTES = 256
_SWEEP_EVERY_S = 60.0


class ResultSpool:
    """One kept result: written by its producer, its pages recorded by its fetcher."""

    def __init__(self, store: SpoolStore, path: Path, meta: dict[str, Any] | None = None) -> None:
        self._store = store
        self.path = path
        self._lock = threading.Lock()
        self._sink: Any = None
        self._writer: Any = None
        self._meta_written = 0.0
        # Discarded (its operation closed): a producer still finishing writes nothing
        # more, or its files would outlive it.
        self._discarded = False
        meta = meta or {}
        self.schema = ResultSchema.from_json(meta.get("schema") or [])
        self.result_kind = ResultKind(
            meta.get("result_kind", ResultKind.SUCCESS_WITH_CONTENT.value)
        )
        self.created = float(meta.get("created") or time.time())
        #: (byte offset, rows) of each batch in the file.
        self.batches: list[tuple[int, int]] = [(int(o), int(n)) for o, n in meta.get("batches", [])]
        #: Rows of each page handed out, in token order.
        self.pages: list[int] = [int(n) for n in meta.get("pages", [])]
        self.complete = bool(meta.get("complete"))
        #: It passed the store's bound: rows after ``rows`` were not kept.
        self.limited = bool(meta.get("limited"))
        self.bytes = int(meta.get("bytes") or 0)

    @property
    def rows(self) -> int:
        return sum(n for _, n in self.batches)

    @property
    def paged_rows(self) -> int:
        return sum(self.pages)

    # -- the producer --------------------------------------------------------------
    def write(self, batch: pa.RecordBatch) -> None:
        with self._lock:
            if self._discarded or self.limited or self.complete or batch.num_rows == 0:
                return
            try:
                if self._writer is None:
                    self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                    self._sink = pa.OSFile(str(self.path), "wb")
                    self._writer = pa.ipc.new_stream(self._sink, batch.schema)
                    # The schema goes out with the first batch: an empty one puts it
                    # first, so each real batch starts at the offset told before it.
                    self._writer.write_batch(batch.slice(0, 0))
                offset = self._sink.tell()
                # Its bytes on disk: the data and the message's metadata.
                if not self._store.reserve(batch.nbytes + _MESSAGE_BYTES):
                    self._limit("the spool is full (sql-gateway.result.spool.max-size)")
                    return
                self._writer.write_batch(batch)
                self.bytes += self._sink.tell() - offset
                self.batches.append((offset, batch.num_rows))
            except OSError as exc:
                self._limit(f"writing it failed: {exc}")
                return
            self._save_meta(force=False)

    def finish(self) -> None:
        """The result ended: every row is in the file."""
        with self._lock:
            if self.limited or self._discarded:
                return
            self._close_writer()
            self.complete = True
            self._save_meta(force=True)

    def _limit(self, why: str) -> None:
        log.info("Result %s is kept up to row %d only: %s", self.path.stem, self.rows, why)
        self.limited = True
        self._close_writer()
        self._save_meta(force=True)

    def _close_writer(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
                self._sink.close()
            self._writer = self._sink = None

    # -- the fetcher ---------------------------------------------------------------
    def paged(self, rows: int, end: bool) -> None:
        """A page of ``rows`` rows was handed out (``end``: the end of the result)."""
        with self._lock:
            self.pages.append(rows)
            self._save_meta(force=end)

    def page(self, token: int) -> list[pa.RecordBatch] | None:
        """The rows of the page of ``token``; None when they were not kept."""
        with self._lock:
            if token >= len(self.pages):
                return None
            start = sum(self.pages[:token])
            count = self.pages[token]
        return self.read(start, count)

    def read(self, start: int, count: int) -> list[pa.RecordBatch] | None:
        """Rows ``start`` to ``start + count`` (fewer at the end); None: not kept."""
        with self._lock:
            if start >= self.rows and not self.complete:
                return None  # not written yet, or never: not kept
            wanted = [
                (o, n, r) for (o, n), r in zip(self.batches, _starts(self.batches), strict=True)
            ]
        if count == 0 or not wanted:
            return []
        out: list[pa.RecordBatch] = []
        with pa.memory_map(str(self.path)) as source:
            schema = pa.ipc.open_stream(source).schema
            for offset, rows, first in wanted:
                if first + rows <= start or first >= start + count:
                    continue
                source.seek(offset)
                batch = pa.ipc.read_record_batch(pa.ipc.read_message(source), schema)
                lo = max(start - first, 0)
                hi = min(start + count - first, rows)
                out.append(batch.slice(lo, hi - lo))
        return out

    # -- its files -----------------------------------------------------------------
    def _save_meta(self, *, force: bool) -> None:
        now = time.monotonic()
        if self._discarded or (not force and now - self._meta_written < _META_EVERY_S):
            return
        self._meta_written = now
        meta = {
            "schema": self.schema.to_json(),
            "result_kind": self.result_kind.value,
            "created": self.created,
            "batches": self.batches,
            "pages": self.pages,
            "complete": self.complete,
            "limited": self.limited,
            "bytes": self.bytes,
        }
        target = self.path.with_suffix(".json")
        tmp = target.with_name(f".{target.name}.tmp")
        try:
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(meta, out)
            os.replace(tmp, target)
        except OSError:
            log.warning("Could not record the pages of result %s", self.path.stem, exc_info=True)

    def discard(self) -> None:
        with self._lock:
            self._discarded = True
            self._close_writer()
            self._store.release(self.bytes)
            self.bytes = 0
            for path in (self.path, self.path.with_suffix(".json")):
                with contextlib.suppress(OSError):
                    path.unlink()


def _starts(batches: Sequence[tuple[int, int]]) -> list[int]:
    starts, row = [], 0
    for _, rows in batches:
        starts.append(row)
        row += rows
    return starts


class SpooledRows:
    """The rows of a kept result after its first ``start``, as a result buffer gives
    them (a fetcher reads a result kept by an earlier process through it)."""

    def __init__(self, spool: ResultSpool, start: int) -> None:
        self._spool = spool
        self._next = start

    def take(self, max_rows: int, wait: float = 0.0) -> Take:
        batches = self._spool.read(self._next, max_rows)
        if batches is None:
            raise InvalidTokenError(
                "The rest of this result was not kept across the gateway's restart "
                "(it was still being read, or past sql-gateway.result.spool.max-size); "
                "run the statement again."
            )
        rows = sum(b.num_rows for b in batches)
        self._next += rows
        return Take(tuple(batches), None, rows == 0)

    def close(self) -> None:
        """Nothing streams into it: nothing to stop."""

    def fail(self, error: BaseException) -> None:
        """Nothing streams into it: nothing fails."""


class SpoolStore:
    """The kept results under one directory: their total size and age bounded."""

    def __init__(self, directory: Path, max_bytes: int, retention_s: float) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self.retention_s = retention_s
        self._lock = threading.Lock()
        self._bytes = 0
        self._swept = 0.0

    def start(self) -> None:
        """Delete what is past its retention; count what stays."""
        self.sweep(force=True)

    def sweep(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._swept < _SWEEP_EVERY_S:
            return
        self._swept = now
        horizon = time.time() - self.retention_s
        total = 0
        for meta in self.directory.glob("*/*.json"):
            data = meta.with_suffix(".arrow")
            try:
                if meta.stat().st_mtime < horizon:
                    for path in (meta, data):
                        with contextlib.suppress(OSError):
                            path.unlink()
                    continue
                total += data.stat().st_size if data.exists() else 0
            except OSError:
                continue
        for session in self.directory.glob("*"):
            with contextlib.suppress(OSError):
                session.rmdir()  # only when empty
        with self._lock:
            self._bytes = total

    def reserve(self, nbytes: int) -> bool:
        with self._lock:
            if self._bytes + nbytes > self.max_bytes:
                return False
            self._bytes += nbytes
            return True

    def release(self, nbytes: int) -> None:
        with self._lock:
            self._bytes = max(self._bytes - nbytes, 0)

    def _path(self, session: str, operation: str) -> Path:
        return self.directory / session / f"{operation}.arrow"

    def create(
        self, session: str, operation: str, schema: ResultSchema, kind: ResultKind
    ) -> ResultSpool:
        self.sweep()
        spool = ResultSpool(self, self._path(session, operation))
        spool.schema = schema
        spool.result_kind = kind
        return spool

    def find(self, session: str, operation: str) -> ResultSpool | None:
        """A result an earlier process kept, or None."""
        path = self._path(session, operation)
        try:
            meta = json.loads(path.with_suffix(".json").read_text("utf-8"))
        except (OSError, ValueError):
            return None
        if time.time() - float(meta.get("created") or 0) > self.retention_s:
            return None
        return ResultSpool(self, path, meta)

    def remove_session(self, session: str) -> None:
        directory = self.directory / session
        if directory.is_dir():
            freed = sum(p.stat().st_size for p in directory.glob("*.arrow") if p.exists())
            shutil.rmtree(directory, ignore_errors=True)
            self.release(freed)
