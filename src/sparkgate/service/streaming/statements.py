"""The streaming statements the dispatcher hands over: connector DDL, queries and
INSERTs over connector tables or in streaming mode, jobs and statement sets.

Each function returns an :class:`Execution` (or ``None`` when the statement
is plain Spark SQL the dispatcher runs as before), so batch statements that
touch no connector table pay nothing but a cached catalog lookup.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkgate.api.config import ConfigOption
from sparkgate.api.errors import ExecutionError, UnsupportedStatementError
from sparkgate.api.results import ResultKind
from sparkgate.api.status import OperationStatus
from sparkgate.service import options
from sparkgate.service.catalog import quote_name
from sparkgate.service.operation.operation import Execution
from sparkgate.service.result.fetcher import ResultTraits
from sparkgate.service.spark.jobs import to_execution_error
from sparkgate.service.spark.types import to_result_schema
from sparkgate.service.statements.parser import ParsedStatement, StatementKind, parse_statement
from sparkgate.service.statements.results import job_result, ok_result, table_result
from sparkgate.service.streaming import connectors, resolve
from sparkgate.service.streaming.ddl import TableDefinition, parse_connector_table
from sparkgate.service.streaming.insert import align, parse_insert
from sparkgate.service.streaming.jobs import JobRegistry
from sparkgate.service.streaming.query import changelog_batches, start_with_fallback
from sparkgate.sql.lexer import TokenKind, statement_tokens, unquote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.query import StreamingQuery

    from sparkgate.service.operation.operation import Operation
    from sparkgate.service.session.session import Session
    from sparkgate.service.streaming.resolve import Resolution

__all__ = [
    "GATEWAY_KINDS",
    "add_to_statement_set",
    "bind",
    "check_option",
    "create_connector_table",
    "drop_temporary_table",
    "in_statement_set",
    "invalidate_tables",
    "query_execution",
    "registry_of",
    "run_dml",
    "run_gateway_statement",
    "streaming_execution",
]

log = logging.getLogger(__name__)

GATEWAY_KINDS = frozenset(
    {
        StatementKind.BEGIN_STATEMENT_SET,
        StatementKind.END_STATEMENT_SET,
        StatementKind.EXECUTE_STATEMENT_SET,
        StatementKind.SHOW_JOBS,
        StatementKind.STOP_JOB,
        StatementKind.DESCRIBE_JOB,
    }
)
_MODES = ("batch", "streaming")
_STOPPED = frozenset({OperationStatus.CANCELED, OperationStatus.CLOSED, OperationStatus.TIMEOUT})
_QUERY_KEYWORDS = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "FROM", "("})

_registries: weakref.WeakKeyDictionary[Session, JobRegistry] = weakref.WeakKeyDictionary()
_statement_sets: weakref.WeakKeyDictionary[Session, list[str]] = weakref.WeakKeyDictionary()
_fallback: dict[str, JobRegistry] = {}


# -- session state -----------------------------------------------------------------


def bind(session: Session, registry: JobRegistry) -> None:
    """Give ``session`` the gateway's job registry."""
    _registries[session] = registry


def registry_of(session: Session) -> JobRegistry:
    registry = _registries.get(session)
    if registry is None:  # a session built without the gateway (tests of parts)
        data_dir = session.get(options.DATA_DIR.key) or options.DATA_DIR.default_display
        registry = _fallback.setdefault(data_dir, JobRegistry(Path(data_dir)))
        _registries[session] = registry
    return registry


def _option(session: Session, option: ConfigOption[Any]) -> Any:
    raw = session.get(option.key)
    if raw is None or raw == "":
        return option.default
    try:
        return option.parse(raw)
    except ValueError as exc:
        raise ExecutionError(f"Invalid value for {option.key}: {exc}") from exc


def check_option(key: str, value: str) -> None:
    """Refuse a bad runtime mode at SET time rather than at the next query."""
    if key == options.RUNTIME_MODE.key and value.lower() not in _MODES:
        raise ExecutionError(
            f"Invalid value '{value}' for {key}; valid values: {', '.join(_MODES)}",
            causes=(f"IllegalArgumentException: invalid runtime mode '{value}'",),
        )


def _streaming(session: Session) -> bool:
    return str(_option(session, options.RUNTIME_MODE)).lower() == "streaming"


