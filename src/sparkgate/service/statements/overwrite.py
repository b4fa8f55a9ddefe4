"""INSERT OVERWRITE of a file table, atomic to a crash.

Spark's INSERT OVERWRITE of a data source table (``USING parquet``, orc, ...)
deletes the table's files first and then writes the new ones: a failure or a
SIGKILL on the way leaves the table empty. The gateway runs such a statement
as a job that writes the new rows into a directory beside the table's
(``.<dir>.sparkgate-staging-<token>``) and, as its last step, swaps the two
directories (the old one moved aside, the staged one moved in, the old one
deleted), so readers see the old rows until the new ones are complete.

The job's durable hook (:class:`OverwriteHook`, kept by the job store) undoes
a half-done overwrite, also at the next start after a crash: the staged
directory goes and, if the swap was cut between its two moves, the old
directory comes back.

Other targets run as Spark runs them: Hive format tables (Spark already
stages their files), partitioned tables, INSERT OVERWRITE ... PARTITION, tables
of other catalogs or formats (a table format such as Delta Lake or Iceberg
gives them atomic commits of its own).
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


@dataclass(frozen=True)
class FileTable:
    """A non-partitioned file table of the session catalog: where and how it is stored."""

    name: tuple[str, ...]
    location: str
    provider: str
    options: Mapping[str, str]


def file_table(spark: SparkSession, insert: InsertStatement) -> FileTable | None:
    """The target of ``insert`` when the gateway makes its overwrite atomic, else None."""
    if not insert.overwrite or insert.partition:
        return None
    target = insert.target
    if len(target) == 3 and target[0].lower() != SESSION_CATALOG:
        return None
    try:
        with active_session(spark):
            state = spark._jsparkSession.sessionState()
            identifier = state.sqlParser().parseTableIdentifier(quote_name(target[-2:]))
            table = state.catalog().getTableMetadata(identifier)
    except Exception:
        return None  # not a session catalog table: Spark says what is wrong when it runs
    provider = table.provider()
    if not provider.isDefined() or str(provider.get()).lower() not in _FILE_FORMATS:
        return None
    if table.partitionColumnNames().nonEmpty() or str(table.tableType().name()) == "VIEW":
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
    qualified = (str(table.identifier().database().get()), str(table.identifier().table()))
    return FileTable(
        (SESSION_CATALOG, *qualified),
        str(location.get().toString()),
        str(provider.get()).lower(),
        options,
    )


@dataclass
class OverwriteHook(NoopJobStatusHook):
    """The file side of one atomic INSERT OVERWRITE job (see the module's docstring)."""

    spark: SparkSession
    table: tuple[str, ...]
    location: str
    staging: str
    backup: str

    kind = HOOK_KIND

    @classmethod
    def for_table(cls, spark: SparkSession, table: FileTable) -> OverwriteHook:
        token = uuid.uuid4().hex[:12]
        return cls(
            spark,
            table.name,
            table.location,
            sibling_directory(spark, table.location, token, "staging"),
            sibling_directory(spark, table.location, token, "replaced"),
        )

    def record(self) -> dict[str, Any]:
        return {
            "table": list(self.table),
            "location": self.location,
            "staging": self.staging,
            "backup": self.backup,
        }

    @classmethod
    def from_record(cls, spark: SparkSession, record: Mapping[str, Any]) -> OverwriteHook:
        return cls(
            spark,
            tuple(str(part) for part in record["table"]),
            str(record["location"]),
            str(record["staging"]),
            str(record["backup"]),
        )

    def publish(self) -> None:
        """The job's last step, once the new rows are all written: swap the directories."""
        if path_exists(self.spark, self.location):
            move_directory(self.spark, self.location, self.backup)
        move_directory(self.spark, self.staging, self.location)
        delete_directory(self.spark, self.backup)
        self.spark.sql(f"REFRESH TABLE {quote_name(self.table)}").collect()
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
        delete_directory(spark, self.staging)
        try:
            spark.sql(f"REFRESH TABLE {quote_name(self.table)}").collect()
        except Exception:
            log.debug("Could not refresh %s", ".".join(self.table), exc_info=True)
