"""The streaming strategy of the statement handlers: Flink's connector tables,
runtime mode, changelog results, long-running jobs and statement sets.

The handlers of ``service/statements/`` call it; it never calls them back
(the dependency goes one way). Every function works on a session and the
statement's :class:`RuntimeOptions` (the session's options overlaid with the
statement's own), so batch statements that touch no connector table pay
nothing but a cached catalog lookup.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sparkgate.api.config import ConfigOption
from sparkgate.api.errors import ExecutionError, SqlParseError, UnsupportedStatementError
from sparkgate.api.jobs import JobStatus, JobStatusHook
from sparkgate.api.results import ResultKind
from sparkgate.api.status import OperationStatus
from sparkgate.service import options
from sparkgate.service.catalog import quote_name
from sparkgate.service.catalogs import objects
from sparkgate.service.job.job import Job, StreamStarter
from sparkgate.service.operation.operation import Execution
from sparkgate.service.result.fetcher import ResultTraits
from sparkgate.service.spark.files import Files
from sparkgate.service.spark.jobs import invalid, to_execution_error
from sparkgate.service.spark.types import flink_named, to_result_schema
from sparkgate.service.streaming import connectors, kafka, resolve
from sparkgate.service.streaming.alter import TableAlteration, apply_alteration
from sparkgate.service.streaming.changelog import KIND_COLUMN, by_name
from sparkgate.service.streaming.ddl import TableDefinition
from sparkgate.service.streaming.insert import align, parse_insert
from sparkgate.service.streaming.query import (
    changelog_batches,
    sink_modes,
    start_with_fallback,
)
from sparkgate.sql.quoting import quote_properties

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.query import StreamingQuery

    from sparkgate.service.operation.operation import Operation
    from sparkgate.service.session.session import Session
    from sparkgate.service.streaming.resolve import Resolution

__all__ = [
    "InsertPlan",
    "Replanner",
    "RuntimeOptions",
    "StagedFiles",
    "alter_connector_table",
    "check_option",
    "create_connector_table",
    "drop_temporary_table",
    "invalidate_tables",
    "plan_insert",
    "query_execution",
    "query_frame",
    "restarter",
    "spark_statement",
    "streaming_execution",
    "submit",
]

log = logging.getLogger(__name__)

_MODES = ("batch", "streaming")
_STOPPED = frozenset({OperationStatus.CANCELED, OperationStatus.CLOSED, OperationStatus.TIMEOUT})


# -- options -----------------------------------------------------------------------


def _parsed(option: ConfigOption[Any], raw: str | None) -> Any:
    if raw is None or raw == "":
        return option.default
    try:
        return option.parse(raw)
    except ValueError as exc:
        raise ExecutionError(f"Invalid value for {option.key}: {exc}") from exc


class RuntimeOptions:
    """The options one statement runs with: the session's configuration overlaid
    with the statement's own (REST ``executionConfig``, HiveServer2
    ``confOverlay``). Each is read when asked for, so a bad value only fails
    the statements that use it.

    ``effective`` gives all of them at once (the session's configuration with
    the statement's options over it): a job keeps them as its definition.
    """

    def __init__(
        self,
        get: Callable[[str], str | None],
        effective: Callable[[], Mapping[str, str]] | None = None,
    ) -> None:
        self._raw = get
        self._effective = effective

    def _get(self, option: ConfigOption[Any]) -> Any:
        return _parsed(option, self._raw(option.key))

    @property
    def streaming(self) -> bool:
        return str(self._get(options.RUNTIME_MODE)).lower() == "streaming"

    @property
    def dml_sync(self) -> bool:
        return bool(self._get(options.DML_SYNC))

    @property
    def dml_waits(self) -> bool:
        """Whether DML waits for its job: ``table.dml-sync``, true unless set in
        batch mode, and false unless set in streaming mode (Flink's default
        there, where a job may never end)."""
        if self.streaming and self._raw(options.DML_SYNC.key) in (None, ""):
            return False
        return self.dml_sync

    @property
    def trigger_s(self) -> float:
        return float(self._get(options.CHECKPOINTING_INTERVAL).total_seconds())

    @property
    def pipeline_name(self) -> str | None:
        return str(self._get(options.PIPELINE_NAME)) or None

    @property
    def job_id(self) -> str | None:
        return str(self._get(options.PIPELINE_JOB_ID)) or None

    @property
    def ctas_atomic(self) -> bool:
        return bool(self._get(options.CTAS_ATOMICITY))

    @property
    def savepoint_path(self) -> str | None:
        return str(self._get(options.SAVEPOINT_PATH)) or None

    @property
    def state_ttl(self) -> timedelta:
        """``table.exec.state.ttl``: the state TTL of a streaming statement's
        stateful operators (zero: kept until Spark's watermark evicts it, or forever)."""
        return self._get(options.STATE_TTL)  # type: ignore[no-any-return]

    @property
    def force_recompile(self) -> bool:
        return bool(self._get(options.PLAN_FORCE_RECOMPILE))

    def as_streaming(self) -> RuntimeOptions:
        """These options in streaming mode (a compiled plan always streams)."""
        get = self._raw
        return RuntimeOptions(
            lambda key: "streaming" if key == options.RUNTIME_MODE.key else get(key),
            self._effective,
        )

    def frozen(self) -> RuntimeOptions:
        """These options as they are now (a job planned again later plans as now)."""
        if self._effective is None:
            return self
        snapshot = dict(self._effective())
        return RuntimeOptions(snapshot.get, lambda: snapshot)

    def snapshot(self) -> dict[str, str]:
        """All of them as they are now (empty when only single keys can be read)."""
        return {} if self._effective is None else dict(self._effective())

    def job_options(self) -> dict[str, str]:
        """The options a job of this statement runs under, as its record keeps
        them: secret values masked as a connector table's are."""
        if self._effective is None:
            return {}
        return connectors.masked_options(self._effective())


def check_option(key: str, value: str) -> None:
    """Refuse a bad runtime mode at SET time rather than at the next query."""
    if key == options.RUNTIME_MODE.key and value.lower() not in _MODES:
        raise ExecutionError(
            f"Invalid value '{value}' for {key}; valid values: {', '.join(_MODES)}",
            causes=(f"IllegalArgumentException: invalid runtime mode '{value}'",),
        )


def invalidate_tables(session: Session | None = None, text: str | None = None) -> None:
    """DDL ran: cached connector-table lookups of the names it touched may be stale."""
    resolve.invalidate(session.spark if session is not None else None, text)


def spark_statement(session: Session, text: str) -> DataFrame:
    """Spark runs ``text`` as written."""
    from pyspark.sql import DataFrame as Frame

    spark = session.spark
    try:
        # The JVM's own call: pyspark's sql() adds five py4j calls for its arguments.
        return Frame(spark._jsparkSession.sql(text), spark)
    except Exception as exc:
        raise to_execution_error(exc) from exc


_VALUES_TRIGGER_S = 0.01

# -- DDL ---------------------------------------------------------------------------


def create_connector_table(session: Session, definition: TableDefinition) -> None:
    """Store Flink's ``CREATE TABLE ... WITH ('connector' = ...)``."""
    resolve.invalidate()
    connectors.check_definition(definition)
    if definition.connector in kafka.CONNECTORS:
        # Spark's Kafka integration, resolved once, now rather than at a first read.
        kafka.require(session.spark, definition)
    if definition.temporary:
        _create_temporary(session, definition)
        return
    located = objects.locate(session.spark, definition.name)
    if located is not None and not _absent(session, definition, located):
        return
    if definition.connector == "filesystem":
        Files(session.spark).make_directories(definition.options["path"])
    if located is not None:
        kept, (catalog, database, table) = located
        stored = replace(definition, name=(catalog, database, table))
        body = connectors.columns_select(stored)
        if body is not None:  # Spark analyses it, as it does a stored view's
            spark_statement(session, body)
        kept.put(objects.CatalogObject(database, table, "table", stored.to_json()))
    else:
        _store(session, definition, replace=False)
    log.info("Created %s table %s", definition.connector, ".".join(definition.name))


def _absent(
    session: Session,
    definition: TableDefinition,
    located: tuple[objects.CatalogObjects, tuple[str, str, str]],
) -> bool:
    """Whether a connector table can be kept under ``located``'s name (False:
    one is there and the statement said IF NOT EXISTS)."""
    kept, (catalog, database, table) = located
    spark = session.spark
    if not spark.catalog.databaseExists(quote_name((catalog, database))):
        raise invalid(
            f"Database {database} does not exist in Catalog {catalog}.",
            kind="DatabaseNotExistException",
        )
    taken = kept.get(database, table) is not None or spark.catalog.tableExists(
        quote_name((catalog, database, table))
    )
    if not taken:
        return True
    if definition.if_not_exists:
        return False
    raise invalid(
        f"Table (or view) {database}.{table} already exists in Catalog {catalog}.",
        kind="TableAlreadyExistException",
    )


def _store(session: Session, definition: TableDefinition, *, replace: bool) -> None:
    body = connectors.stored_select(definition)
    try:
        session.spark.sql(connectors.catalog_ddl(definition, body, replace=replace))
    except Exception as exc:
        raise to_execution_error(exc) from exc
    finally:
        resolve.invalidate()


def alter_connector_table(
    session: Session, definition: TableDefinition, change: TableAlteration
) -> None:
    """Flink's ``ALTER TABLE`` of a connector table: its stored definition
    replaced (its view, for a filesystem table its properties), or renamed.

    As in Flink, ``SET``/``RESET`` store the options unchecked (a connector can be
    changed over several statements); a read or write of the table checks them."""
    located = objects.locate(session.spark, definition.name)
    if located is not None:
        _alter_kept(session, definition, change, located)
        return
    name = quote_name(definition.name)
    files = definition.connector == "filesystem"
    if change.rename_to is not None:
        kind = "TABLE" if files else "VIEW"
        _run_ddl(session, f"ALTER {kind} {name} RENAME TO {quote_name(change.rename_to)}")
        return
    altered = _altered(definition, change)
    if not files:
        _store(session, altered, replace=True)
        return
    if change.changes_schema:
        raise invalid(
            f"The columns of filesystem table {'.'.join(definition.name)} are its files': "
            "ALTER TABLE changes its options only"
        )
    for key in ("path", "format"):
        if altered.options.get(key) != definition.options.get(key):
            raise invalid(f"ALTER TABLE cannot change the '{key}' of a filesystem table")
    stored = quote_properties({connectors.DEFINITION_PROPERTY: altered.to_json()})
    _run_ddl(session, f"ALTER TABLE {name} SET TBLPROPERTIES ({stored})")


def _altered(definition: TableDefinition, change: TableAlteration) -> TableDefinition:
    """``definition`` changed by ALTER TABLE; checked unless it sets or resets options."""
    try:
        altered = apply_alteration(definition, change)
    except SqlParseError as exc:
        raise invalid(str(exc)) from None
    if change.set_options is None and change.reset_options is None:
        connectors.check_definition(altered)
    return altered


def _alter_kept(
    session: Session,
    definition: TableDefinition,
    change: TableAlteration,
    located: tuple[objects.CatalogObjects, tuple[str, str, str]],
) -> None:
    """ALTER TABLE of a connector table a catalog's objects keep: the new definition
    kept in its place (RENAME TO: under the new name, in the same catalog)."""
    kept, (catalog, database, table) = located
    if change.rename_to is None:
        altered = _altered(definition, change)
        kept.put(objects.CatalogObject(database, table, "table", altered.to_json()))
        return
    target = objects.locate(session.spark, change.rename_to)
    if target is None or target[1][0] != catalog:
        raise invalid(f"A table of catalog {catalog} is renamed within {catalog}")
    _, (_, new_database, new_table) = target
    renamed = replace(definition, name=(catalog, new_database, new_table), if_not_exists=False)
    _absent(session, renamed, target)
    kept.put(objects.CatalogObject(new_database, new_table, "table", renamed.to_json()))
    kept.remove(database, table)


def _run_ddl(session: Session, text: str) -> None:
    try:
        session.spark.sql(text)
    except Exception as exc:
        raise to_execution_error(exc) from exc
    finally:
        resolve.invalidate()


def _create_temporary(session: Session, definition: TableDefinition) -> None:
    """A temporary connector table: a temporary view of the session, as Spark's are."""
    if len(definition.name) != 1:
        raise UnsupportedStatementError(
            "A temporary table's name has one part (it lives in the session, as Spark's "
            f"temporary views do): {'.'.join(definition.name)}"
        )
    spark = session.spark
    view = definition.name[0]
    if spark._jsparkSession.sessionState().catalog().getTempView(view).isDefined():
        if definition.if_not_exists:
            return
        raise ExecutionError(
            f"Temporary table '{view}' already exists",
            causes=(f"ValidationException: temporary table '{view}' already exists",),
        )
    if definition.connector == "filesystem":
        Files(session.spark).make_directories(definition.options["path"])
    try:
        connectors.batch_frame(spark, definition).createTempView(view)
    except Exception as exc:
        raise to_execution_error(exc) from exc
    resolve.register_temporary(spark, session.context.temporary_tables, definition)
    log.info("Created temporary %s table %s", definition.connector, view)


def drop_temporary_table(session: Session, view: str, if_exists: bool) -> None:
    """Flink's ``DROP TEMPORARY TABLE [IF EXISTS] name``."""
    resolve.invalidate()
    resolve.forget_temporary(session.context.temporary_tables, view)
    if not session.spark.catalog.dropTempView(view) and not if_exists:
        raise ExecutionError(
            f"Temporary table '{view}' does not exist",
            causes=(f"ValidationException: temporary table '{view}' does not exist",),
        )


# -- queries -----------------------------------------------------------------------


def query_execution(
    session: Session, text: str, runtime: RuntimeOptions, operation: Operation
) -> DataFrame | Execution | None:
    """A relational query over connector tables: a batch frame, or a streaming changelog.

    None when the query reads no connector table (Spark runs it unchanged).
    """
    try:
        with resolve.resolved(
            session.spark,
            text,
            temporary=session.context.temporary_tables,
            temporary_functions=session.context.temporary_functions,
            streaming=runtime.streaming,
            trigger_s=runtime.trigger_s,
            reading=resolve.QUERY,
        ) as resolution:
            # No table replaced, no hint taken out, no kept function called.
            unchanged = resolution.text == text and not resolution.functions
            if not resolution.definitions and not resolution.sources and unchanged:
                return None
            df = session.spark.sql(resolution.text)
    except ExecutionError:
        raise
    except Exception as exc:
        raise to_execution_error(exc) from exc
    if df.isStreaming:
        return streaming_execution(session, df, runtime, operation, resolution)
    return df


def _keeps_changelog(df: DataFrame, resolution: Resolution) -> None:
    """Refuse a streaming query that would lose its sources' row kinds: over a
    changelog source (upsert-kafka) Spark runs only what keeps the kind column."""
    if df.columns[-1] != KIND_COLUMN and any(s.changelog for s in resolution.sources):
        raise invalid(
            "A streaming query over an upsert-kafka table keeps every row's kind only as "
            "SELECT * [WHERE ...]; select its columns, or aggregate it, in batch mode "
            "(SET 'execution.runtime-mode' = 'batch')"
        )


# Sinks that take a changelog: updates and deletes by key, or shown as they come.
_CHANGELOG_SINKS = frozenset({"jdbc", "upsert-kafka", "print", "blackhole"})


def _takes_changes(sink: TableDefinition | None, table: str) -> None:
    if sink is None or sink.connector not in _CHANGELOG_SINKS:
        raise invalid(
            f"Table sink '{table}' doesn't support consuming update and delete changes; "
            "write them into an upsert-kafka or jdbc table"
        )


def streaming_execution(
    session: Session,
    df: DataFrame,
    runtime: RuntimeOptions,
    operation: Operation,
    resolution: Resolution | None = None,
) -> Execution:
    """Run a streaming frame and stream its changelog (also Spark's ``STREAM(t)``)."""
    from sparkgate.service.streaming.resolve import Resolution

    if resolution is not None:
        _keeps_changelog(df, resolution)
    if session.flink_shapes:
        df = flink_named(df, resolution.text if resolution is not None else None)
    try:
        # A changelog already (the state-TTL operators): its kind column is no column.
        visible = df.drop(KIND_COLUMN) if df.columns[-1] == KIND_COLUMN else df
        schema = to_result_schema(visible.schema)
    except Exception as exc:
        raise to_execution_error(exc) from exc
    data_dir = Path(session.context.jobs.data_dir)
    resolution = resolution or Resolution("")
    # A VALUES list's rows, one per micro-batch, need not wait a checkpoint interval.
    trigger_s = min(runtime.trigger_s, _VALUES_TRIGGER_S) if resolution.values_only else None
    batches = changelog_batches(
        df,
        operation,
        resolution,
        trigger_s=trigger_s if trigger_s is not None else runtime.trigger_s,
        checkpoint_root=data_dir / "checkpoints" / "queries",
    )
    traits = ResultTraits(
        is_query_result=True,
        result_kind=ResultKind.SUCCESS_WITH_CONTENT,
        job_id=operation.handle.identifier.hex,
    )
    return Execution(schema, traits, batches)


# -- INSERT ------------------------------------------------------------------------


@dataclass(frozen=True)
class StagedFiles:
    """Where and how an atomic INSERT OVERWRITE writes its rows before it publishes
    them (statements/overwrite.py): files of ``file_format`` in ``directory``, in
    subdirectories by ``partition_by``."""

    file_format: str
    options: Mapping[str, str]
    directory: str
    partition_by: tuple[str, ...] = ()


@dataclass
class InsertPlan:
    """One DML statement, prepared: its frame and where the rows go.

    Without a frame Spark runs ``statement`` as written.
    """

    statement: str
    frame: DataFrame | None
    target: tuple[str, ...] = ()
    overwrite: bool = False
    sink: TableDefinition | None = None
    resolution: Resolution | None = None
    # The target's OPTIONS hint (in ``sink``'s options already): what a compiled
    # plan keeps of it.
    sink_options: Mapping[str, str] = field(default_factory=dict)
    # The frame's columns go to the target's by name, in the order the target has
    # when the job starts (a table a CTAS creates as the job starts).
    by_name: bool = False
    # Rows written as files instead of into the target: an atomic INSERT OVERWRITE
    # publishes them.
    staging: StagedFiles | None = None

    @property
    def streaming(self) -> bool:
        return self.frame is not None and self.frame.isStreaming


def query_frame(
    session: Session,
    query: str,
    runtime: RuntimeOptions,
    *,
    reading: resolve.Reading = resolve.BATCH,
) -> tuple[DataFrame, Resolution]:
    """The frame of ``query`` with the session's connector tables in it (streaming
    frames in streaming mode), and what the resolution found; ``reading``: see
    :class:`.resolve.Reading` (the plan compiler reads VALUES lists as streams)."""
    try:
        with resolve.resolved(
            session.spark,
            query,
            temporary=session.context.temporary_tables,
            temporary_functions=session.context.temporary_functions,
            streaming=runtime.streaming,
            trigger_s=runtime.trigger_s,
            reading=reading,
        ) as resolution:
            return session.spark.sql(resolution.text), resolution
    except ExecutionError:
        raise
    except Exception as exc:
        raise to_execution_error(exc) from exc


def plan_insert(
    session: Session,
    text: str,
    runtime: RuntimeOptions,
    *,
    reading: resolve.Reading = resolve.BATCH,
) -> InsertPlan:
    """Prepare an ``INSERT INTO|OVERWRITE``: over connector tables, or streaming
    (``reading``: as :func:`query_frame`'s)."""
    streaming = runtime.streaming
    insert = parse_insert(text, session.spark)
    if insert is None:
        if streaming:
            raise UnsupportedStatementError(
                "In streaming mode only INSERT INTO|OVERWRITE [TABLE] name [PARTITION (...)] "
                f"[(columns)] <query> is supported: {text}"
            )
        return InsertPlan(text, None)
    spark = session.spark
    temporary = session.context.temporary_tables
    sink = resolve.lookup(spark, insert.target, temporary)
    if sink is not None:
        if insert.options:  # Flink's dynamic table options, for this INSERT
            sink = replace(sink, options={**sink.options, **insert.options})
        connectors.sink_kind(sink)
    elif not streaming and not any(
        resolve.lookup(spark, ref.name, temporary) is not None
        for ref in resolve.table_references(insert.spark_text, spark)
    ):
        return InsertPlan(insert.spark_text, None)  # plain Spark SQL: run it as written
    table = ".".join(insert.target)
    frame, resolution = query_frame(session, insert.query, runtime, reading=reading)
    try:
        if sink is not None:
            columns = [
                (c.name, connectors.spark_type(c.type or "")) for c in connectors.written(sink)
            ]
        else:
            fields = spark.table(quote_name(insert.target)).schema.fields
            columns = [(f.name, f.dataType.simpleString()) for f in fields]
        frame = align(frame, insert, columns, table)
        if frame.columns[-1] == KIND_COLUMN:
            _takes_changes(sink, table)
        elif resolution.sources:
            _keeps_changelog(frame, resolution)
    except ExecutionError:
        raise
    except Exception as exc:
        raise to_execution_error(exc) from exc
    return InsertPlan(
        text, frame, insert.target, insert.overwrite, sink, resolution, insert.options
    )


class Replanner(Protocol):
    """How a streaming job's INSERTs are prepared again, as data: after an engine
    death in the same session, after a gateway restart in a session made again
    from the job's record (``to_json`` is what that record keeps)."""

    def plans(self, session: Session) -> list[InsertPlan]: ...

    def to_json(self) -> dict[str, Any]: ...


def _frame(session: Session, plan: InsertPlan) -> DataFrame:
    assert plan.frame is not None
    if not plan.by_name:
        return plan.frame
    if plan.sink is not None:
        columns = [c.name for c in connectors.written(plan.sink)]
    else:
        columns = session.spark.table(quote_name(plan.target)).columns
    return by_name(plan.frame, columns)


def _write(session: Session, plan: InsertPlan) -> None:
    if plan.frame is None:
        session.spark.sql(plan.statement)
    elif plan.staging is not None:
        staged = plan.staging
        writer = _frame(session, plan).write.format(staged.file_format).options(**staged.options)
        writer.partitionBy(*staged.partition_by).save(staged.directory)
    elif plan.sink is not None:
        connectors.write_batch(_frame(session, plan), plan.sink)
        _register_partitions(session, plan)
    else:
        _frame(session, plan).write.insertInto(quote_name(plan.target), plan.overwrite)


def _register_partitions(session: Session, plan: InsertPlan) -> None:
    """A partitioned filesystem table is Spark's file table too: the partitions the
    gateway wrote are added to the catalog, so Spark reading the table sees them."""
    sink = plan.sink
    if (
        sink is None
        or sink.connector != "filesystem"
        or not sink.partition_keys
        or sink.temporary
        or "path" in plan.sink_options  # written elsewhere than the table's files
    ):
        return
    # SYNC: an INSERT OVERWRITE may also have removed some.
    session.spark.sql(f"MSCK REPAIR TABLE {quote_name(plan.target)} SYNC PARTITIONS")


def _starter(
    session: Session, plan: InsertPlan, trigger_s: float
) -> Callable[[str], StreamingQuery]:
    assert plan.frame is not None
    available_now = plan.resolution is not None and plan.resolution.available_now

    table_format = (
        resolve.provider(session.spark, plan.target, session.context.temporary_tables)
        if plan.sink is None
        else None
    )

    def start(checkpoint: str) -> StreamingQuery:
        frame = _frame(session, plan)

        def make(mode: str) -> Any:
            writer = connectors.stream_writer(frame, plan.sink, checkpoint).outputMode(mode)
            if available_now:
                return writer.trigger(availableNow=True)
            return writer.trigger(processingTime=f"{int(trigger_s * 1000)} milliseconds")

        if plan.sink is None:
            if plan.overwrite:
                raise UnsupportedStatementError("INSERT OVERWRITE cannot run as a streaming job")
            writer = make("append")
            if table_format is not None:  # toTable refuses any other than the table's
                writer = writer.format(table_format)
            query: StreamingQuery = writer.toTable(quote_name(plan.target))
            return query
        return start_with_fallback(make, sink_modes(frame, plan.sink.connector))

    return start


def restarter(
    session: Session, replan: Replanner, trigger_s: float
) -> Callable[[], list[StreamStarter]]:
    """The starters of a streaming job's INSERTs, planned again in ``session``
    (on a new engine, or in a new gateway process)."""

    def restart() -> list[StreamStarter]:
        return [_starter(session, p, trigger_s) for p in replan.plans(session) if p.streaming]

    return restart


def _await_stream(session: Session, operation: Operation, job: Job) -> None:
    """``table.dml-sync`` on a streaming job whose sources end: the INSERT
    answers when the job has, as Flink's; a cancelled statement stops it."""
    while not job.done.wait(0.2):
        if operation.status in _STOPPED:
            with contextlib.suppress(ExecutionError):  # it ended meanwhile
                session.context.jobs.stop_job(session.spark.sparkContext, job.id)
            return
    if job.status is JobStatus.FAILED:
        cause = job.cause or "unknown cause"
        raise ExecutionError(f"Job {job.id} failed: {cause}", causes=(cause,))


def submit(
    session: Session,
    operation: Operation,
    plans: list[InsertPlan],
    statement: str,
    runtime: RuntimeOptions,
    *,
    hooks: Sequence[JobStatusHook] = (),
    last_step: Callable[[], None] | None = None,
    replan: Replanner | None = None,
) -> str:
    """Run prepared DML as one job of the job manager; its job id.

    Streaming INSERTs make a streaming job; bounded ones a batch job. The
    answer waits for the job's end when ``table.dml-sync`` says so
    (:attr:`RuntimeOptions.dml_waits`), for a streaming job only when its
    sources end (bounded datagen, files read as they were).
    ``hooks`` are the job's own; ``last_step`` runs after a batch job's
    writes, as part of the job (a CTAS publishing its table). ``replan``
    prepares the same INSERTs again: a streaming job with it resumes from its
    checkpoints on a new engine after an engine death, and (its record keeps
    ``replan`` and the image of ``session``) after a restart of the gateway.
    """
    registry = session.context.jobs
    sc = session.spark.sparkContext
    name = runtime.pipeline_name
    job_options = runtime.job_options()
    streams = [p for p in plans if p.streaming]
    if streams and len(streams) != len(plans):
        raise UnsupportedStatementError(
            "A statement set cannot mix INSERTs from streaming and from bounded sources"
        )
    if streams:
        trigger_s = runtime.trigger_s
        counts = [p.resolution.bounded_rows if p.resolution else None for p in streams]
        bounded_rows = (
            max(c for c in counts if c is not None) if all(c is not None for c in counts) else None
        )
        savepoint = runtime.savepoint_path
        restart = None if replan is None else restarter(session, replan, trigger_s)
        resume = (
            None
            if replan is None
            else {"replan": replan.to_json(), "session": session.image().to_json()}
        )
        job = registry.submit_stream(
            sc,
            statement,
            name,
            [_starter(session, p, trigger_s) for p in streams],
            savepoint=savepoint,
            bounded_rows=bounded_rows,
            available_now=all(
                p.resolution is not None and p.resolution.available_now for p in streams
            ),
            options=job_options,
            hooks=hooks,
            restart=restart,
            owner=session,
            user=session.environment.user,
            resume=resume,
            job_id=runtime.job_id,
        )
        if runtime.dml_waits and (job.bounded_rows is not None or job.available_now):
            _await_stream(session, operation, job)
        return job.id

    def action() -> None:
        for plan in plans:
            _write(session, plan)

    if not runtime.dml_waits:
        return registry.submit_batch(
            sc,
            statement,
            name,
            action,
            options=job_options,
            hooks=hooks,
            last_step=last_step,
            user=session.environment.user,
            job_id=runtime.job_id,
        ).id
    try:
        job = registry.run_batch(
            sc,
            statement,
            name,
            action,
            cancelled=lambda: operation.status in _STOPPED,
            options=job_options,
            hooks=hooks,
            last_step=last_step,
            user=session.environment.user,
            job_id=runtime.job_id,
        )
    except Exception as exc:
        raise to_execution_error(exc) from exc
    return job.id
