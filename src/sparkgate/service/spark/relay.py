"""A result relayed from Spark's tasks to the gateway, one bounded batch at a time.

Collecting a partition (``runJob``) holds all of it on the driver at once: an
ordinary ``SELECT`` of 50 M rows on two cores is two 25 M-row partitions, and
the driver dies of ``OutOfMemoryError``. Here each partition's task instead
sends its rows as it computes them: ``mapInArrow`` hands the rows to a Python
worker in Arrow batches of ``spark.sql.execution.arrow.maxRecordsPerBatch``
rows, and the worker writes them as an Arrow IPC stream to a socket the
gateway listens on (the driver's host, a port and token of this result).

The gateway drains the socket into a spool file as fast as the task sends, so
a slow client does not hold a task slot that other sessions need; the reader
of the result tails the file. Partitions run one Spark job each, in order, one
ahead of the reader: the engine holds a few batches per running task, the
gateway's memory holds none, and the disk holds at most two partitions, or
``spool_bytes`` unread bytes, beyond which the task waits for the reader (TCP
backpressure). A batch larger than ``max_batch_bytes`` fails the statement in
its task with an error naming the option.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import socket
import struct
import tempfile
import threading
import uuid
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from sparkgate.service.spark.jvm_cache import scala_context
from sparkgate.service.spark.limits import ResultLimits

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["BATCH_BYTES_OPTION", "RelayError", "relay_batches"]

log = logging.getLogger(__name__)

#: The option named by the error for a batch too big to relay (options.RESULT_MAX_BATCH_SIZE).
BATCH_BYTES_OPTION = "sql-gateway.result.max-batch-size"
_HEADER = struct.Struct(">16sI")
_POLL_S = 0.2
_CHUNK = 1 << 20
_CONNECT_TIMEOUT_S = 10.0
_STOP_TIMEOUT_S = 30.0


class RelayError(Exception):
    """The relay itself failed: a task's stream was cut or never came."""


def _sender(
    host: str, port: int, token: bytes, schema: pa.Schema, max_batch_bytes: int
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each task runs (a closure, pickled by value: executors need
    pyarrow and pyspark, not sparkgate)."""

    def send(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import socket as sock
        import struct as st

        import pyarrow as arrow
        from pyspark import TaskContext

        context = TaskContext.get()
        partition = context.partitionId() if context is not None else 0
        with (
            sock.create_connection((host, port)) as conn,
            conn.makefile("wb", buffering=1 << 20) as out,
        ):
            out.write(st.pack(">16sI", token, partition))
            with arrow.ipc.new_stream(out, schema) as writer:
                for batch in batches:
                    if batch.nbytes > max_batch_bytes:
                        raise ValueError(
                            f"A batch of {batch.num_rows} result rows takes {batch.nbytes} "
                            f"bytes, more than {BATCH_BYTES_OPTION} ({max_batch_bytes}); "
                            "raise it, or lower spark.sql.execution.arrow.maxRecordsPerBatch"
                        )
                    writer.write_batch(arrow.RecordBatch.from_arrays(batch.columns, schema=schema))
        return iter(())

    return send


class _Spool:
    """One partition's stream in a file: written by the socket drainer, tailed by
    the reader; the drainer pauses while ``limit`` bytes are unread."""

    def __init__(self, path: Path, limit: int) -> None:
        self.path = path
        self._limit = limit
        self._written = 0
        self._read = 0
        self._done = False
        self._closed = False
        self.error: BaseException | None = None
        self._cond = threading.Condition()
        self._out = path.open("wb")
        self._in = path.open("rb")

    # -- drainer ----------------------------------------------------------------
    def drain(self, conn: socket.socket) -> OSError | None:
        """Copy the task's stream into the file; the end is marked by :meth:`finish`
        once the task's job has ended (a failed task's stream may look whole)."""
        try:
            with conn:
                while True:
                    with self._cond:
                        while not self._closed and self._written - self._read >= self._limit:
                            self._cond.wait()
                        if self._closed:
                            return None
                    chunk = conn.recv(_CHUNK)
                    if not chunk:
                        return None
                    with self._cond:
                        if self._out.closed:  # the reader is gone, and so is the file
                            return None
                        self._out.write(chunk)
                        self._out.flush()
                        self._written += len(chunk)
                        self._cond.notify_all()
        except OSError as exc:
            return exc

    def wait_finished(self) -> BaseException | None:
        """Wait until the task's job has ended; its error, if it failed."""
        with self._cond:
            while not self._done and not self._closed:
                self._cond.wait()
            return self.error

    def finish(self, error: BaseException | None = None) -> None:
        with self._cond:
            self._done = True
            self.error = self.error or error
            self._cond.notify_all()

    # -- reader (a file object for pa.ipc.open_stream) -----------------------------
    def read(self, size: int = -1) -> bytes:
        wanted = size if size >= 0 else _CHUNK
        parts: list[bytes] = []
        got = 0
        while got < wanted:
            with self._cond:
                while not self._closed and self._read == self._written and not self._done:
                    self._cond.wait()
                available = self._written - self._read
                if available == 0:
                    break
            data = self._in.read(min(wanted - got, available))
            with self._cond:
                self._read += len(data)
                self._cond.notify_all()
            parts.append(data)
            got += len(data)
            if size < 0:
                break
        return b"".join(parts)

    @property
    def closed(self) -> bool:
        return self._closed

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            self._out.close()
        self._in.close()
        self.path.unlink(missing_ok=True)


