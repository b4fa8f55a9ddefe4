"""Streaming a DataFrame's rows to Python as Arrow batches, in bounded memory.

``DataFrame.toArrow()`` materialises the whole result; ``toLocalIterator()``
makes Row objects and pays about 100 ms per partition job. Instead the JVM
converts each partition to Arrow record batches (``Dataset.toArrowBatchRdd``)
and we collect a *window* of partitions per Spark job (``PythonRDD.runJob``,
what PySpark's ``SparkContext.runJob`` uses), reading its batches one by one
from the socket Spark serves them on. The partitions of one window run in
parallel; memory is bounded by the window, not by the result. Measured on two
cores: 3 M rows by 5 columns in 1.7 s against 3.6 s for ``toArrow()``, and a
one-row result in about 30 ms.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["arrow_schema", "stream_batches"]

log = logging.getLogger(__name__)


def arrow_schema(df: DataFrame) -> pa.Schema:
    """The Arrow schema of the batches ``toArrowBatchRdd`` makes for ``df``.

    Computed in Python from the Spark schema with the session's settings the
    JVM uses (time zone label, large var types): no Spark job, no JVM trip.
    """
    from pyspark.sql.pandas.types import to_arrow_schema

    large, time_zone = df.sparkSession._jconf.getConfs(
        ["spark.sql.execution.arrow.useLargeVarTypes", "spark.sql.session.timeZone"]
    )
    return to_arrow_schema(
        df.schema,
        error_on_duplicated_field_names_in_struct=False,
        timezone=time_zone,
        prefers_large_types=large == "true",
    )


def stream_batches(
    df: DataFrame, schema: pa.Schema, window: int
) -> Generator[pa.RecordBatch, None, None]:
    """Yield ``df``'s rows as Arrow batches of ``schema``, in order.

    ``window`` partitions are computed per Spark job. The jobs run on the
    calling thread, so they carry its job tag and description.
    """
    from pyspark.serializers import NoOpSerializer
    from pyspark.util import _load_from_socket

    sc = df.sparkSession.sparkContext
    jvm = sc._jvm
    assert jvm is not None
    jrdd = df._jdf.toArrowBatchRdd().toJavaRDD()
    partitions = jrdd.getNumPartitions()
    frames_of = NoOpSerializer()
    for start in range(0, partitions, max(window, 1)):
        chunk = list(range(start, min(start + window, partitions)))
        sock_info = jvm.PythonRDD.runJob(sc._jsc.sc(), jrdd, chunk)
        with _load_from_socket(sock_info, frames_of) as frames:
            for frame in frames:
                yield pa.ipc.read_record_batch(pa.py_buffer(frame), schema)
