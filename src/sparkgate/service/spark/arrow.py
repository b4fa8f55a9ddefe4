"""Streaming a DataFrame's rows to Python as Arrow batches, in bounded memory.

``DataFrame.toArrow()`` materialises the whole result; ``toLocalIterator()``
makes Row objects (ten times slower per row). Instead the JVM converts each
partition to Arrow record batches (``Dataset.toArrowBatchRdd``) and serves
them partition by partition through Spark's local-iterator socket, fetching
the next partition while this one is read. Python holds one batch at a time,
the JVM at most two partitions: memory is bounded by the partition size, not
by the result size.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Generator
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["arrow_schema", "stream_batches"]

log = logging.getLogger(__name__)


def arrow_schema(df: DataFrame) -> pa.Schema:
    """The Arrow schema Spark uses for ``df`` (an empty collection runs no job)."""
    return df.limit(0).toArrow().schema


def stream_batches(df: DataFrame, schema: pa.Schema) -> Generator[pa.RecordBatch, None, None]:
    """Yield ``df``'s rows as Arrow batches of ``schema``, in order.

    Closing the generator early closes the socket; the caller cancels the
    Spark jobs by tag first so the JVM side stops promptly.
    """
    from pyspark.serializers import NoOpSerializer, read_int, write_int
    from pyspark.util import _create_local_socket

    sc = df.sparkSession.sparkContext
    jrdd = df._jdf.toArrowBatchRdd()
    port, secret, server = sc._jvm.PythonRDD.toLocalIteratorAndServe(  # type: ignore[union-attr]
        jrdd, True
    )
    sockfile, sock = _create_local_socket((port, secret))
    frames = NoOpSerializer()
    finished = False
    try:
        while True:
            write_int(1, sockfile)  # ask for the next partition
            sockfile.flush()
            status = read_int(sockfile)
            if status == 0:
                finished = True
                return
            if status == -1:
                finished = True
                server.getResult()  # raises the JVM's error
                return
            for frame in frames.load_stream(sockfile):
                yield pa.ipc.read_record_batch(pa.py_buffer(frame), schema)
    finally:
        if not finished:
            with contextlib.suppress(Exception):
                write_int(0, sockfile)  # tell the JVM to stop serving
                sockfile.flush()
        with contextlib.suppress(Exception):
            sockfile.close()
        with contextlib.suppress(Exception):
            sock.close()
