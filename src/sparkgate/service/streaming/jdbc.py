"""Flink's ``jdbc`` connector on Spark's JDBC data source.

A table ``WITH ('connector' = 'jdbc', 'url' = ..., 'table-name' = ...)`` is
read with Spark's JDBC reader (partitioned by ``scan.partition.*``) and written
with its writer: appended, or, when the table declares a primary key, upserted
as Flink's JDBC sink does. An upsert writes the rows into a staging table of the
database, then merges them into the table in one transaction
(``INSERT ... ON CONFLICT (key) DO UPDATE``, PostgreSQL's upsert) and drops the
staging table; a changelog's deletions delete by key. The password is a secret:
it is masked wherever the definition is shown and never logged.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from sparkgate.service.spark.jdbc import connection, driver_class, subprotocol
from sparkgate.service.spark.jobs import invalid, to_execution_error
from sparkgate.service.streaming.changelog import KIND_COLUMN
from sparkgate.service.streaming.ddl import TableDefinition

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["OPTIONS", "check", "read", "write", "write_changelog"]

log = logging.getLogger(__name__)

OPTIONS = (
    "url",
    "table-name",
    "driver",
    "username",
    "password",
    "scan.partition.column",
    "scan.partition.num",
    "scan.partition.lower-bound",
    "scan.partition.upper-bound",
    "scan.fetch-size",
    "sink.buffer-flush.max-rows",
    "sink.parallelism",
)
_PARTITION = (
    "scan.partition.column",
    "scan.partition.num",
    "scan.partition.lower-bound",
    "scan.partition.upper-bound",
)
# Flink's option -> Spark's JDBC option.
_SPARK = {
    "table-name": "dbtable",
    "username": "user",
    "password": "password",
    "scan.partition.column": "partitionColumn",
    "scan.partition.num": "numPartitions",
    "scan.partition.lower-bound": "lowerBound",
    "scan.partition.upper-bound": "upperBound",
    "scan.fetch-size": "fetchsize",
    "sink.buffer-flush.max-rows": "batchsize",
}


def check(definition: TableDefinition) -> None:
    """Refuse a definition the connector cannot read or write, naming the option."""
    options = definition.options
    for key in ("url", "table-name"):
        if not options.get(key):
            raise invalid(f"The jdbc connector needs the option '{key}'")
    if not subprotocol(options["url"]):
        raise invalid("'url' must be a JDBC URL such as 'jdbc:postgresql://host:5432/db'")
    given = [key for key in _PARTITION if key in options]
    if given and len(given) != len(_PARTITION):
        raise invalid(
            "A partitioned jdbc scan needs all of " + ", ".join(f"'{k}'" for k in _PARTITION)
        )
    if definition.primary_key and subprotocol(options["url"]) != "postgresql":
        raise invalid(
            "A jdbc table with a primary key is written by upsert, which sparkgate does on "
            "PostgreSQL (INSERT ... ON CONFLICT); this URL names another database"
        )


def _spark_options(definition: TableDefinition, table: str | None = None) -> dict[str, str]:
    options = definition.options
    spark = {"url": options["url"]}
    for key, value in options.items():
        if key in _SPARK:
            spark[_SPARK[key]] = value
    if table is not None:
        spark["dbtable"] = table
    driver = driver_class(options["url"], options.get("driver"))
    if driver:
        spark["driver"] = driver
    return spark


def read(spark: SparkSession, definition: TableDefinition) -> DataFrame:
    """The table's rows, as Spark's JDBC reader scans them."""
    reader = spark.read.format("jdbc")
    for key, value in _spark_options(definition).items():
        reader = reader.option(key, value)
    columns = [c.name for c in definition.physical]
    try:
        return reader.load().select(*columns)
    except Exception as exc:
        raise to_execution_error(exc) from exc


def write(df: DataFrame, definition: TableDefinition) -> None:
    """Append ``df``'s rows, or upsert them by the primary key."""
    if not definition.primary_key:
        _append(df, definition, definition.options["table-name"])
        return
    _upsert(df, definition)


