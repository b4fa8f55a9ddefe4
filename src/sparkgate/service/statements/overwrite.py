"""INSERT OVERWRITE of a file table or of its partitions, atomic to a crash.

Spark's INSERT OVERWRITE of a data source table (``USING parquet``, orc, ...)
deletes the table's files, or the partitions' it replaces, first and then
writes the new ones: a failure or a SIGKILL on the way leaves them empty. The
gateway runs such a statement as a job that writes the new rows into a
directory beside the one they replace (``.<dir>.sparkgate-staging-<token>``)
and, as its last step, swaps the two directories (the old one moved aside,
the staged one moved in, the old one deleted), so readers see the old rows
until the new ones are complete.

The directory replaced is the table's, or for ``PARTITION (p = v, ...)`` with
static values for the leading partition columns, that partition's: exactly
what Spark's static overwrite mode (its default) replaces; the partitions in
the catalog are synchronised with the files after the swap (``MSCK REPAIR
TABLE ... SYNC PARTITIONS``).

The job's durable hook (:class:`OverwriteHook`, kept by the job store) undoes
a half-done overwrite, also at the next start after a crash: the staged
directory goes and, if the swap was cut between its two moves, the old
directory comes back.

Other targets run as Spark runs them: Hive format tables (Spark already
stages their files), the dynamic partition overwrite mode (Spark stages the
partitions it writes and moves them in one by one), a static value after a
dynamic partition column, tables with a partition stored outside the table's
directory or bucketed, tables of other catalogs or formats (a table format
such as Delta Lake or Iceberg gives them atomic commits of its own).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sparkgate.api.jobs import JobInfo, NoopJobStatusHook
from sparkgate.service.catalog import quote_name
from sparkgate.service.catalogs.spark import SESSION_CATALOG
from sparkgate.service.spark.plans import active_session
from sparkgate.service.statements.table_as import (
    delete_directory,
    delete_staged,
    move_directory,
    path_exists,
    sibling_directory,
)
from sparkgate.service.streaming.insert import InsertStatement

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["HOOK_KIND", "FileTable", "OverwriteHook", "file_table"]

log = logging.getLogger(__name__)

HOOK_KIND = "insert-overwrite"
# Spark's file sources whose INSERT OVERWRITE deletes before it writes.
_FILE_FORMATS = frozenset({"parquet", "orc", "csv", "json", "text", "avro"})
# Listing more partitions than this to check where they are stored costs more than
# the overwrite is worth making atomic: Spark runs it.
_MAX_PARTITIONS_CHECKED = 10_000


@dataclass(frozen=True)
class FileTable:
    """A file table of the session catalog, and the directory an overwrite replaces."""

    name: tuple[str, ...]
    location: str
    provider: str
    options: Mapping[str, str]
    # The directory whose contents the overwrite replaces: the table's, or a partition's.
    scope: str
    # Partition columns the rows are written by under ``scope`` (those without a static value).
    partition_by: tuple[str, ...] = ()
    # Static partition columns: their values are in ``scope``'s path, not in the files.
    static: tuple[str, ...] = ()
    # Whether the catalog lists the table's partitions (synchronised after the swap).
    partitioned: bool = False


def file_table(spark: SparkSession, insert: InsertStatement) -> FileTable | None:
    """The target of ``insert`` when the gateway makes its overwrite atomic, else None."""
    if not insert.overwrite:
        return None
    target = insert.target
    if len(target) == 3 and target[0].lower() != SESSION_CATALOG:
        return None
    try:
        with active_session(spark):
            state = spark._jsparkSession.sessionState()
            identifier = state.sqlParser().parseTableIdentifier(quote_name(target[-2:]))
            table = state.catalog().getTableMetadata(identifier)
            dynamic_mode = str(state.conf().partitionOverwriteMode()).upper() == "DYNAMIC"
    except Exception:
        return None  # not a session catalog table: Spark says what is wrong when it runs
    provider = table.provider()
    if not provider.isDefined() or str(provider.get()).lower() not in _FILE_FORMATS:
        return None
    if str(table.tableType().name()) == "VIEW" or table.bucketSpec().isDefined():
        return None
    storage = table.storage()
    location = storage.locationUri()
    if not location.isDefined():
        return None
    options = {}
    entries = storage.properties().iterator()
    while entries.hasNext():
        entry = entries.next()
        if str(entry._1()).lower() != "path":
            options[str(entry._1())] = str(entry._2())
    root = str(location.get().toString()).rstrip("/")
    columns = _strings(table.partitionColumnNames())
    scope = root
    static: list[str] = []
    if columns:
        if dynamic_mode or "partitionoverwritemode" in {k.lower() for k in options}:
            return None  # Spark replaces only the partitions it writes, one by one
        spec = {name.lower(): value for name, value in insert.partition.items()}
        values = [spec.get(column.lower()) for column in columns]
        static_count = next((i for i, v in enumerate(values) if v is None), len(values))
        if any(value is not None for value in values[static_count:]):
            return None  # a static value under a dynamic column: Spark's rules
        static = columns[:static_count]
        fields = {
            f.name.lower(): f.dataType.simpleString()
            for f in spark.table(quote_name(target)).schema.fields
        }
        for column, value in zip(static, values, strict=False):
            scope += "/" + _partition_directory(spark, column, value, fields[column.lower()])
        if not _partitions_inside(spark, state, identifier, root):
            return None
    elif insert.partition:
        return None
    qualified = (str(table.identifier().database().get()), str(table.identifier().table()))
    return FileTable(
        (SESSION_CATALOG, *qualified),
        root,
        str(provider.get()).lower(),
        options,
        scope,
        tuple(columns[len(static) :]),
        tuple(static),
        bool(columns) and bool(table.tracksPartitionsInCatalog()),
    )


def _strings(seq: Any) -> list[str]:
    items = seq.iterator()
    out = []
    while items.hasNext():
        out.append(str(items.next()))
    return out


def _partition_directory(spark: SparkSession, column: str, value: str | None, type_: str) -> str:
    """``column=value`` as Spark names the directory of a static partition value."""
    text = spark.sql(f"SELECT CAST(CAST({value} AS {type_}) AS STRING)").collect()[0][0]
    jvm: Any = spark.sparkContext._jvm
    utils = getattr(jvm, "org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils")
    if text is None:
        text = utils.DEFAULT_PARTITION_NAME()
    return str(utils.getPartitionPathString(column, text))


def _partitions_inside(spark: SparkSession, state: Any, identifier: Any, root: str) -> bool:
    """Whether every partition of the table is stored under its directory (one added
    with a LOCATION of its own would not be swapped with the rest)."""
    jvm: Any = spark.sparkContext._jvm
    every = jvm.scala.Option.empty()
    catalog = state.catalog()
    if catalog.listPartitionNames(identifier, every).size() > _MAX_PARTITIONS_CHECKED:
        return False
    listed = catalog.listPartitions(identifier, every).iterator()
    prefix = root + "/"
    while listed.hasNext():
        where = listed.next().storage().locationUri()
        if where.isDefined() and not str(where.get().toString()).startswith(prefix):
            return False
    return True


@dataclass
class OverwriteHook(NoopJobStatusHook):
    """The file side of one atomic INSERT OVERWRITE job (see the module's docstring)."""

    spark: SparkSession
    table: tuple[str, ...]
    location: str
    staging: str
    backup: str
    # Whether the catalog's partitions are synchronised with the files after the swap.
    partitioned: bool = False

    kind = HOOK_KIND

    @classmethod
    def for_table(cls, spark: SparkSession, table: FileTable) -> OverwriteHook:
        token = uuid.uuid4().hex[:12]
        return cls(
            spark,
            table.name,
            table.scope,
            sibling_directory(spark, table.scope, token, "staging"),
            sibling_directory(spark, table.scope, token, "replaced"),
            table.partitioned,
        )

    def record(self) -> dict[str, Any]:
        return {
            "table": list(self.table),
            "location": self.location,
            "staging": self.staging,
            "backup": self.backup,
            "partitioned": self.partitioned,
        }

    @classmethod
    def from_record(cls, spark: SparkSession, record: Mapping[str, Any]) -> OverwriteHook:
        return cls(
            spark,
            tuple(str(part) for part in record["table"]),
            str(record["location"]),
            str(record["staging"]),
            str(record["backup"]),
            bool(record.get("partitioned", False)),
        )

    def publish(self) -> None:
        """The job's last step, once the new rows are all written: swap the directories."""
        if path_exists(self.spark, self.location):
            move_directory(self.spark, self.location, self.backup)
        move_directory(self.spark, self.staging, self.location)
        delete_directory(self.spark, self.backup)
        self._catch_up()
        log.info("INSERT OVERWRITE of %s published its rows", ".".join(self.table))

    def on_failed(self, job: JobInfo, cause: str) -> None:
        self.undo()

    def on_canceled(self, job: JobInfo) -> None:
        self.undo()

    def undo(self) -> None:
        """The table's files as before the job: the staged ones gone, the old ones back
        where a swap was cut half-way."""
        spark = self.spark
        if path_exists(spark, self.backup):
            if path_exists(spark, self.staging) or not path_exists(spark, self.location):
                if path_exists(spark, self.location):
                    delete_directory(spark, self.location)
                move_directory(spark, self.backup, self.location)
            else:
                delete_directory(spark, self.backup)  # the swap was done: the new rows stay
        delete_staged(spark, self.staging)
        try:
            self._catch_up()
        except Exception:
            log.debug("Could not refresh %s", ".".join(self.table), exc_info=True)

    def _catch_up(self) -> None:
        """The catalog and Spark's caches as the files now are: partitions added and
        dropped, cached listings refreshed."""
        name = quote_name(self.table)
        if self.partitioned:
            self.spark.sql(f"MSCK REPAIR TABLE {name} SYNC PARTITIONS").collect()
        self.spark.sql(f"REFRESH TABLE {name}").collect()
