"""Results whose rows are on the driver already, served without a Spark job.

A command's answer (``SHOW``, ``DESCRIBE``, ``SET``) and a literal ``VALUES``
are rows Spark holds once the statement is planned, and a ``SELECT`` of
constants (``SELECT 1``, the validation query of every connection pool) is one
row the driver can compute. Spark itself would still run a job to hand either
over as Arrow (``toArrowBatchRdd``): about 30 ms of scheduling for one row.
Here the driver converts the rows with Spark's own Arrow writer, as Spark
Connect does for local relations, so the batches are the ones a job would give.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sparkgate.service.spark.confinement import simple_name
from sparkgate.service.spark.jvm_cache import jvm_constant

if TYPE_CHECKING:
    from sparkgate.service.spark.arrow import ArrowSettings

__all__ = ["constant_batches", "held_batches"]

# Physical plans whose rows the driver holds: local relations (literal queries
# folded by the optimizer) and commands (which Spark runs as it plans them).
_HELD = frozenset({"LocalTableScan", "CommandResult"})


class _Classes:
    """The JVM classes used here (:mod:`.jvm_cache`)."""

    def __init__(self, jvm: Any) -> None:
        arrow = jvm.org.apache.spark.sql.execution.arrow
        self.to_batches = getattr(
            getattr(arrow, "ArrowConverters$"), "MODULE$"
        ).toBatchWithSchemaIterator
        expressions = jvm.org.apache.spark.sql.catalyst.expressions
        self.projection = expressions.InterpretedUnsafeProjection.createProjection
        self.empty_row = jvm.org.apache.spark.sql.catalyst.InternalRow.empty()
        self.singleton = jvm.java.util.Collections.singletonList
        self.as_scala = jvm.scala.jdk.javaapi.CollectionConverters.asScala


def held_batches(
    jvm: Any, plan: Any, schema: pa.Schema, max_batch_bytes: int, settings: ArrowSettings
) -> Generator[pa.RecordBatch, None, None] | None:
    """The rows of executed ``plan`` as Arrow batches of ``schema`` when the driver
    holds them (a local relation, a command's answer); None otherwise."""
    if str(plan.nodeName()) not in _HELD:
        return None
    classes = jvm_constant(jvm, "driver-rows", _Classes)
    rows = plan.rows().iterator()
    return _converted(classes, rows, plan.schema(), schema, max_batch_bytes, settings)


def constant_batches(
    jvm: Any,
    logical: Any,
    nodes: list[dict[str, Any]] | None,
    schema: pa.Schema,
    max_batch_bytes: int,
    settings: ArrowSettings,
) -> Generator[pa.RecordBatch, None, None] | None:
    """The one row of optimized plan ``logical`` (``nodes``: its ``toJSON``, or None)
    as Arrow batches when it is a projection of constants the driver computes;
    None when a Spark job must make it."""
    if nodes is None or not _constant_nodes(nodes):
        return None
    classes = jvm_constant(jvm, "driver-rows", _Classes)
    row = classes.projection(logical.projectList()).apply(classes.empty_row)
    rows = classes.as_scala(classes.singleton(row).iterator())
    return _converted(classes, rows, logical.schema(), schema, max_batch_bytes, settings)


def _constant_nodes(nodes: list[dict[str, Any]]) -> bool:
    """Whether the plan (``nodes``: its ``toJSON``, pre-order; each column of the
    projection is its expression's nodes in pre-order) is a projection of
    constants over Spark's one-row relation. What the optimizer left unfolded
    (an expression that would fail, a UDF, a subquery, ``rand()``) is not a
    constant, and runs as Spark runs it."""
    if len(nodes) != 2 or [simple_name(n.get("class", "")) for n in nodes] != [
        "Project",
        "OneRowRelation",
    ]:
        return False
    for column in nodes[0].get("projectList") or []:
        names = [simple_name(n.get("class", "")) for n in column]
        if names not in (["Literal"], ["Alias", "Literal"]):
            return False
    return bool(nodes[0].get("projectList"))


def _converted(
    classes: _Classes,
    rows: Any,
    spark_schema: Any,
    schema: pa.Schema,
    max_batch_bytes: int,
    settings: ArrowSettings,
) -> Generator[pa.RecordBatch, None, None]:
    batches = classes.to_batches(
        rows,
        spark_schema,
        settings.max_records,
        max_batch_bytes,
        settings.time_zone,
        False,  # duplicate field names allowed, as in toArrowBatchRdd
        settings.large_types,
    )
    while batches.hasNext():
        # Each is an IPC stream of its own: the schema, then one batch.
        for batch in pa.ipc.open_stream(pa.py_buffer(batches.next())):
            yield pa.RecordBatch.from_arrays(batch.columns, schema=schema)