def _trigger_s(session: Session) -> float:
    return float(_option(session, options.CHECKPOINTING_INTERVAL).total_seconds())


def invalidate_tables() -> None:
    """DDL ran: cached connector-table lookups may be stale."""
    resolve.invalidate()


def in_statement_set(session: Session) -> bool:
    return session in _statement_sets


# -- DDL ---------------------------------------------------------------------------


def create_connector_table(session: Session, text: str) -> Execution | None:
    """Store Flink's ``CREATE TABLE ... WITH (...)``; None for Spark's own DDL."""
    definition = parse_connector_table(text)
    resolve.invalidate()
    if definition is None:
        return None
    connectors.check_definition(definition)
    spark = session.spark
    if definition.temporary:
        return _create_temporary(session, definition)
    if definition.connector == "filesystem":
        _make_dirs(session, definition.options["path"])
        body = None
    elif definition.connector == "datagen":
        body = connectors.datagen_select(definition)
    else:
        body = connectors.sink_select(definition)
    try:
        spark.sql(connectors.catalog_ddl(definition, body))
    except Exception as exc:
        raise to_execution_error(exc) from exc
    finally:
        resolve.invalidate()
    log.info("Created %s table %s", definition.connector, ".".join(definition.name))
    return ok_result()


def _create_temporary(session: Session, definition: TableDefinition) -> Execution:
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
            return ok_result()
        raise ExecutionError(
            f"Temporary table '{view}' already exists",
            causes=(f"ValidationException: temporary table '{view}' already exists",),
        )
    if definition.connector == "filesystem":
        _make_dirs(session, definition.options["path"])
    try:
        connectors.batch_frame(spark, definition).createTempView(view)
    except Exception as exc:
        raise to_execution_error(exc) from exc
    resolve.register_temporary(spark, definition)
    log.info("Created temporary %s table %s", definition.connector, view)
    return ok_result()


def drop_temporary_table(session: Session, text: str) -> Execution | None:
    """Flink's ``DROP TEMPORARY TABLE [IF EXISTS] name``; None for other statements."""
    tokens = statement_tokens(text)
    words = [t.upper for t in tokens]
    if words[:3] != ["DROP", "TEMPORARY", "TABLE"]:
        return None
    if_exists = words[3:5] == ["IF", "EXISTS"]
    rest = tokens[5:] if if_exists else tokens[3:]
    if len(rest) != 1 or rest[0].kind not in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER):
        raise UnsupportedStatementError(
            f"Expected DROP TEMPORARY TABLE [IF EXISTS] name (one part): {text}"
        )
    view = unquote(rest[0])
    resolve.forget_temporary(session.spark, view)
    if not session.spark.catalog.dropTempView(view) and not if_exists:
        raise ExecutionError(
            f"Temporary table '{view}' does not exist",
            causes=(f"ValidationException: temporary table '{view}' does not exist",),
        )
    return ok_result()


def _make_dirs(session: Session, path: str) -> None:
    sc = session.spark.sparkContext
    jvm = sc._jvm
    assert jvm is not None
    target = jvm.org.apache.hadoop.fs.Path(path)
    target.getFileSystem(sc._jsc.hadoopConfiguration()).mkdirs(target)


# -- queries -----------------------------------------------------------------------


def query_execution(
    session: Session, parsed: ParsedStatement, operation: Operation
) -> DataFrame | Execution | None:
    """A query over connector tables: a batch frame, or a streaming changelog.

    None when the query reads no connector table (Spark runs it unchanged).
    """
    if parsed.keyword.upper() not in _QUERY_KEYWORDS:
        return None
    streaming = _streaming(session)
    try:
        with resolve.resolved(
            session.spark, parsed.text, streaming=streaming, trigger_s=_trigger_s(session)
        ) as resolution:
            if not resolution.definitions and not resolution.sources:
                return None
            df = session.spark.sql(resolution.text)
    except ExecutionError:
        raise
    except Exception as exc:
        raise to_execution_error(exc) from exc
    if df.isStreaming:
        return streaming_execution(session, df, operation, resolution)
    return df


