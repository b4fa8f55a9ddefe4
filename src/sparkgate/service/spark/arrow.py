"""Streaming a DataFrame's rows to Python as Arrow batches, in bounded memory.

Two ways, chosen per result by Spark's own size estimate of the optimized plan
(:func:`fits_driver`): a small result is *collected* a window of partitions per
Spark job (below); anything else, or a plan whose estimate cannot be trusted
(generators and Python table functions multiply rows, compressed files expand),
is *relayed* by its tasks in bounded batches (:mod:`.relay`), which costs a
Python worker hop but bounds the engine's memory whatever the partition size.
Rows Spark already holds on the driver (a literal ``SELECT``, ``VALUES``, a
command's answer) are converted there, without a Spark job (:mod:`.driver_rows`).

``DataFrame.toArrow()`` materialises the whole result; ``toLocalIterator()``
makes Row objects and pays about 100 ms per partition job. Instead the JVM
converts each partition to Arrow record batches (``Dataset.toArrowBatchRdd``)
and we collect a *window* of partitions per Spark job (``PythonRDD.runJob``,
what PySpark's ``SparkContext.runJob`` uses), reading its batches one by one
from the socket Spark serves them on, joined up to one batch's rows (one page
for a small result, not one per partition). The partitions of one window run in
parallel; memory is bounded by the window, not by the result. Measured on two
cores: 3 M rows by 5 columns in 1.7 s against 3.6 s for ``toArrow()``, and a
one-row result in about 30 ms.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sparkgate.service.spark.confinement import simple_name
from sparkgate.service.spark.driver_rows import constant_batches, held_batches
from sparkgate.service.spark.jvm_cache import (
    default_time_zone,
    jvm_constant,
    scala_context,
    session_settings,
)
from sparkgate.service.spark.limits import ResultLimits
from sparkgate.service.spark.relay import relay_batches

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["ArrowSettings", "arrow_schema", "fits_driver", "stream_batches"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ArrowSettings:
    """The session's settings that shape the Arrow batches Spark makes."""

    max_records: int
    time_zone: str
    large_types: bool

    @classmethod
    def of(cls, spark: SparkSession) -> ArrowSettings:
        # Read now, not from the statement's scope: the statement itself may have
        # set them (its options, a SET). Unset keys take Spark's defaults.
        settings = session_settings(spark)
        zone = settings.get("spark.sql.session.timeZone")
        return cls(
            max_records=int(settings.get("spark.sql.execution.arrow.maxRecordsPerBatch", 10_000)),
            time_zone=zone or default_time_zone(spark.sparkContext._jvm),
            large_types=settings.get("spark.sql.execution.arrow.useLargeVarTypes") == "true",
        )


def arrow_schema(df: DataFrame, settings: ArrowSettings | None = None) -> pa.Schema:
    """The Arrow schema of the batches ``toArrowBatchRdd`` makes for ``df``.

    Computed in Python from the Spark schema with the session's settings the
    JVM uses (time zone label, large var types): no Spark job.
    """
    from pyspark.sql.pandas.types import to_arrow_schema

    settings = settings or ArrowSettings.of(df.sparkSession)
    return to_arrow_schema(
        df.schema,
        error_on_duplicated_field_names_in_struct=False,
        timezone=settings.time_zone,
        prefers_large_types=settings.large_types,
    )


# Logical operators whose output Spark's size estimate does not bound: they
# make any number of rows from one.
_EXPANDING = frozenset(
    {
        "Generate",
        "MapInPandas",
        "MapInArrow",
        "PythonMapInArrow",
        "FlatMapGroupsInPandas",
        "FlatMapGroupsInArrow",
        "FlatMapCoGroupsInPandas",
        "FlatMapCoGroupsInArrow",
        "BatchEvalPythonUDTF",
        "ArrowEvalPythonUDTF",
        "FlatMapGroupsInPandasWithState",
    }
)
# Leaves whose estimate is the size of the rows themselves; any other leaf reads
# files or tables, whose (compressed) size on disk may be a tenth of the rows'.
_EXACT_LEAVES = frozenset({"Range", "LocalRelation", "OneRowRelation", "CommandResult"})
_FILE_EXPANSION = 10


def _json_nodes(nodes: list[dict[str, Any]]) -> Generator[tuple[str, bool], None, None]:
    """Each node's name and whether it is a leaf, from the plan's ``toJSON`` (its
    nodes in pre-order): one round trip, where a walk over py4j made a dozen."""
    for node in nodes:
        yield simple_name(node.get("class", "")), node.get("num-children") == 0


def fits_driver(df: DataFrame, direct_bytes: int) -> bool:
    """Whether Spark's estimate of ``df``'s size says it can be collected whole."""
    plan = df._jdf.queryExecution().optimizedPlan()
    return _fits(plan, _plan_json(plan), direct_bytes)


