"""A continuous materialized table with a primary key: each micro-batch applied as upserts.

Spark 4.3 has no table format on Maven Central that merges rows (Delta Lake
and Iceberg do not serve this Spark version yet), so the merge is done on
the table's own Parquet (or other format) files, exactly and atomically for
readers, with one version directory per micro-batch:

1. the micro-batch's rows are reduced to the last one per key;
2. the table's rows whose key is not in the batch, plus the batch's rows,
   are written to a new version directory ``<base>/v-<batch id>`` beside
   the table's current one (complete once Spark's ``_SUCCESS`` is there);
3. the table's location moves to the new version (one metastore update:
   a reader sees the old version or the new one, never a mix), the batch's
   id is recorded as committed in the job's checkpoint, and versions older
   than the previous one are deleted (a reader still on the previous
   version keeps its files for one more interval).

A micro-batch Spark replays after a crash is skipped if committed; if its
version directory is complete, step 3 is redone; otherwise it is merged
again from the table, which step 3 has not moved yet. So every micro-batch
is applied once. The savepoint of SUSPEND copies the checkpoint, and with
it the record. A write costs the table's size, which suits tables of
aggregates, the usual kind with a key. Such a table cannot be partitioned
(a partitioned table's location does not move its partitions).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from sparkgate.service.spark.files import Files
from sparkgate.sql.quoting import quote_identifier

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.readwriter import DataStreamWriter

__all__ = ["Upsert", "base_directory", "table_details", "table_location"]

log = logging.getLogger(__name__)

_STATE = "sparkgate-upsert"
_VERSION = "v-"


def table_details(spark: SparkSession, table: str) -> dict[str, str]:
    """The rows of ``DESCRIBE TABLE EXTENDED``'s detail section (Location, Provider, ...)."""
    return {
        str(row[0]).strip(): str(row[1]).strip()
        for row in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()
        if row[1] is not None
    }


def table_location(spark: SparkSession, table: str) -> str:
    """The table's location, as the catalog has it."""
    location = table_details(spark, table).get("Location")
    if location is None:
        raise ValueError(f"{table} has no location")
    return location


def base_directory(location: str) -> str:
    """Where a keyed table's version directories live: its first location."""
    parent, _, last = location.rstrip("/").rpartition("/")
    return parent if last.startswith(_VERSION) else location.rstrip("/")


class Upsert:
    """Applies a stream's micro-batches to ``identifier`` as upserts on ``key``."""

    def __init__(
        self,
        spark: SparkSession,
        identifier: tuple[str, ...],
        key: tuple[str, ...],
        catalog_lock: AbstractContextManager[Any],
        moved: Callable[[], None],
    ) -> None:
        self._spark = spark
        self._catalog_lock = catalog_lock
        self._moved = moved
        self._table = ".".join(quote_identifier(p) for p in identifier)
        self._key = key

    def start(self, writer: DataStreamWriter, checkpoint: str) -> StreamingQuery:
        state = f"{checkpoint.rstrip('/')}/{_STATE}"

        def on_batch(batch: DataFrame, batch_id: int) -> None:
            self.apply(batch, batch_id, state)

        return writer.foreachBatch(on_batch).start()

    def apply(self, batch: DataFrame, batch_id: int, state: str) -> None:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        spark = self._spark
        files = Files(spark)
        committed = files.read(f"{state}/committed")
        if committed is not None and batch_id <= int(committed):
            log.info("%s: micro-batch %d was applied before, skipped", self._table, batch_id)
            return
        details = table_details(spark, self._table)
        current_location = details["Location"]
        base = base_directory(current_location)
        version = f"{base}/{_VERSION}{batch_id:012d}"
        if not files.exists(f"{version}/_SUCCESS"):
            current = spark.table(self._table)
            columns = current.columns
            keys = list(self._key)
            order = F.monotonically_increasing_id()
            window = Window.partitionBy(*keys).orderBy(order.desc())
            latest = (
                batch.withColumn("__sparkgate_order", order)
                .withColumn("__sparkgate_rank", F.row_number().over(window))
                .where("__sparkgate_rank = 1")
                .select(*(quote_identifier(c) for c in columns))
            )
            kept = current.join(latest.select(*keys), on=keys, how="left_anti")
            table_format = details.get("Provider", "parquet")
            kept.unionByName(latest).write.mode("overwrite").format(table_format).save(version)
        escaped = version.replace("\\", "\\\\").replace("'", "\\'")
        with self._catalog_lock:
            spark.sql(f"ALTER TABLE {self._table} SET LOCATION '{escaped}'").collect()
        spark.catalog.refreshTable(self._table)
        self._moved()
        files.write(f"{state}/committed", str(batch_id))
        keep = {version.rpartition("/")[2], current_location.rstrip("/").rpartition("/")[2]}
        for child in files.children(base):
            if child.startswith(_VERSION) and child not in keep:
                files.delete(f"{base}/{child}")
        for child in files.children(base):
            # The files of the table's first location, before its first version.
            if not child.startswith(_VERSION) and not child.startswith((".", "_")):
                if current_location.rstrip("/") == base:
                    continue
                files.delete(f"{base}/{child}")
