"""Materialized tables (FLIP-435): created, kept fresh, suspended, resumed, dropped.

A materialized table is a catalog table plus its definition in the table's
properties (:mod:`.definition`): a table of Spark's (``'format'``, Parquet by
default), or with ``'connector'`` in its options a connector table of the
gateway's (a sink: files, Kafka, JDBC, print, blackhole), stored as CREATE
TABLE ... WITH stores one. The gateway keeps it fresh one of two ways:

- CONTINUOUS: a streaming job of the job manager (listed in SHOW JOBS,
  named after the table) writes the query's rows, one micro-batch per
  freshness interval. Without a primary key it appends; with one it applies
  each micro-batch as upserts (:mod:`.upsert`). SUSPEND stops it with a
  savepoint, RESUME starts it from there; after a gateway restart an
  ACTIVATED table's job starts again from its last checkpoint.
- FULL: a refresh workflow in the workflow scheduler fires on a cron
  derived from the freshness; each refresh is a batch job of ``INSERT
  OVERWRITE`` (of one partition when the table has a date formatter for a
  partition column); a connector's table gets the rows as an INSERT writes
  them (files of the partitions refreshed replaced, other sinks appended to).

Jobs run in Spark sessions of their own, not the creating session's, so they
outlive it, as every job of the job manager does.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sparkgate.api.errors import ExecutionError, UnsupportedStatementError
from sparkgate.api.session_options import RUNTIME_MODE
from sparkgate.api.workflow import (
    SCHEDULE_TIME_FORMAT,
    CreatePeriodicRefreshWorkflow,
    DeleteRefreshWorkflow,
    ModifyRefreshWorkflowCronExpr,
    ResumeRefreshWorkflow,
    SuspendRefreshWorkflow,
    WorkflowError,
    WorkflowScheduler,
)
from sparkgate.service.catalogs.registry import CatalogRegistry
from sparkgate.service.catalogs.spark import qualified_name
from sparkgate.service.job.job import Job
from sparkgate.service.job.manager import JobManager
from sparkgate.service.job.store import RESTART_CAUSE, SHUTDOWN_CAUSE
from sparkgate.service.materialized.definition import (
    Freshness,
    MaterializedTable,
    RefreshMode,
    RefreshStatus,
    cron_of,
    derive_mode,
)
from sparkgate.service.materialized.upsert import (
    Upsert,
    base_directory,
    table_location,
)
from sparkgate.service.materialized.versions import replace_contents
from sparkgate.service.spark.files import Files
from sparkgate.service.spark.jobs import invalid, to_execution_error
from sparkgate.service.spark.types import to_logical_type
from sparkgate.service.streaming import connectors, resolve
from sparkgate.service.streaming.changelog import by_name
from sparkgate.service.streaming.ddl import Column, TableDefinition
from sparkgate.service.streaming.query import sink_modes, start_with_fallback
from sparkgate.sql.quoting import quote_identifier, quote_properties, quote_string

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

__all__ = ["MaterializedSettings", "MaterializedTableManager", "Refresh"]

log = logging.getLogger(__name__)

# The job option that names a job's materialized table.
TABLE_OPTION = "materialized-table"
_FORMATS = ("parquet", "orc", "json", "csv", "avro")
_DATE_FORMATTER = "partition.fields.{}.date-formatter"
# Java's date pattern letters (Flink's formatter) as strftime directives.
_PATTERN = (("yyyy", "%Y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"), ("mm", "%M"), ("ss", "%S"))


def _strftime(pattern: str) -> str:
    out = pattern
    for java, python in _PATTERN:
        out = out.replace(java, python)
    if any(
        ch.isalpha()
        for ch in out.replace("%Y", "")
        .replace("%m", "")
        .replace("%d", "")
        .replace("%H", "")
        .replace("%M", "")
        .replace("%S", "")
    ):
        raise ExecutionError(
            f"Unsupported date formatter '{pattern}': use yyyy, MM, dd, HH, mm, ss and separators"
        )
    return out


@dataclass(frozen=True)
class MaterializedSettings:
    """The gateway options materialized tables follow."""

    threshold: timedelta = timedelta(minutes=30)
    default_continuous: timedelta = timedelta(minutes=3)
    default_full: timedelta = timedelta(hours=1)


@dataclass(frozen=True)
class Refresh:
    """One refresh request (a statement's REFRESH, the REST call, a scheduler's fire)."""

    periodic: bool = False
    schedule_time: str | None = None
    dynamic_options: Mapping[str, str] | None = None
    static_partitions: Mapping[str, str] | None = None
    execution_config: Mapping[str, str] | None = None


class MaterializedTableManager:
    """The gateway's materialized tables: one per gateway, shared by every session."""

    def __init__(
        self,
        jobs: JobManager,
        catalogs: CatalogRegistry,
        scheduler: WorkflowScheduler[Any] | None,
        settings: MaterializedSettings | None = None,
    ) -> None:
        self._jobs = jobs
        self._catalogs = catalogs
        self._scheduler = scheduler
        self.settings = settings or MaterializedSettings()
        self._spark: SparkSession | None = None
        self._locks: dict[tuple[str, str, str], threading.Lock] = {}
        self._catalog_locks: dict[tuple[str, str, str], threading.RLock] = {}
        # Periodic refreshes submitted but waiting for the table: (table, partitions) -> job.
        self._waiting: dict[tuple[tuple[str, str, str], tuple[tuple[str, str], ...]], str] = {}
        self._locks_lock = threading.Lock()
        #: Told of each refresh submitted, periodic or not (the gateway's metrics).
        self.on_refresh: Callable[[bool], None] | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, spark: SparkSession) -> None:
        """Open the scheduler and start again the continuous jobs a restart ended."""
        self._spark = spark
        if self._scheduler is not None:
            self._scheduler.open()
        self._restart_continuous()

    def stop(self) -> None:
        if self._scheduler is not None:
            try:
                self._scheduler.close()
            except Exception:
                log.warning("Could not close the workflow scheduler", exc_info=True)
        self._spark = None

    @property
    def scheduler(self) -> WorkflowScheduler[Any] | None:
        return self._scheduler

    def _job_session(self, config: Mapping[str, str] | None = None) -> SparkSession:
        """A Spark session of the gateway's, for one job: it outlives any user session."""
        if self._spark is None:
            raise ExecutionError("Materialized tables are not started")
        spark = self._spark.newSession()
        self._catalogs.attach(spark)
        for key, value in (config or {}).items():
            if key.startswith("spark."):
                spark.conf.set(key, value)
        return spark

    def _table_lock(self, identifier: tuple[str, str, str]) -> threading.Lock:
        """Held by a refresh from start to end: one refresh of a table at a time."""
        with self._locks_lock:
            return self._locks.setdefault(identifier, threading.Lock())

    def _seen_everywhere(self, identifier: tuple[str, str, str]) -> None:
        """The table moved to new files: every session plans it anew. (A session keeps
        the relation it resolved, location included, until its cached entry goes.)"""
        if self._spark is None:
            return
        jvm: Any = self._spark.sparkContext._jvm
        some = jvm.scala.Some
        name = jvm.org.apache.spark.sql.catalyst.TableIdentifier(
            identifier[2], some(identifier[1]), some(identifier[0])
        )
        for session in self._catalogs.live_sessions():
            try:
                session._jsparkSession.sessionState().catalog().invalidateCachedTable(name)
            except Exception:
                log.debug("Could not invalidate %s in a session", identifier, exc_info=True)

    def _catalog_lock(self, identifier: tuple[str, str, str]) -> threading.RLock:
        """Held around every change of the table's catalog entry. Spark rewrites the
        whole entry on each ALTER TABLE (read, change, write back): a location swap
        and a status change at once would each undo the other."""
        with self._locks_lock:
            return self._catalog_locks.setdefault(identifier, threading.RLock())

    # -- reading -------------------------------------------------------------------------
    def identifier(self, spark: SparkSession, name: tuple[str, ...]) -> tuple[str, str, str]:
        full = qualified_name(spark, name)
        if len(full) != 3:
            raise invalid(f"Not a table name of catalog.database.table: {'.'.join(name)}")
        return (full[0], full[1], full[2])

    def read(
        self, spark: SparkSession, identifier: tuple[str, str, str]
    ) -> MaterializedTable | None:
        """The table's definition; None for a plain table or no table."""
        name = _quoted(identifier)
        try:
            if not spark.catalog.tableExists(name):
                return None
            rows = spark.sql(f"SHOW TBLPROPERTIES {name}").collect()
        except Exception:
            log.debug("No properties of %s", name, exc_info=True)
            return None
        props = {str(row[0]): str(row[1]) for row in rows}
        if not any(key.startswith("materialized-table.") for key in props):
            return None
        partitions: tuple[str, ...] = ()
        comment = None
        try:
            partitions = tuple(c.name for c in spark.catalog.listColumns(name) if c.isPartition)
            comment = spark.catalog.getTable(name).description
        except Exception:
            log.debug("No columns of %s", name, exc_info=True)
        stored = props.get(connectors.DEFINITION_PROPERTY)
        if stored is not None:  # a connector's table: a view of Spark's, but for files
            partitions = TableDefinition.from_json(identifier, stored).partition_keys
        return MaterializedTable.from_properties(identifier, props, partitions, comment)

    def require(
        self, spark: SparkSession, name: tuple[str, ...], *, if_exists: bool = False
    ) -> MaterializedTable | None:
        """The named materialized table; a clear error for a plain or missing table."""
        identifier = self.identifier(spark, name)
        table = self.read(spark, identifier)
        if table is not None:
            return table
        shown = ".".join(identifier)
        if spark.catalog.tableExists(_quoted(identifier)):
            raise invalid(
                f"Table {shown} is not a materialized table: use ALTER TABLE / DROP TABLE for it."
            )
        if if_exists:
            return None
        raise invalid(
            f"Materialized table {shown} does not exist.",
            error_class="TABLE_OR_VIEW_NOT_FOUND",
            sql_state="42P01",
        )

    def list(self, spark: SparkSession, database: tuple[str, ...]) -> list[str]:
        listing = "SHOW TABLES" + (f" IN {_quoted(database)}" if database else "")
        names = []
        catalog, namespace = _namespace(spark, database)
        for row in spark.sql(listing).collect():
            if bool(row[2]):
                continue
            identifier = (catalog, namespace, str(row[1]))
            if self.read(spark, identifier) is not None:
                names.append(str(row[1]))
        return sorted(names)

    def _save(self, spark: SparkSession, table: MaterializedTable) -> None:
        text = quote_properties(table.properties())
        kind = _stored_as(table)
        with self._catalog_lock(table.identifier):
            spark.sql(
                f"ALTER {kind} {_quoted(table.identifier)} SET TBLPROPERTIES ({text})"
            ).collect()

    # -- creating ------------------------------------------------------------------------
    def create(
        self,
        spark: SparkSession,
        name: tuple[str, ...],
        query: str,
        *,
        primary_key: tuple[str, ...] = (),
        partition_keys: tuple[str, ...] = (),
        comment: str | None = None,
        options: Mapping[str, str] | None = None,
        freshness: Freshness | None = None,
        refresh_mode: str | None = None,
        session_config: Mapping[str, str] | None = None,
        owner: str | None = None,
    ) -> MaterializedTable:
        """Create the table, then its refresh job or workflow; nothing is left
        behind if any step fails. ``owner``: the authenticated user creating it."""
        identifier = self.identifier(spark, name)
        shown = ".".join(identifier)
        if spark.catalog.tableExists(_quoted(identifier)):
            raise invalid(
                f"Table {shown} already exists.",
                error_class="TABLE_OR_VIEW_ALREADY_EXISTS",
                sql_state="42P07",
            )
        if not spark.catalog.databaseExists(_quoted(identifier[:2])):
            raise invalid(
                f"Database {'.'.join(identifier[:2])} does not exist.",
                error_class="SCHEMA_NOT_FOUND",
                sql_state="42704",
            )
        options = dict(options or {})
        table_format = options.get("format", "parquet").lower()
        if "connector" not in options and table_format not in _FORMATS:
            raise UnsupportedStatementError(
                f"Unsupported format '{table_format}' for a materialized table "
                f"(supported: {', '.join(_FORMATS)})"
            )
        fresh, mode = derive_mode(
            freshness,
            refresh_mode,
            threshold=self.settings.threshold,
            default_continuous=self.settings.default_continuous,
            default_full=self.settings.default_full,
        )
        cron = cron_of(fresh) if mode is RefreshMode.FULL else None
        if mode is RefreshMode.CONTINUOUS and primary_key and partition_keys:
            raise UnsupportedStatementError(
                "A CONTINUOUS materialized table with a PRIMARY KEY cannot be PARTITIONED BY: "
                "its upserts replace the table's files as a whole (use REFRESH_MODE = FULL, "
                "or no partitions)"
            )
        frame = _batch_frame(spark, query)
        columns = {f.name.lower() for f in frame.schema.fields}
        for what, keys in (("primary key", primary_key), ("partition", partition_keys)):
            missing = [k for k in keys if k.lower() not in columns]
            if missing:
                raise invalid(
                    f"The {what} column(s) {', '.join(missing)} are not columns of the query "
                    f"({', '.join(f.name for f in frame.schema.fields)})"
                )
        for key in options:
            if key.startswith("partition.fields.") and key.endswith(".date-formatter"):
                column = key[len("partition.fields.") : -len(".date-formatter")]
                if column.lower() not in {k.lower() for k in partition_keys}:
                    raise invalid(f"'{key}' names {column}, which is not a partition column")
                _strftime(options[key])
        table = MaterializedTable(
            identifier,
            query,
            fresh,
            refresh_mode or "AUTOMATIC",
            mode,
            primary_key=primary_key,
            partition_keys=partition_keys,
            comment=comment,
            options=options,
            owner=owner,
        )
        if "connector" in options:
            sink = _sink_of(table, frame)
            connectors.sink_kind(sink)  # a source-only connector or a bad option: refused
            if sink.connector == "filesystem":
                Files(spark).make_directories(sink.options["path"])
            stored = connectors.catalog_ddl(
                sink, connectors.stored_select(sink), properties=table.properties()
            )
        else:
            ddl = frame._jdf.schema().asNullable().toDDL()
            clauses = f"USING {table_format}"
            if partition_keys:
                listed = ", ".join(quote_identifier(k) for k in partition_keys)
                clauses += f" PARTITIONED BY ({listed})"
            if comment:
                clauses += f" COMMENT {quote_string(comment)}"
            props = quote_properties(table.properties())
            stored = f"CREATE TABLE {_quoted(identifier)} ({ddl}) {clauses} TBLPROPERTIES ({props})"
        try:
            spark.sql(stored).collect()
        except Exception as exc:
            raise to_execution_error(exc) from exc
        resolve.invalidate()
        try:
            if mode is RefreshMode.FULL:
                assert cron is not None
                table = self._create_workflow(table, cron, session_config or {})
            else:
                table = self._start_continuous(table, restore=None)
            table = table.with_status(RefreshStatus.ACTIVATED)
            self._save(spark, table)
        except BaseException as exc:
            self._undo_create(spark, table)
            raise to_execution_error(exc) from exc
        log.info("Created materialized table %s (%s, freshness %s)", shown, mode.value, fresh)
        return table

    def _undo_create(self, spark: SparkSession, table: MaterializedTable) -> None:
        """Remove what a failed CREATE made: its job or workflow, then the table."""
        try:
            self._stop_refreshing(table)
        except Exception:
            log.warning("Could not stop the refresh of %s", table.name, exc_info=True)
        kind = _stored_as(table)
        try:
            spark.sql(f"DROP {kind} IF EXISTS {_quoted(table.identifier)}").collect()
        except Exception:
            log.warning("Could not drop the half-made table %s", table.name, exc_info=True)
        resolve.invalidate()

    def _create_workflow(
        self, table: MaterializedTable, cron: str, session_config: Mapping[str, str]
    ) -> MaterializedTable:
        scheduler = self._require_scheduler()
        handler = scheduler.create_refresh_workflow(
            CreatePeriodicRefreshWorkflow(
                materialized_table=table.name,
                description=f"Refresh of materialized table {table.name}",
                cron_expression=cron,
                init_config={
                    k: v for k, v in session_config.items() if not k.startswith("sql-gateway.")
                },
            )
        )
        data = scheduler.refresh_handler_serializer().serialize(handler)
        return table.with_handler(handler.as_summary_string(), data)

    def _require_scheduler(self) -> WorkflowScheduler[Any]:
        if self._scheduler is None:
            raise WorkflowError("No workflow scheduler is configured (workflow-scheduler.type)")
        return self._scheduler

    def _handler(self, table: MaterializedTable) -> Any:
        if table.handler_bytes is None:
            raise WorkflowError(f"Materialized table {table.name} has no refresh workflow")
        return (
            self._require_scheduler().refresh_handler_serializer().deserialize(table.handler_bytes)
        )

    # -- continuous jobs -------------------------------------------------------------------
    def _start_continuous(self, table: MaterializedTable, restore: str | None) -> MaterializedTable:
        spark = self._job_session()
        trigger_s = float(table.freshness.seconds)
        name = table.name
        upsert = (
            Upsert(
                spark,
                table.identifier,
                table.primary_key,
                self._catalog_lock(table.identifier),
                lambda: self._seen_everywhere(table.identifier),
            )
            if table.primary_key and "connector" not in table.options
            else None
        )

        sink = self._sink(spark, table)
        every = f"{int(trigger_s * 1000)} milliseconds"

        def start(checkpoint: str) -> StreamingQuery:
            frame = _stream_frame(spark, table.query, trigger_s)
            if sink is not None:
                return _start_sink(frame, sink, checkpoint, every)
            columns = spark.table(name).columns
            frame = frame.select(*(quote_identifier(c) for c in columns))
            writer = frame.writeStream.option("checkpointLocation", checkpoint).trigger(
                processingTime=every
            )
            if upsert is not None:
                query: StreamingQuery = upsert.start(writer.outputMode("update"), checkpoint)
                return query
            try:
                appending: StreamingQuery = writer.outputMode("append").toTable(name)
            except Exception as exc:
                error = to_execution_error(exc)
                if "aggregat" in error.root_cause.lower():
                    raise ExecutionError(
                        f"{error.message} (a CONTINUOUS materialized table over an aggregation "
                        "needs a PRIMARY KEY: its rows are then kept up to date as upserts)",
                        causes=error.causes,
                        error_class=error.error_class,
                    ) from exc
                raise
            _watch_appends(spark, appending, lambda: self._seen_everywhere(table.identifier))
            return appending

        job = self._jobs.submit_stream(
            spark.sparkContext,
            f"INSERT INTO {name} {table.query}",
            ".".join(table.identifier),
            [start],
            savepoint=restore,
            options={TABLE_OPTION: name, RUNTIME_MODE.key: "streaming"},
        )
        data = json.dumps({"jobId": job.id, "restorePath": restore}).encode()
        return table.with_handler(_continuous_summary(job.id, restore), data)

    def _job_of(self, table: MaterializedTable) -> Job | None:
        if table.handler_bytes is None or table.mode is not RefreshMode.CONTINUOUS:
            return None
        job_id = json.loads(table.handler_bytes).get("jobId")
        try:
            return self._jobs.get(str(job_id)) if job_id else None
        except ExecutionError:
            return None

    def _restart_continuous(self) -> None:
        """Start again, from their last checkpoint, the continuous jobs the last stop or
        crash of the gateway ended (not ones a user stopped)."""
        spark = self._spark
        assert spark is not None
        for job in self._jobs.jobs():
            name = job.options.get(TABLE_OPTION)
            if not name or job.cause not in (RESTART_CAUSE, SHUTDOWN_CAUSE):
                continue
            try:
                identifier = self.identifier(spark, resolve_name(spark, name))
                table = self.read(spark, identifier)
                if (
                    table is None
                    or table.mode is not RefreshMode.CONTINUOUS
                    or table.status is not RefreshStatus.ACTIVATED
                    or table.handler_bytes is None
                    or json.loads(table.handler_bytes).get("jobId") != job.id
                ):
                    continue
                log.info("Starting again the continuous job of %s (was %s)", name, job.id)
                checkpoint = job.checkpoint
                table = self._start_continuous(table, restore=checkpoint)
                self._save(spark, table)
            except Exception:
                log.exception("Could not start again the continuous job of %s", name)

    def _stop_refreshing(self, table: MaterializedTable) -> None:
        """Stop the table's job or delete its workflow (DROP, a failed CREATE)."""
        if table.handler_bytes is None:
            return
        if table.mode is RefreshMode.FULL:
            self._require_scheduler().delete_refresh_workflow(
                DeleteRefreshWorkflow(self._handler(table))
            )
            return
        job = self._job_of(table)
        if job is not None and not job.status.is_terminal:
            assert self._spark is not None
            self._jobs.stop_job(self._spark.sparkContext, job.id)

    # -- ALTER ---------------------------------------------------------------------------
    def suspend(self, spark: SparkSession, name: tuple[str, ...]) -> MaterializedTable:
        table = self.require(spark, name)
        assert table is not None
        if table.status is RefreshStatus.SUSPENDED:
            raise invalid(f"Materialized table {table.name} is already suspended")
        if table.mode is RefreshMode.FULL:
            self._require_scheduler().modify_refresh_workflow(
                SuspendRefreshWorkflow(self._handler(table))
            )
        else:
            job = self._job_of(table)
            savepoint = None
            if job is not None and not job.status.is_terminal:
                assert self._spark is not None
                stopped = self._jobs.stop_job(self._spark.sparkContext, job.id, savepoint=True)
                savepoint = stopped.savepoint
            elif job is not None:
                savepoint = job.savepoint or job.checkpoint
            data = json.dumps({"jobId": job.id if job else None, "restorePath": savepoint}).encode()
            table = table.with_handler(
                _continuous_summary(job.id if job else None, savepoint), data
            )
        table = table.with_status(RefreshStatus.SUSPENDED)
        self._save(spark, table)
        return table

    def resume(
        self, spark: SparkSession, name: tuple[str, ...], options: Mapping[str, str]
    ) -> MaterializedTable:
        table = self.require(spark, name)
        assert table is not None
        if table.status is RefreshStatus.ACTIVATED:
            raise invalid(f"Materialized table {table.name} is not suspended")
        merged = {**table.options, **options}
        table = replace(table, options=merged)
        if table.mode is RefreshMode.FULL:
            self._require_scheduler().modify_refresh_workflow(
                ResumeRefreshWorkflow(self._handler(table), dynamic_options=dict(options))
            )
        else:
            restore = None
            if table.handler_bytes is not None:
                restore = json.loads(table.handler_bytes).get("restorePath")
            table = self._start_continuous(table, restore=restore)
        table = table.with_status(RefreshStatus.ACTIVATED)
        self._save(spark, table)
        return table

    def alter_query(
        self, spark: SparkSession, name: tuple[str, ...], query: str
    ) -> MaterializedTable:
        """``ALTER MATERIALIZED TABLE t AS <query>``: the new query may add columns at
        the end; the existing ones keep their names and types (Flink's rule)."""
        table = self.require(spark, name)
        assert table is not None
        old = spark.table(table.name).schema.fields
        new = _batch_frame(spark, query).schema.fields
        ok = len(new) >= len(old) and all(
            a.name.lower() == b.name.lower() and a.dataType == b.dataType
            for a, b in zip(old, new, strict=False)
        )
        if not ok:
            raise invalid(
                "ALTER MATERIALIZED TABLE ... AS may only add columns at the end: the table has "
                f"({', '.join(f'{f.name} {f.dataType.simpleString()}' for f in old)}), the query "
                f"gives ({', '.join(f'{f.name} {f.dataType.simpleString()}' for f in new)})"
            )
        added = new[len(old) :]
        running = table.mode is RefreshMode.CONTINUOUS and table.status is RefreshStatus.ACTIVATED
        if running:
            job = self._job_of(table)
            if job is not None and not job.status.is_terminal:
                assert self._spark is not None
                self._jobs.stop_job(self._spark.sparkContext, job.id)
        sink = self._sink(spark, table)
        if added:
            self._add_columns(spark, table, sink, added)
        table = replace(table, query=query)
        if running:
            # A new query has new state: its job reads its sources from the start into an
            # emptied table (a checkpoint of the old query would not fit it). A connector's
            # sink is not emptied: what it was sent is gone from the gateway's reach.
            if sink is None:
                spark.sql(f"TRUNCATE TABLE {_quoted(table.identifier)}").collect()
            table = self._start_continuous(table, restore=None)
        self._save(spark, table)
        return table

    def _add_columns(
        self,
        spark: SparkSession,
        table: MaterializedTable,
        sink: TableDefinition | None,
        added: Sequence[Any],
    ) -> None:
        name = _quoted(table.identifier)
        if sink is None or sink.connector == "filesystem":
            columns = ", ".join(
                f"{quote_identifier(f.name)} {f.dataType.simpleString()}" for f in added
            )
            spark.sql(f"ALTER TABLE {name} ADD COLUMNS ({columns})").collect()
        if sink is not None:
            grown = replace(sink, columns=(*sink.columns, *_columns(added, ())))
            if sink.connector == "filesystem":
                stored = quote_properties({connectors.DEFINITION_PROPERTY: grown.to_json()})
                spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ({stored})").collect()
            else:
                spark.sql(
                    connectors.catalog_ddl(
                        grown,
                        connectors.stored_select(grown),
                        replace=True,
                        properties=table.properties(),
                    )
                ).collect()
        resolve.invalidate()

    def alter_freshness(
        self, spark: SparkSession, name: tuple[str, ...], freshness: Freshness
    ) -> MaterializedTable:
        """A new FRESHNESS (``CREATE OR ALTER``): a FULL table's workflow gets the new
        cron; a running CONTINUOUS table's job goes on from a savepoint at the new pace."""
        table = self.require(spark, name)
        assert table is not None
        if freshness == table.freshness:
            return table
        if table.mode is RefreshMode.FULL:
            cron = cron_of(freshness)
            self._require_scheduler().modify_refresh_workflow(
                ModifyRefreshWorkflowCronExpr(self._handler(table), cron_expression=cron)
            )
            table = replace(table, freshness=freshness)
        elif table.status is RefreshStatus.ACTIVATED:
            job = self._job_of(table)
            restore = None
            if job is not None and not job.status.is_terminal:
                assert self._spark is not None
                restore = self._jobs.stop_job(
                    self._spark.sparkContext, job.id, savepoint=True
                ).savepoint
            table = self._start_continuous(replace(table, freshness=freshness), restore=restore)
        else:
            table = replace(table, freshness=freshness)
        self._save(spark, table)
        return table

    # -- DROP ------------------------------------------------------------------------------
    def drop(self, spark: SparkSession, name: tuple[str, ...], if_exists: bool) -> bool:
        table = self.require(spark, name, if_exists=if_exists)
        if table is None:
            return False
        self._stop_refreshing(table)
        connector = "connector" in table.options
        location = None if connector else table_location(spark, _quoted(table.identifier))
        kind = _stored_as(table)
        spark.sql(f"DROP {kind} {_quoted(table.identifier)}").collect()
        if location is not None and _is_managed_version(location):
            # DROP removes the current version only: its siblings (and the base) go too.
            Files(spark).delete(base_directory(location))
        resolve.invalidate()
        log.info("Dropped materialized table %s", table.name)
        return True

    # -- REFRESH ---------------------------------------------------------------------------
    def refresh(
        self,
        spark: SparkSession,
        name: tuple[str, ...],
        request: Refresh,
        *,
        wait: bool = False,
    ) -> Job:
        """Run one refresh of the table as a batch job: ``INSERT OVERWRITE`` of the
        whole table, or of the partitions the request or the schedule name."""
        table = self.require(spark, name)
        assert table is not None
        partitions = self._partitions(table, request)
        job_spark = self._job_session(request.execution_config)
        lock = self._table_lock(table.identifier)
        statement = f"INSERT OVERWRITE {table.name}"
        if partitions:
            spec = ", ".join(
                f"{quote_identifier(k)} = {quote_string(v)}" for k, v in partitions.items()
            )
            statement += f" PARTITION ({spec})"
        if request.periodic and request.schedule_time is not None:
            # Which fire time of the schedule this refresh is for (DESCRIBE JOB shows it).
            statement += f" /* scheduled {request.schedule_time} */"
        statement += f" {table.query}"

        keep_s = max(60.0, 2.0 * table.freshness.seconds)
        key = (table.identifier, tuple(sorted(partitions.items())))
        if request.periodic:
            # A periodic refresh of what a refresh still waiting to start will refresh
            # anyway joins it: fires faster than refreshes do not pile up.
            with self._locks_lock:
                waiting = self._waiting.get(key)
            if waiting is not None:
                log.info(
                    "Refresh of %s joins job %s, which has not started yet", table.name, waiting
                )
                return self._jobs.get(waiting)
        started = threading.Event()

        def action() -> None:
            with lock:
                started.set()
                with self._locks_lock:
                    if self._waiting.get(key) == job_id[0]:
                        del self._waiting[key]
                frame = _batch_frame(job_spark, table.query)
                sink = self._sink(job_spark, table)
                if sink is not None:
                    _write_sink(job_spark, table, sink, frame, partitions)
                    return
                replace_contents(
                    job_spark,
                    table.identifier,
                    frame,
                    table.partition_keys,
                    partitions or None,
                    keep_s,
                    self._catalog_lock(table.identifier),
                    lambda: self._seen_everywhere(table.identifier),
                )

        if self.on_refresh is not None:
            self.on_refresh(request.periodic)
        sc = job_spark.sparkContext
        job_name = f"{'.'.join(table.identifier)} refresh"
        job_options = {TABLE_OPTION: table.name, RUNTIME_MODE.key: "batch"}
        job_id: list[str] = [""]
        if wait:
            return self._jobs.run_batch(
                sc, statement, job_name, action, cancelled=lambda: False, options=job_options
            )
        with self._locks_lock:
            job = self._jobs.submit_batch(sc, statement, job_name, action, options=job_options)
            job_id[0] = job.id
            if request.periodic and not started.is_set():
                self._waiting[key] = job.id
        return job

    def _sink(self, spark: SparkSession, table: MaterializedTable) -> TableDefinition | None:
        """The connector table a materialized table with ``'connector'`` is; None else."""
        if "connector" not in table.options:
            return None
        sink = resolve.lookup(spark, table.identifier)
        if sink is None:
            raise ExecutionError(f"Materialized table {table.name} has lost its connector table")
        return sink

    def _partitions(self, table: MaterializedTable, request: Refresh) -> dict[str, str]:
        keys = {k.lower(): k for k in table.partition_keys}
        if request.static_partitions:
            out = {}
            for column, value in request.static_partitions.items():
                key = keys.get(column.lower())
                if key is None:
                    what = (
                        f"its partition columns are {', '.join(table.partition_keys)}"
                        if table.partition_keys
                        else "it is not partitioned"
                    )
                    raise invalid(
                        f"Cannot refresh partition {column} of materialized table "
                        f"{table.name}: {what}"
                    )
                out[key] = value
            return out
        if not request.periodic or request.schedule_time is None:
            return {}
        scheduled = datetime.strptime(request.schedule_time, SCHEDULE_TIME_FORMAT)
        moment = scheduled - timedelta(seconds=table.freshness.seconds)
        out = {}
        for key in table.partition_keys:
            pattern = table.options.get(_DATE_FORMATTER.format(key))
            if pattern is not None:
                out[key] = moment.strftime(_strftime(pattern))
        return out