def _fits(plan: Any, nodes: list[dict[str, Any]] | None, direct_bytes: int) -> bool:
    """Spark's estimate of ``plan`` (``nodes``: its ``toJSON``) within ``direct_bytes``.
    A plan Spark cannot render (None) is relayed: bounded whatever its size."""
    if nodes is None:
        return False
    estimate = int(plan.stats().sizeInBytes())
    for name, leaf in _json_nodes(nodes):
        if name in _EXPANDING:
            return False
        if leaf and name not in _EXACT_LEAVES:
            estimate *= _FILE_EXPANSION
    return estimate <= direct_bytes


def stream_batches(
    df: DataFrame, schema: pa.Schema, limits: ResultLimits, settings: ArrowSettings
) -> Generator[pa.RecordBatch, None, None]:
    """Yield ``df``'s rows as Arrow batches of ``schema``, in order.

    The Spark jobs carry the calling thread's job tags and description.
    """
    execution = df._jdf.queryExecution()
    jvm = df.sparkSession.sparkContext._jvm
    held = held_batches(jvm, execution.executedPlan(), schema, limits.max_batch_bytes, settings)
    if held is not None:
        return held
    logical = execution.optimizedPlan()
    # The optimized plan read once, as JSON: walked over py4j, node by node and
    # field by field, the choice below cost a dozen round trips per statement.
    # A plan Spark cannot render takes the paths that hold for any plan: a
    # Spark job, its rows relayed.
    nodes = _plan_json(logical)
    constant = constant_batches(jvm, logical, nodes, schema, limits.max_batch_bytes, settings)
    if constant is not None:
        return constant
    if _fits(logical, nodes, limits.direct_bytes):
        return _collected(df, schema, limits, settings.max_records)
    log.debug("relaying a result Spark estimates above %d bytes", limits.direct_bytes)
    return relay_batches(df, schema, limits)


def _plan_json(plan: Any) -> list[dict[str, Any]] | None:
    """``plan.toJSON()`` parsed, or None when Spark cannot render it."""
    try:
        nodes = json.loads(str(plan.toJSON()))
    except Exception:
        log.debug("no JSON rendering of the optimized plan", exc_info=True)
        return None
    return nodes if isinstance(nodes, list) else None


def _collected(
    df: DataFrame, schema: pa.Schema, limits: ResultLimits, max_records: int
) -> Generator[pa.RecordBatch, None, None]:
    """``limits.window`` partitions per Spark job, run on the calling thread.

    When ``runJob`` answers, Spark holds the window's whole result: its frames
    (one per partition, or more) are joined up to one Arrow batch's rows or
    ``limits.max_batch_bytes`` before they are yielded. A small result spread
    over partitions then reaches a client as one page, not one page and a
    request per partition.
    """
    from pyspark.serializers import NoOpSerializer
    from pyspark.util import _load_from_socket

    sc = df.sparkSession.sparkContext
    jvm = sc._jvm
    assert jvm is not None
    run_job = jvm_constant(jvm, "run-job", lambda jvm: jvm.PythonRDD.runJob)
    context = scala_context(sc)
    jrdd = df._jdf.toArrowBatchRdd().toJavaRDD()
    partitions = jrdd.getNumPartitions()
    frames_of = NoOpSerializer()
    window = max(limits.window, 1)
    for start in range(0, partitions, window):
        end = min(start + window, partitions)
        # The first window's list is the same for every small result: made once
        # (a Python list is a py4j call per element).
        chunk = (
            jvm_constant(jvm, f"partitions-0-{end}", functools.partial(_java_list, end=end))
            if start == 0
            else list(range(start, end))
        )
        sock_info = run_job(context, jrdd, chunk)
        with _load_from_socket(sock_info, frames_of) as frames:
            batches = (pa.ipc.read_record_batch(pa.py_buffer(frame), schema) for frame in frames)
            yield from _joined(batches, max_records, limits.max_batch_bytes)


def _joined(
    batches: Iterator[pa.RecordBatch], max_rows: int, max_bytes: int
) -> Generator[pa.RecordBatch, None, None]:
    """``batches`` joined into batches of up to ``max_rows`` rows (no limit when it
    is not positive, as Spark's ``maxRecordsPerBatch``) and ``max_bytes``."""
    pending: list[pa.RecordBatch] = []
    rows = size = 0
    for batch in batches:
        if pending and (
            (max_rows > 0 and rows + batch.num_rows > max_rows) or size + batch.nbytes > max_bytes
        ):
            yield _concat(pending)
            pending, rows, size = [], 0, 0
        pending.append(batch)
        rows += batch.num_rows
        size += batch.nbytes
    if pending:
        yield _concat(pending)


def _concat(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    return batches[0] if len(batches) == 1 else pa.concat_batches(batches)


def _java_list(jvm: Any, end: int) -> Any:
    """A JVM list of the partition numbers below ``end``."""
    numbers = jvm.java.util.ArrayList()
    for number in range(end):
        numbers.add(number)
    return numbers
