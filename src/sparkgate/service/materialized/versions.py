"""A refresh that readers never see half done: new files in a new directory, then
one catalog update that points the table (or each partition) at them.

``INSERT OVERWRITE`` of a Parquet table deletes the old files before the new
ones are there: a query reading the table meanwhile fails (file not found)
or sees part of it. A refresh here writes the query's rows into a version
directory ``<base>/v-<time>-<id>`` and then moves the table's location
(unpartitioned) or each refreshed partition's location to it; partitions a
whole-table refresh no longer has are dropped. A reader sees the old
version or the new one. Version directories no location points at are
deleted once they are older than the ``keep`` interval, so a query still
reading an old version finishes first.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from sparkgate.service.materialized.upsert import (
    base_directory,
    table_details,
    table_location,
)
from sparkgate.service.spark.files import Files
from sparkgate.sql.quoting import quote_identifier, quote_string

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["replace_contents"]

_VERSION = "v-"


def _spec(values: Mapping[str, str]) -> str:
    return ", ".join(f"{quote_identifier(k)} = {quote_string(v)}" for k, v in values.items())


def _partition_locations(
    spark: SparkSession, identifier: tuple[str, ...]
) -> dict[tuple[str, ...], str]:
    """Each partition's values (in partition-column order) and location."""
    jvm: Any = spark._jvm
    catalog = spark._jsparkSession.sessionState().catalog()
    ident = jvm.org.apache.spark.sql.catalyst.TableIdentifier(
        identifier[-1], jvm.scala.Some(identifier[-2])
    )
    found: dict[tuple[str, ...], str] = {}
    partitions = catalog.listPartitions(ident, jvm.scala.Option.empty())
    iterator = partitions.iterator()
    while iterator.hasNext():
        partition = iterator.next()
        spec = partition.spec()
        keys = spec.keys().iterator()
        values = []
        while keys.hasNext():
            values.append(str(spec.apply(keys.next())))
        found[tuple(values)] = str(partition.location())
    return found


def replace_contents(
    spark: SparkSession,
    identifier: tuple[str, ...],
    frame: DataFrame,
    partition_keys: tuple[str, ...],
    only: Mapping[str, str] | None,
    keep_s: float,
    catalog_lock: AbstractContextManager[Any],
    moved: Callable[[], None],
) -> None:
    """Make ``frame`` the table's rows (with ``only``: the rows of that partition);
    ``catalog_lock`` is held while the table's catalog entry changes; ``moved`` runs
    once the table has its new files (before old ones go)."""
    table = ".".join(quote_identifier(p) for p in identifier)
    files = Files(spark)
    details = table_details(spark, table)
    location = details["Location"]
    base = base_directory(location)
    version = f"{base}/{_VERSION}{int(time.time() * 1000)}-{uuid.uuid4().hex[:8]}"
    columns = spark.table(table).columns
    before = _versions_in_use(spark, identifier, location, partition_keys)
    if only:
        condition = " AND ".join(
            f"{quote_identifier(k)} = {quote_string(v)}" for k, v in only.items()
        )
        frame = frame.where(condition)
    writer = frame.select(*(quote_identifier(c) for c in columns)).write.format(
        details.get("Provider", "parquet")
    )
    if not partition_keys:
        writer.mode("overwrite").save(version)
        with catalog_lock:
            spark.sql(f"ALTER TABLE {table} SET LOCATION {quote_string(version)}").collect()
    else:
        writer.partitionBy(*partition_keys).mode("overwrite").save(version)
        # What was written, from the files (the query may give other rows if run again).
        written = _written_partitions(spark, files, version, len(partition_keys))
        with catalog_lock:
            _swap_partitions(spark, identifier, table, version, partition_keys, written, only)
    spark.catalog.refreshTable(table)
    moved()
    _clean(spark, files, identifier, table, base, partition_keys, keep_s, before)


def _versions_in_use(
    spark: SparkSession, identifier: tuple[str, ...], location: str, partition_keys: tuple[str, ...]
) -> set[str]:
    """The names of the version directories the table's locations point at (``location``
    the table's own)."""
    used = {location.rstrip("/")}
    if partition_keys:
        used |= {loc.rstrip("/") for loc in _partition_locations(spark, identifier).values()}
    # By name: a catalog may spell the same path file:/x or file:///x.
    return {part for path in used for part in path.split("/") if part.startswith(_VERSION)}


def _swap_partitions(
    spark: SparkSession,
    identifier: tuple[str, ...],
    table: str,
    version: str,
    partition_keys: tuple[str, ...],
    written: dict[tuple[str, ...], str],
    only: Mapping[str, str] | None,
) -> None:
    """Point each written partition at its new files; drop the ones in scope not written."""
    existing = _partition_locations(spark, identifier)
    for values, path in written.items():
        spec = dict(zip(partition_keys, values, strict=True))
        if values in existing:
            spark.sql(
                f"ALTER TABLE {table} PARTITION ({_spec(spec)}) SET LOCATION {quote_string(path)}"
            ).collect()
        else:
            spark.sql(
                f"ALTER TABLE {table} ADD PARTITION ({_spec(spec)}) LOCATION {quote_string(path)}"
            ).collect()
    refreshed = set(written)
    for values in existing:
        spec = dict(zip(partition_keys, values, strict=True))
        in_scope = only is None or all(spec.get(k) == str(v) for k, v in (only or {}).items())
        if in_scope and values not in refreshed:
            spark.sql(f"ALTER TABLE {table} DROP PARTITION ({_spec(spec)})").collect()


def _written_partitions(
    spark: SparkSession, files: Files, version: str, levels: int
) -> dict[tuple[str, ...], str]:
    """The partition directories Spark wrote under ``version``: values -> path."""
    jvm: Any = spark._jvm
    unescape = jvm.org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils.unescapePathName
    found: dict[tuple[str, ...], str] = {(): version}
    for _ in range(levels):
        deeper: dict[tuple[str, ...], str] = {}
        for values, path in found.items():
            for child in files.children(path):
                _, eq, value = child.partition("=")
                if eq and not child.startswith(("_", ".")):
                    parts = (*values, str(unescape(value)))
                    deeper[parts] = f"{path}/{child}"
        found = deeper
    return found


def _clean(
    spark: SparkSession,
    files: Files,
    identifier: tuple[str, ...],
    table: str,
    base: str,
    partition_keys: tuple[str, ...],
    keep_s: float,
    previous: set[str],
) -> None:
    """Delete the versions nothing points at any more, but the ones in use until this
    refresh (a query planned just before it still reads them) and any younger than
    ``keep_s``."""
    location = table_location(spark, table)
    keep = _versions_in_use(spark, identifier, location, partition_keys) | previous
    horizon = (time.time() - keep_s) * 1000
    for child in files.children(base):
        if not child.startswith(_VERSION) or child in keep:
            continue
        try:
            made = int(child[len(_VERSION) :].split("-", 1)[0])
        except ValueError:
            continue
        if made < horizon:
            files.delete(f"{base}/{child}")