def _stored_as(table: MaterializedTable) -> str:
    """``VIEW`` or ``TABLE``, as its DDL names it: a connector's table is a view of
    Spark's, as CREATE TABLE ... WITH stores one; a filesystem table (and a table of
    a format) is Spark's table of its files."""
    return "TABLE" if table.options.get("connector", "filesystem") == "filesystem" else "VIEW"


def _columns(fields: Sequence[Any], key: tuple[str, ...]) -> tuple[Column, ...]:
    """Spark's fields as a connector table's columns, typed as Flink declares them."""
    keys = {k.lower() for k in key}
    return tuple(
        Column(
            f.name,
            to_logical_type(f.dataType, True, f.metadata).summary(),
            not_null=f.name.lower() in keys,
        )
        for f in fields
    )


def _sink_of(table: MaterializedTable, frame: DataFrame) -> TableDefinition:
    """The connector table a materialized table with ``'connector'`` is stored as:
    the query's columns, the table's keys and its options but the gateway's own
    (the partition date formatters)."""
    options = {
        k: v
        for k, v in table.options.items()
        if not (k.startswith("partition.fields.") and k.endswith(".date-formatter"))
    }
    return TableDefinition(
        table.identifier,
        _columns(frame.schema.fields, table.primary_key),
        options,
        comment=table.comment,
        primary_key=table.primary_key,
        partition_keys=table.partition_keys,
    )


