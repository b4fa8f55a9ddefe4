"""Running one statement in a session: the gateway's own, or Spark SQL.

The gateway answers its own statements (SET, RESET, jars, ...) itself; every
other statement goes to the session's Spark session, and the shape of what
Spark returns decides the result: DML gives a ``job id``, a statement with
no output columns gives ``OK``, anything else streams its rows.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import pyarrow as pa

from sparkgate.api.errors import ExecutionError, UnsupportedStatementError
from sparkgate.api.results import ResultKind, RowKind
from sparkgate.service.operation.operation import Execution, Executor, Operation
from sparkgate.service.result.fetcher import ResultTraits
from sparkgate.service.session.session import (
    FLINK_TIME_ZONE_KEY,
    SPARK_TIME_ZONE_KEY,
    Session,
    is_spark_key,
)
from sparkgate.service.spark.arrow import arrow_schema, stream_batches
from sparkgate.service.spark.jobs import to_execution_error
from sparkgate.service.spark.types import arrow_compatible, to_result_schema
from sparkgate.service.statements.metadata import metadata_statement
from sparkgate.service.statements.parser import ParsedStatement, StatementKind, parse_statement
from sparkgate.service.statements.results import ok_result, table_result
from sparkgate.service.streaming import statements as streaming

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["statement_executor"]

log = logging.getLogger(__name__)

_UNDEFINED = "<undefined>"  # Spark's SET answer for a key without a value

_QUERY_KEYWORDS = frozenset({"SELECT", "WITH", "VALUES", "FROM", "TABLE", "("})

_LATER = {
    StatementKind.CREATE_CATALOG: "CREATE CATALOG",
    StatementKind.LOAD_MODULE: "LOAD MODULE",
    StatementKind.UNLOAD_MODULE: "UNLOAD MODULE",
}


def statement_executor(session: Session, statement: str) -> Executor:
    """The executor an operation runs for ``statement`` in ``session``."""

    def execute(operation: Operation) -> Execution:
        parsed = parse_statement(statement)
        log.info("Executing %s statement", parsed.kind.value)
        return run_parsed(session, parsed, operation)

    return execute


def run_parsed(session: Session, parsed: ParsedStatement, operation: Operation) -> Execution:
    kind = parsed.kind
    if streaming.in_statement_set(session) and kind is not StatementKind.END_STATEMENT_SET:
        return streaming.add_to_statement_set(session, parsed)
    if kind in streaming.GATEWAY_KINDS:
        return streaming.run_gateway_statement(session, parsed, operation)
    if kind is StatementKind.SET:
        assert parsed.key is not None
        streaming.check_option(parsed.key, parsed.value or "")
        session.set(parsed.key, parsed.value or "")
        return ok_result()
    if kind is StatementKind.SHOW_CONFIG:
        config = session.config()
        if parsed.key is not None:
            rows = [[parsed.key, _effective_value(session, parsed.key, config)]]
        else:
            rows = [[key, config[key]] for key in sorted(config)]
        return table_result(["key", "value"], rows)
    if kind is StatementKind.RESET:
        session.reset(parsed.key)
        return ok_result()
    if kind is StatementKind.ADD_JAR:
        assert parsed.path is not None
        _spark_sql(session, f"ADD JAR {_quote(parsed.path)}")
        if parsed.path not in session.jars:
            session.jars.append(parsed.path)
        return ok_result()
    if kind is StatementKind.REMOVE_JAR:
        assert parsed.path is not None
        if parsed.path not in session.jars:
            raise ExecutionError(
                f"Jar {parsed.path} was not added to this session.",
                causes=(f"JarNotFound: Jar {parsed.path} was not added to this session.",),
            )
        session.jars.remove(parsed.path)
        # Spark cannot unload classes: the jar leaves the session's list only.
        log.warning("Removed %s from the session; classes already loaded stay loaded", parsed.path)
        return ok_result()
    if kind is StatementKind.SHOW_JARS:
        return table_result(["jars"], [[jar] for jar in session.jars])
    if kind is StatementKind.USE and parsed.use_catalog:
        try:
            session.spark.catalog.setCurrentCatalog(parsed.names[0])
        except Exception as exc:
            raise to_execution_error(exc) from exc
        return ok_result()
    if kind is StatementKind.QUERY:
        shaped = metadata_statement(session, parsed)
        if shaped is not None:
            return shaped
    if kind in _LATER:
        raise UnsupportedStatementError(
            f"{_LATER[kind]} is not supported by sparkgate yet: {parsed.text}"
        )
    return _run_spark(session, parsed, operation)


def _effective_value(session: Session, key: str, config: Mapping[str, str]) -> str:
    """What ``SET key`` answers: for Spark's keys Spark's effective value (its
    default when unset, as Spark's own ``SET key``), else the session's value."""
    if key in (FLINK_TIME_ZONE_KEY, SPARK_TIME_ZONE_KEY):
        return session.time_zone()
    if is_spark_key(key):
        try:
            return str(session.spark.conf.get(key))
        except Exception:
            # A key Spark does not know and nobody set: Spark's SET says so.
            return config.get(key, _UNDEFINED)
    return config.get(key, _UNDEFINED)


def _run_spark(session: Session, parsed: ParsedStatement, operation: Operation) -> Execution:
    # Connector tables, streaming mode and jobs are the streaming package's business.
    if parsed.kind is StatementKind.DDL and parsed.keyword.upper() == "CREATE":
        created = streaming.create_connector_table(session, parsed.text)
        if created is not None:
            return created
    elif parsed.kind in (StatementKind.DDL, StatementKind.OTHER):
        streaming.invalidate_tables()
        dropped = streaming.drop_temporary_table(session, parsed.text)
        if dropped is not None:
            return dropped
    if parsed.kind is StatementKind.DML:
        return streaming.run_dml(session, parsed, operation)
    prepared = streaming.query_execution(session, parsed, operation) if parsed.is_query else None
    if isinstance(prepared, Execution):
        return prepared
    df = prepared if prepared is not None else _spark_sql(session, parsed.text)
    if df.isStreaming:  # Spark's STREAM(t): its rows are a changelog too
        return streaming.streaming_execution(session, df, operation)
    if not df.schema.fields:
        return ok_result()
    try:
        schema = to_result_schema(df.schema)
        # Arrow cannot carry every Spark type as is.
        batches = _streamed(arrow_compatible(df), session.partition_window)
    except Exception as exc:
        raise to_execution_error(exc) from exc
    is_query = parsed.keyword.upper() in _QUERY_KEYWORDS
    traits = ResultTraits(
        is_query_result=is_query,
        result_kind=ResultKind.SUCCESS_WITH_CONTENT,
        job_id=operation.handle.identifier.hex if is_query else None,
    )
    return Execution(schema, traits, batches)


def _streamed(
    df: DataFrame, window: int
) -> Iterator[tuple[pa.RecordBatch, tuple[RowKind, ...] | None]]:
    schema = arrow_schema(df)
    stream = stream_batches(df, schema, window)
    try:
        for batch in stream:
            yield batch, None
    except Exception as exc:
        raise to_execution_error(exc) from exc
    finally:
        stream.close()


def _spark_sql(session: Session, text: str) -> DataFrame:
    try:
        return session.spark.sql(text)
    except Exception as exc:
        raise to_execution_error(exc) from exc


def _quote(path: str) -> str:
    return "'" + path.replace("\\", "\\\\").replace("'", "\\'") + "'"
