"""A continuous materialized table with a primary key: each micro-batch applied as upserts.

Spark 4.3 has no table format on Maven Central that merges rows (Delta Lake
and Iceberg do not serve this Spark version yet), so the merge is done on
the table's own files, exactly:

1. the micro-batch's rows are reduced to the last one per key;
2. the table's rows whose key is not in the batch, plus the batch's rows,
   are written to a staging directory in the job's checkpoint
   (``sparkgate-upsert/batch-<id>``; complete once Spark's ``_SUCCESS`` is
   there);
3. the table is overwritten from the staging directory (never from
   itself), and the batch's id is recorded as committed
   (``sparkgate-upsert/committed``, replaced atomically); then the staging
   directory goes.

A micro-batch Spark replays after a crash is skipped if committed; if its
staging directory is complete the overwrite is redone from it (the table may
have been cut mid-overwrite), otherwise it is merged again from the table,
which step 3 has not touched yet. So every micro-batch is applied once.
The savepoint of SUSPEND copies the checkpoint, and with it this record.
Readers see the table as of the last overwrite; a write costs the table's
size, which suits tables of aggregates (the usual kind with a key).
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from sparkgate.sql.quoting import quote_identifier

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.readwriter import DataStreamWriter

__all__ = ["Upsert"]

log = logging.getLogger(__name__)

_STATE = "sparkgate-upsert"


class Upsert:
    """Applies a stream's micro-batches to ``identifier`` as upserts on ``key``."""

    def __init__(self, spark: SparkSession, identifier: tuple[str, ...], key: tuple[str, ...]):
        self._spark = spark
        self._table = ".".join(quote_identifier(p) for p in identifier)
        self._key = key

    def start(self, writer: DataStreamWriter, checkpoint: str) -> StreamingQuery:
        state = Path(checkpoint) / _STATE

        def on_batch(batch: DataFrame, batch_id: int) -> None:
            self.apply(batch, batch_id, state)

        return writer.foreachBatch(on_batch).start()

    def apply(self, batch: DataFrame, batch_id: int, state: Path) -> None:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        committed = _committed(state)
        if committed is not None and batch_id <= committed:
            log.info("%s: micro-batch %d was applied before, skipped", self._table, batch_id)
            return
        spark = self._spark
        staging = state / f"batch-{batch_id}"
        keys = list(self._key)
        if not (staging / "_SUCCESS").exists():
            current = spark.table(self._table)
            columns = current.columns
            order = F.monotonically_increasing_id()
            window = Window.partitionBy(*keys).orderBy(order.desc())
            latest = (
                batch.withColumn("__sparkgate_order", order)
                .withColumn("__sparkgate_rank", F.row_number().over(window))
                .where("__sparkgate_rank = 1")
                .select(*(quote_identifier(c) for c in columns))
            )
            kept = current.join(latest.select(*keys), on=keys, how="left_anti")
            kept.unionByName(latest).write.mode("overwrite").parquet(str(staging))
        columns = spark.table(self._table).columns
        merged = spark.read.parquet(str(staging)).select(*(quote_identifier(c) for c in columns))
        merged.write.insertInto(self._table, overwrite=True)
        spark.catalog.refreshTable(self._table)
        _commit(state, batch_id)
        for old in state.glob("batch-*"):
            shutil.rmtree(old, ignore_errors=True)


def _committed(state: Path) -> int | None:
    try:
        return int((state / "committed").read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def _commit(state: Path, batch_id: int) -> None:
    state.mkdir(parents=True, exist_ok=True)
    temporary = state / "committed.tmp"
    temporary.write_text(str(batch_id))
    os.replace(temporary, state / "committed")