def _start_sink(
    frame: DataFrame, sink: TableDefinition, checkpoint: str, every: str
) -> StreamingQuery:
    """Stream ``frame`` into a connector's table as a streaming INSERT into it does."""
    frame = by_name(frame, [c.name for c in connectors.written(sink)])

    def make(mode: str) -> Any:
        writer = connectors.stream_writer(frame, sink, checkpoint).outputMode(mode)
        return writer.trigger(processingTime=every)

    return start_with_fallback(make, sink_modes(frame, sink.connector))


def _write_sink(
    spark: SparkSession,
    table: MaterializedTable,
    sink: TableDefinition,
    frame: DataFrame,
    partitions: Mapping[str, str],
) -> None:
    """One refresh into a connector's table: files replace those of the partitions
    refreshed (of all, without any), as INSERT OVERWRITE does; other sinks are sent
    the rows (a sink keeps what it was sent)."""
    from pyspark.sql import functions as F

    for key, value in partitions.items():
        frame = frame.where(F.col(quote_identifier(key)).cast("string") == value)
    if sink.connector != "filesystem":
        connectors.write_batch(by_name(frame, [c.name for c in connectors.written(sink)]), sink)
        return
    if partitions:
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    # Spark's order of the table's columns: partition columns last.
    by_name(frame, spark.table(table.name).columns).write.insertInto(table.name, overwrite=True)