def streaming_execution(
    session: Session, df: DataFrame, operation: Operation, resolution: Resolution | None = None
) -> Execution:
    """Run a streaming frame and stream its changelog (also Spark's ``STREAM(t)``)."""
    from sparkgate.service.streaming.resolve import Resolution

    try:
        schema = to_result_schema(df.schema)
    except Exception as exc:
        raise to_execution_error(exc) from exc
    data_dir = Path(registry_of(session).data_dir)
    batches = changelog_batches(
        df,
        operation,
        resolution or Resolution(""),
        trigger_s=_trigger_s(session),
        checkpoint_root=data_dir / "checkpoints" / "queries",
    )
    traits = ResultTraits(
        is_query_result=True,
        result_kind=ResultKind.SUCCESS_WITH_CONTENT,
        job_id=operation.handle.identifier.hex,
    )
    return Execution(schema, traits, batches)


# -- INSERT ------------------------------------------------------------------------


@dataclass
class _Plan:
    """One INSERT, prepared: its frame and where the rows go."""

    statement: str
    frame: DataFrame | None
    target: tuple[str, ...] = ()
    overwrite: bool = False
    sink: TableDefinition | None = None
    resolution: Resolution | None = None

    @property
    def streaming(self) -> bool:
        return self.frame is not None and self.frame.isStreaming


def _plan(session: Session, text: str, streaming: bool) -> _Plan:
    insert = parse_insert(text)
    if insert is None:
        if streaming:
            raise UnsupportedStatementError(
                "In streaming mode only INSERT INTO|OVERWRITE [TABLE] name [PARTITION (...)] "
                f"[(columns)] <query> is supported: {text}"
            )
        return _Plan(text, None)
    spark = session.spark
    sink = resolve.lookup(spark, insert.target)
    if sink is not None:
        connectors.sink_kind(sink)
    elif not streaming and not any(
        resolve.lookup(spark, ref.name) is not None
        for ref in resolve.table_references(insert.query)
    ):
        return _Plan(text, None)  # plain Spark SQL: run the statement as written
    table = ".".join(insert.target)
    try:
        with resolve.resolved(
            spark, insert.query, streaming=streaming, trigger_s=_trigger_s(session)
        ) as resolution:
            frame = spark.sql(resolution.text)
        if sink is not None:
            columns = [(c.name, connectors.spark_type(c.type or "")) for c in sink.physical]
        else:
            fields = spark.table(quote_name(insert.target)).schema.fields
            columns = [(f.name, f.dataType.simpleString()) for f in fields]
        frame = align(frame, insert, columns, table)
    except ExecutionError:
        raise
    except Exception as exc:
        raise to_execution_error(exc) from exc
    return _Plan(text, frame, insert.target, insert.overwrite, sink, resolution)


def _write(session: Session, plan: _Plan) -> None:
    if plan.frame is None:
        session.spark.sql(plan.statement)
    elif plan.sink is not None:
        connectors.write_batch(plan.frame, plan.sink)
    else:
        plan.frame.write.insertInto(quote_name(plan.target), plan.overwrite)


def _starter(session: Session, plan: _Plan, trigger_s: float) -> Callable[[str], StreamingQuery]:
    assert plan.frame is not None
    frame = plan.frame
    available_now = (
        plan.resolution is not None
        and plan.resolution.bounded
        and (plan.resolution.bounded_rows is None)
    )

    table_format = resolve.provider(session.spark, plan.target) if plan.sink is None else None

    def start(checkpoint: str) -> StreamingQuery:
        def make(mode: str) -> Any:
            writer = connectors.stream_writer(frame, plan.sink).outputMode(mode)
            writer = writer.option("checkpointLocation", checkpoint)
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
        modes = ["append"] if plan.sink.connector == "filesystem" else ["append", "update"]
        return start_with_fallback(make, modes)

    return start