def write_changelog(definition: TableDefinition) -> Callable[[DataFrame, int], None]:
    """A streaming ``foreachBatch`` writer: inserts and updates upserted by key (or
    appended without one), deletions deleted by key, update-befores dropped."""

    def write_batch(df: DataFrame, _batch_id: int) -> None:
        if KIND_COLUMN not in df.columns:
            write(df, definition)
            return
        # ROW_KINDS order: 0 +I, 1 -U, 2 +U, 3 -D.
        kept = df.where(f"{KIND_COLUMN} IN (0, 2)").drop(KIND_COLUMN)
        write(kept, definition)
        if definition.primary_key:
            gone = df.where(f"{KIND_COLUMN} = 3").drop(KIND_COLUMN)
            _delete(gone, definition)

    return write_batch


def _append(df: DataFrame, definition: TableDefinition, table: str) -> None:
    writer = df.write.format("jdbc").mode("append")
    for key, value in _spark_options(definition, table).items():
        writer = writer.option(key, value)
    try:
        writer.save()
    except Exception as exc:
        raise to_execution_error(exc) from exc


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _staged(df: DataFrame, definition: TableDefinition, apply: Callable[[str], list[str]]) -> None:
    """Write ``df`` into a staging table, run ``apply(staging)``'s statements in one
    transaction, drop the staging table whatever happens."""
    table = definition.options["table-name"]
    staging = f"{table}__sparkgate_{uuid.uuid4().hex[:12]}"
    options = definition.options
    spark = df.sparkSession
    driver = driver_class(options["url"], options.get("driver"))
    try:
        writer = df.write.format("jdbc").mode("overwrite")
        for key, value in _spark_options(definition, staging).items():
            writer = writer.option(key, value)
        writer.save()
        with connection(
            spark, options["url"], options.get("username"), options.get("password"), driver
        ) as db:
            db.setAutoCommit(False)
            statement = db.createStatement()
            try:
                for text in apply(staging):
                    statement.executeUpdate(text)
                db.commit()
            except Exception:
                db.rollback()
                raise
            finally:
                statement.close()
    except Exception as exc:
        raise to_execution_error(exc) from exc
    finally:
        try:
            with connection(
                spark, options["url"], options.get("username"), options.get("password"), driver
            ) as db:
                dropper = db.createStatement()
                dropper.executeUpdate(f"DROP TABLE IF EXISTS {staging}")
                dropper.close()
        except Exception:
            log.warning("Could not drop the staging table %s", staging, exc_info=True)


def _upsert(df: DataFrame, definition: TableDefinition) -> None:
    table = definition.options["table-name"]
    columns = [c.name for c in definition.physical]
    listed = ", ".join(_quoted(c) for c in columns)
    key = ", ".join(_quoted(k) for k in definition.primary_key)
    keys = {k.lower() for k in definition.primary_key}
    updates = ", ".join(
        f"{_quoted(c)} = EXCLUDED.{_quoted(c)}" for c in columns if c.lower() not in keys
    )
    action = f"DO UPDATE SET {updates}" if updates else "DO NOTHING"

    def merge(staging: str) -> list[str]:
        # One row per key: a batch may hold several (which one wins is not defined).
        return [
            f"INSERT INTO {table} ({listed}) SELECT DISTINCT ON ({key}) {listed} "
            f"FROM {staging} ON CONFLICT ({key}) {action}"
        ]

    _staged(df.select(*columns), definition, merge)


def _delete(df: DataFrame, definition: TableDefinition) -> None:
    if df.isEmpty():
        return
    table = definition.options["table-name"]
    key = ", ".join(_quoted(k) for k in definition.primary_key)

    def delete(staging: str) -> list[str]:
        return [f"DELETE FROM {table} WHERE ({key}) IN (SELECT {key} FROM {staging})"]

    _staged(df.select(*definition.primary_key), definition, delete)