def _is_managed_version(location: str) -> bool:
    return base_directory(location) != location.rstrip("/")


def _watch_appends(spark: SparkSession, query: StreamingQuery, moved: Callable[[], None]) -> None:
    """Tell every session of each micro-batch ``query`` appended (a session keeps the
    relation it resolved, file listing included, until its cached entry goes)."""
    from pyspark.sql.streaming.listener import StreamingQueryListener

    query_id = str(query.id)

    class _Appended(StreamingQueryListener):
        def onQueryStarted(self, event: Any) -> None:
            pass

        def onQueryProgress(self, event: Any) -> None:
            if str(event.progress.id) == query_id and event.progress.numInputRows:
                moved()

        def onQueryIdle(self, event: Any) -> None:
            pass

        def onQueryTerminated(self, event: Any) -> None:
            if str(event.id) == query_id:
                spark.streams.removeListener(self)

    spark.streams.addListener(_Appended())


def _continuous_summary(job_id: str | None, restore: str | None) -> str:
    text = f"{{\n  jobId: {job_id}"
    if restore:
        text += f",\n  restorePath: {restore}"
    return text + "\n}"


def _quoted(parts: tuple[str, ...]) -> str:
    return ".".join(quote_identifier(p) for p in parts)


def _namespace(spark: SparkSession, database: tuple[str, ...]) -> tuple[str, str]:
    if not database:
        return str(spark.catalog.currentCatalog()), str(spark.catalog.currentDatabase())
    full = qualified_name(spark, (*database, "x"))
    return full[0], ".".join(full[1:-1])


def resolve_name(spark: SparkSession, text: str) -> tuple[str, ...]:
    """A stored ``catalog.database.table`` text (backticks where needed) as parts."""
    from sparkgate.service.spark.plans import parse_identifier

    return parse_identifier(spark, text)


def _frame(spark: SparkSession, query: str, streaming: bool, trigger_s: float) -> DataFrame:
    try:
        with resolve.resolved(
            spark, query, temporary={}, streaming=streaming, trigger_s=trigger_s
        ) as resolution:
            return spark.sql(resolution.text)
    except ExecutionError:
        raise
    except Exception as exc:
        raise to_execution_error(exc) from exc


def _batch_frame(spark: SparkSession, query: str) -> DataFrame:
    return _frame(spark, query, False, 1.0)


def _stream_frame(spark: SparkSession, query: str, trigger_s: float) -> DataFrame:
    frame = _frame(spark, query, True, trigger_s)
    if not frame.isStreaming:
        raise invalid(
            "A CONTINUOUS materialized table needs a query over a streaming source "
            "(a connector table or a file table); use REFRESH_MODE = FULL for this one."
        )
    return frame