def _submit(
    session: Session, operation: Operation, plans: list[_Plan], statement: str
) -> Execution:
    registry = registry_of(session)
    sc = session.spark.sparkContext
    name = str(_option(session, options.PIPELINE_NAME)) or None
    streams = [p for p in plans if p.streaming]
    if streams and len(streams) != len(plans):
        raise UnsupportedStatementError(
            "A statement set cannot mix INSERTs from streaming and from bounded sources"
        )
    if streams:
        trigger_s = _trigger_s(session)
        counts = [p.resolution.bounded_rows if p.resolution else None for p in streams]
        bounded_rows = (
            max(c for c in counts if c is not None) if all(c is not None for c in counts) else None
        )
        savepoint = str(_option(session, options.SAVEPOINT_PATH)) or None
        job = registry.submit_stream(
            sc,
            statement,
            name,
            [_starter(session, p, trigger_s) for p in streams],
            savepoint=savepoint,
            bounded_rows=bounded_rows,
        )
        return job_result(job.id)

    def action() -> None:
        for plan in plans:
            _write(session, plan)

    if _streaming(session) or not _option(session, options.DML_SYNC):
        return job_result(registry.submit_batch(sc, statement, name, action).id)
    try:
        job = registry.run_batch(
            sc, statement, name, action, cancelled=lambda: operation.status in _STOPPED
        )
    except Exception as exc:
        raise to_execution_error(exc) from exc
    return job_result(job.id)


def run_dml(session: Session, parsed: ParsedStatement, operation: Operation) -> Execution:
    """Run DML as a job of the registry: streaming, asynchronous or synchronous."""
    if parsed.keyword.upper() != "INSERT":
        if _streaming(session):
            raise UnsupportedStatementError(f"Only INSERT runs as a streaming job: {parsed.text}")
        plan = _Plan(parsed.text, None)  # UPDATE, DELETE, MERGE, LOAD DATA: Spark's own
    else:
        plan = _plan(session, parsed.text, _streaming(session))
    return _submit(session, operation, [plan], parsed.text)


# -- jobs and statement sets ------------------------------------------------------


def run_gateway_statement(
    session: Session, parsed: ParsedStatement, operation: Operation
) -> Execution:
    kind = parsed.kind
    registry = registry_of(session)
    if kind is StatementKind.SHOW_JOBS:
        rows = [
            [job.id, job.name, job.status.value, job.describe()["start time"]]
            for job in registry.jobs()
        ]
        return table_result(["job id", "job name", "status", "start time"], rows)
    if kind is StatementKind.DESCRIBE_JOB:
        assert parsed.job_id is not None
        info = registry.get(parsed.job_id).describe()
        return table_result(list(info), [list(info.values())])
    if kind is StatementKind.STOP_JOB:
        assert parsed.job_id is not None
        path = registry.stop(
            session.spark.sparkContext,
            parsed.job_id,
            savepoint=parsed.with_savepoint,
            drain=parsed.with_drain,
        )
        if parsed.with_savepoint:
            return table_result(["savepoint path"], [[path]])
        return ok_result()
    if kind is StatementKind.BEGIN_STATEMENT_SET:
        if in_statement_set(session):
            raise UnsupportedStatementError("A statement set is already open; close it with END")
        _statement_sets[session] = []
        return ok_result()
    if kind is StatementKind.END_STATEMENT_SET:
        buffered = _statement_sets.pop(session, None)
        if buffered is None:
            raise UnsupportedStatementError("END without BEGIN STATEMENT SET")
        return _execute_set(session, operation, buffered, parsed.text)
    if kind is StatementKind.EXECUTE_STATEMENT_SET:
        return _execute_set(session, operation, list(parsed.inner), parsed.text)
    raise UnsupportedStatementError(f"Not a job or statement-set statement: {parsed.text}")


def add_to_statement_set(session: Session, parsed: ParsedStatement) -> Execution:
    """Buffer an INSERT between BEGIN STATEMENT SET and END."""
    if parsed.kind is not StatementKind.DML or parsed.keyword.upper() != "INSERT":
        raise UnsupportedStatementError(
            "Only INSERT statements can be added to a statement set; END closes it. "
            f"Not accepted: {parsed.text}"
        )
    _statement_sets[session].append(parsed.text)
    return ok_result()


def _execute_set(
    session: Session, operation: Operation, statements: list[str], text: str
) -> Execution:
    if not statements:
        raise UnsupportedStatementError("The statement set is empty: it has no INSERT")
    streaming = _streaming(session)
    plans = []
    for statement in statements:
        parsed = parse_statement(statement)
        if parsed.kind is not StatementKind.DML or parsed.keyword.upper() != "INSERT":
            raise UnsupportedStatementError(
                f"A statement set holds only INSERT statements, not: {parsed.text}"
            )
        plans.append(_plan(session, parsed.text, streaming))
    log.info("Executing a statement set of %d INSERTs", len(plans))
    return _submit(session, operation, plans, text)