class _Relay:
    """The Spark side: a listener, and one job per partition run one ahead."""

    def __init__(
        self, df: DataFrame, schema: pa.Schema, spool_dir: Path, limits: ResultLimits
    ) -> None:
        from pyspark.util import InheritableThread

        self._sc = df.sparkSession.sparkContext
        host: str = self._sc.getConf().get("spark.driver.host", "127.0.0.1")
        self._token = secrets.token_bytes(16)
        self._tag = f"sparkgate-relay-{uuid.uuid4().hex}"
        self._listener = socket.create_server((host, 0), backlog=64)
        self._listener.settimeout(_POLL_S)
        positional = df.toDF(*[f"_{i}" for i in range(len(df.columns))])
        wire = pa.schema([field.with_name(f"_{i}") for i, field in enumerate(schema)])
        sender = _sender(
            host, self._listener.getsockname()[1], self._token, wire, limits.max_batch_bytes
        )
        # The tasks return no rows: what they compute goes to the socket.
        self._rdd = positional.mapInArrow(sender, "sent int")._jdf.toArrowBatchRdd().toJavaRDD()
        self.partitions: int = self._rdd.getNumPartitions()
        self._spool_dir = spool_dir
        self._spool_bytes: int = limits.spool_bytes
        self._spools: dict[int, _Spool] = {}
        self._unread = threading.Semaphore(2)  # spooled partitions not yet read
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = InheritableThread(target=self._run, name="sparkgate-relay", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            scala_context(self._sc).addJobTag(self._tag)
            for partition in range(self.partitions):
                self._unread.acquire()
                if self._stopped:
                    return
                spool = _Spool(
                    self._spool_dir / f"{self._tag}-{partition}.arrows", self._spool_bytes
                )
                with self._cond:
                    self._spools[partition] = spool
                    self._cond.notify_all()
                self._partition(partition, spool)
        finally:
            with contextlib.suppress(Exception):
                scala_context(self._sc).removeJobTag(self._tag)

    def _partition(self, partition: int, spool: _Spool) -> None:
        from pyspark.serializers import NoOpSerializer
        from pyspark.util import InheritableThread, _load_from_socket

        failure: list[BaseException] = []

        def job() -> None:
            try:
                jvm = self._sc._jvm
                assert jvm is not None
                info = jvm.PythonRDD.runJob(scala_context(self._sc), self._rdd, [partition])
                with _load_from_socket(info, NoOpSerializer()) as frames:
                    for _ in frames:  # the tasks return nothing
                        pass
            except BaseException as exc:
                failure.append(exc)

        runner = InheritableThread(target=job, name=f"sparkgate-relay-{partition}", daemon=True)
        runner.start()
        conn = self._accept(partition, runner)
        cut = spool.drain(conn) if conn is not None else None
        runner.join()
        if failure:
            spool.finish(failure[0])
        elif conn is None:
            spool.finish(RelayError(f"No stream came from the task of partition {partition}"))
        else:
            spool.finish(cut)

    def _accept(self, partition: int, runner: threading.Thread) -> socket.socket | None:
        while not self._stopped:
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                if not runner.is_alive():
                    return None
                continue
            except OSError:
                return None
            conn.settimeout(_CONNECT_TIMEOUT_S)
            try:
                header = conn.recv(_HEADER.size, socket.MSG_WAITALL)
            except OSError:
                header = b""
            if len(header) == _HEADER.size:
                token, sent = _HEADER.unpack(header)
                if secrets.compare_digest(token, self._token) and sent == partition:
                    conn.settimeout(None)
                    return conn
            log.warning("Dropped an unexpected connection to a result relay")
            conn.close()
        return None

    def spool(self, partition: int) -> _Spool:
        with self._cond:
            while partition not in self._spools:
                self._cond.wait()
            return self._spools[partition]

    def read(self, partition: int) -> None:
        """The reader is done with ``partition``: its file goes, the next may spool."""
        with self._cond:
            spool = self._spools.pop(partition)
        spool.close()
        self._unread.release()

    def stop(self) -> None:
        """Cancel what runs, remove every spool file, wait for the jobs to end."""
        self._stopped = True
        self._listener.close()
        with self._cond:
            spools = list(self._spools.values())
        for spool in spools:
            spool.close()
        self._unread.release()
        waited = 0.0
        while self._thread.is_alive() and waited < _STOP_TIMEOUT_S:
            # Again and again: a job submitted just after a cancel is cancelled next time.
            self._sc.cancelJobsWithTag(self._tag)
            self._thread.join(0.5)
            waited += 0.5
        with self._cond:
            for spool in self._spools.values():
                spool.close()


def relay_batches(
    df: DataFrame, schema: pa.Schema, limits: ResultLimits
) -> Generator[pa.RecordBatch, None, None]:
    """Yield ``df``'s rows as Arrow batches of ``schema``, in order, relayed by its tasks."""
    directory = limits.spool_dir or Path(tempfile.gettempdir())
    directory.mkdir(parents=True, exist_ok=True)
    relay = _Relay(df, schema, directory, limits)
    try:
        for partition in range(relay.partitions):
            spool = relay.spool(partition)
            try:
                reader = pa.ipc.open_stream(spool)
                for batch in reader:
                    yield pa.RecordBatch.from_arrays(batch.columns, schema=schema)
            except (pa.ArrowInvalid, OSError) as exc:
                # A failed task cuts its stream: the job's error is the cause.
                raise spool.error or RelayError(
                    f"Partition {partition} of the result was cut off: {exc}"
                ) from exc
            # A failing task may still end its stream cleanly: its job tells.
            error = spool.wait_finished()
            if error is not None:
                raise error
            relay.read(partition)
    finally:
        relay.stop()
