"""Flink's connectors on Spark: datagen, filesystem, jdbc (:mod:`.jdbc`), kafka and
upsert-kafka (:mod:`.kafka`), print and blackhole.

A connector table lives in Spark's catalog (so it survives restarts and shows
in SHOW TABLES / DESCRIBE): a ``filesystem`` table as Spark's own file table
(``USING csv OPTIONS (path ...)``, so plain Spark reads and writes it too),
every other connector as a view (datagen's view generates its rows; a sink's
view fails with a clear message when read). The Flink definition is kept as
JSON in the table property :data:`DEFINITION_PROPERTY`; the gateway builds the
batch or streaming DataFrame (with computed columns and the watermark) from it.
"""

from __future__ import annotations

import json
import logging
import math
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from sparkgate.api.catalog import quote_identifier
from sparkgate.api.errors import ExecutionError
from sparkgate.service.catalog import CONNECTOR_PROPERTY, quote_name
from sparkgate.service.spark.files import Files
from sparkgate.service.spark.jobs import invalid
from sparkgate.service.spark.types import FLINK_PROCTIME_KEY, FLINK_TYPE_KEY
from sparkgate.service.streaming import jdbc, kafka
from sparkgate.service.streaming.changelog import KIND_COLUMN, ROW_KINDS
from sparkgate.service.streaming.ddl import Column, TableDefinition
from sparkgate.sql.flink_functions import flink_functions
from sparkgate.sql.flink_types import nested_type, nullability, row_field
from sparkgate.sql.lexer import TokenKind
from sparkgate.sql.quoting import quote_properties, quote_string
from sparkgate.sql.reader import TokenReader
from sparkgate.sql.secrets import HIDDEN, masked_options

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter

__all__ = [
    "CONNECTORS",
    "DEFINITION_PROPERTY",
    "HIDDEN_CONTENT",
    "METADATA",
    "FlinkColumn",
    "Source",
    "batch_frame",
    "catalog_ddl",
    "check_definition",
    "check_readable",
    "columns_select",
    "datagen_select",
    "flink_column",
    "masked_options",
    "sink_kind",
    "sink_select",
    "spark_type",
    "stream_frame",
    "stream_writer",
    "write_batch",
]

log = logging.getLogger(__name__)

DEFINITION_PROPERTY = CONNECTOR_PROPERTY

HIDDEN_CONTENT = HIDDEN


_FIELD_KEYS = ("kind", "min", "max", "start", "end", "length", "null-rate")
CONNECTORS: Mapping[str, tuple[str, ...]] = {
    "datagen": ("rows-per-second", "number-of-rows", *(f"fields.#.{k}" for k in _FIELD_KEYS)),
    "filesystem": ("path", "format", "source.monitor-interval", "csv.field-delimiter"),
    "print": ("print-identifier", "standard-error", "sink.parallelism"),
    "blackhole": ("sink.parallelism",),
    "jdbc": jdbc.OPTIONS,
    "kafka": kafka.OPTIONS,
    "upsert-kafka": kafka.UPSERT_OPTIONS,
}
# Option families a connector passes on whole (Kafka's client properties).
_PREFIXES: Mapping[str, tuple[str, ...]] = {
    "kafka": kafka.PREFIXES,
    "upsert-kafka": kafka.PREFIXES,
}
# Flink's metadata keys per connector, and the Spark column that carries each.
METADATA: Mapping[str, Mapping[str, str]] = {
    "filesystem": {
        "file.path": "_metadata.file_path",
        "file.name": "_metadata.file_name",
        "file.size": "_metadata.file_size",
        "file.modification-time": "_metadata.file_modification_time",
    },
    "kafka": kafka.METADATA,
    "upsert-kafka": kafka.METADATA,
}
_FORMATS = ("csv", "json", "parquet", "orc")
_SOURCES = frozenset({"datagen", "filesystem", "jdbc", "kafka", "upsert-kafka"})
_SINKS = frozenset({"filesystem", "print", "blackhole", "jdbc", "kafka", "upsert-kafka"})
# Files are laid out by partition; print and blackhole take any rows, partitioned or not.
_PARTITIONED = frozenset({"filesystem", "print", "blackhole"})
_INTEGRAL = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT"})
_FRACTIONAL = frozenset({"FLOAT", "DOUBLE"})
# Flink's spellings of types Spark spells otherwise: the words of the type, with
# where a length or precision ("(n)") may follow the first word.
_FLINK_TYPES: dict[str, tuple[str, bool]] = {
    "CHAR": ("STRING", True),
    "VARCHAR": ("STRING", True),
    "STRING": ("STRING", False),
    "INTEGER": ("INT", False),
    "DOUBLE PRECISION": ("DOUBLE", False),
    "BYTES": ("BINARY", False),
    "BINARY": ("BINARY", True),
    "VARBINARY": ("BINARY", True),
    "TIMESTAMP": ("TIMESTAMP", True),
    "TIMESTAMP_LTZ": ("TIMESTAMP", True),
}
_ZONE_SUFFIXES = frozenset(
    {"", "WITH TIME ZONE", "WITHOUT TIME ZONE", "WITH LOCAL TIME ZONE", "WITHOUT LOCAL TIME ZONE"}
)


_N = TypeVar("_N", int, float)


def _field_name(name: str) -> str:
    """A STRUCT field's name in Spark's DDL: backtick-quoted unless a plain word."""
    return name if re.fullmatch(r"\w+", name) else quote_identifier(name)


def spark_type(flink_type: str) -> str:
    """Flink's spelling of a type in Spark's; types both know pass unchanged. The
    element types of ``ARRAY<...>`` and ``MAP<...>`` and the fields of ``ROW<...>``
    or ``ROW(...)`` (Spark's ``STRUCT``) are spelled again too. Spark's types are
    nullable: a ``NOT NULL`` (a column's, an element's, a field's) is left to the
    caller, and a field's description is dropped."""
    text, _ = nullability(flink_type)
    nested = nested_type(text)
    if nested:
        kind, parts = nested
        if kind == "ROW":
            fields = [row_field(part) for part in parts]
            inner = ", ".join(f"{_field_name(n)}: {spark_type(t)}" for n, t in fields)
            return f"STRUCT<{inner}>"
        return f"{kind}<{', '.join(spark_type(part) for part in parts)}>"
    src = TokenReader(text, "a column type")
    head = src.take(TokenKind.WORD)
    if head is None:
        return text
    words = [head.upper]
    if src.accept("PRECISION"):
        words.append("PRECISION")
    spark, sized = _FLINK_TYPES.get(" ".join(words), ("", False))
    if sized and src.kind() is TokenKind.LPAREN:
        size = src.group()
        if len(size) != 1 or len(size[0]) != 1 or size[0][0].kind is not TokenKind.NUMBER:
            return text
    rest = " ".join(tok.upper for tok in src.tokens[src.i :])
    if not spark or rest not in (_ZONE_SUFFIXES if spark == "TIMESTAMP" else {""}):
        return text
    return spark


def check_definition(definition: TableDefinition) -> None:
    """Refuse unknown connectors and options, naming the valid ones."""
    connector = definition.connector
    if not connector:
        raise invalid(
            "Table options do not contain an option key 'connector'; valid connectors: "
            + ", ".join(sorted(CONNECTORS))
        )
    if connector not in CONNECTORS:
        raise invalid(
            f"Unsupported connector '{connector}'; valid connectors: "
            + ", ".join(sorted(CONNECTORS))
        )
    allowed = CONNECTORS[connector]
    physical = {c.name for c in definition.physical}
    for key in definition.options:
        if key == "connector":
            continue
        # fields.<column>.<option>: the column's name may itself hold dots.
        field, _, option = key.removeprefix("fields.").rpartition(".")
        if key.startswith("fields.") and field and f"fields.#.{option}" in allowed:
            if field not in physical:
                raise invalid(
                    f"Option '{key}' names no physical column of the table; columns: "
                    + ", ".join(sorted(physical))
                )
            continue
        if any(key.startswith(p) and key != p for p in _PREFIXES.get(connector, ())):
            continue
        if key not in allowed:
            raise invalid(
                f"Unsupported option '{key}' for connector '{connector}'; valid options: "
                + ", ".join(allowed)
            )
    if definition.partition_keys and connector not in _PARTITIONED:
        raise invalid(f"Connector '{connector}' does not support PARTITIONED BY")
    if connector == "filesystem":
        for required in ("path", "format"):
            if required not in definition.options:
                raise invalid(f"Connector 'filesystem' requires the option '{required}'")
        if definition.options["format"] not in _FORMATS:
            raise invalid(
                f"Unsupported format '{definition.options['format']}'; valid formats: "
                + ", ".join(_FORMATS)
            )
    for column in definition.columns:
        if column.metadata is not None and column.metadata not in METADATA.get(connector, {}):
            keys = ", ".join(METADATA.get(connector, {})) or "none"
            raise invalid(
                f"Connector '{connector}' has no metadata key '{column.metadata}' (column "
                f"{column.name}); its keys: {keys}"
            )
    if connector == "datagen":
        _datagen_rows(definition)
        for column in definition.physical:
            _datagen_expr(definition, column, "id")
    if connector == "jdbc":
        jdbc.check(definition)
    if connector in kafka.CONNECTORS:
        kafka.check(definition)


def sink_kind(definition: TableDefinition) -> str:
    """The connector, refused if it cannot be written or its columns cannot be."""
    check_definition(definition)
    if definition.connector not in _SINKS:
        raise invalid(
            f"Connector '{definition.connector}' can only be used as a source, not as a sink"
        )
    if definition.connector in kafka.CONNECTORS:
        kafka.check_writable(definition)
    return definition.connector


def written(definition: TableDefinition) -> tuple[Column, ...]:
    """The columns an INSERT gives values for: the physical ones and, in a Kafka
    table, its metadata columns not declared VIRTUAL (in declared order), as Flink."""
    if definition.connector in kafka.CONNECTORS:
        return kafka.written(definition)
    return definition.physical


def _physical_ddl(definition: TableDefinition) -> str:
    return ", ".join(
        f"{quote_identifier(c.name)} {spark_type(c.type or '')}" for c in definition.physical
    )


def catalog_ddl(
    definition: TableDefinition,
    batch_select: str | None,
    *,
    replace: bool = False,
    properties: Mapping[str, str] | None = None,
) -> str:
    """The Spark DDL that stores ``definition`` in the catalog (``replace``: over
    the view stored before; a filesystem table's files stay where they are), with
    ``properties`` of the table's beside it (a materialized table's definition)."""
    name = quote_name(definition.name)
    stored = {DEFINITION_PROPERTY: definition.to_json(), **(properties or {})}
    props = f"TBLPROPERTIES ({quote_properties(stored)})"
    comment = f" COMMENT {quote_string(definition.comment)}" if definition.comment else ""
    exists = " IF NOT EXISTS" if definition.if_not_exists else ""
    if definition.connector == "filesystem":
        fmt = definition.options["format"]
        options = [f"path {quote_string(definition.options['path'])}"]
        if "csv.field-delimiter" in definition.options:
            options.append(f"sep {quote_string(definition.options['csv.field-delimiter'])}")
        partitioned = (
            f" PARTITIONED BY ({', '.join(quote_identifier(k) for k in definition.partition_keys)})"
            if definition.partition_keys
            else ""
        )
        return (
            f"CREATE TABLE{exists} {name} ({_physical_ddl(definition)}) USING {fmt} "
            f"OPTIONS ({', '.join(options)}){partitioned}{comment} {props}"
        )
    assert batch_select is not None
    body = _with_columns(definition, batch_select)
    if replace:
        return f"CREATE OR REPLACE VIEW {name}{comment} {props} AS {body}"
    return f"CREATE VIEW{exists} {name}{comment} {props} AS {body}"


def _with_columns(definition: TableDefinition, batch_select: str) -> str:
    # The stored view has the computed columns too, so that Spark makes views over
    # the table that use them (and Spark alone reads them).
    columns = ", ".join(
        f"{_column_expr(definition, c)} AS {quote_identifier(c.name)}" for c in definition.columns
    )
    return f"SELECT {columns} FROM ({batch_select}) AS t"


def columns_select(definition: TableDefinition) -> str | None:
    """A query of the table's columns, computed ones too, that Spark can analyse
    without reaching the connector's system (None: a filesystem table)."""
    batch_select = stored_select(definition)
    return None if batch_select is None else _with_columns(definition, batch_select)


# -- datagen -------------------------------------------------------------------


def _datagen_rows(definition: TableDefinition) -> int | None:
    """The number of rows a datagen table has, or None when it is unbounded."""
    opts = definition.options
    rows: int | None = None
    try:
        if "number-of-rows" in opts:
            rows = int(opts["number-of-rows"])
        for column in definition.physical:
            if opts.get(f"fields.{column.name}.kind") == "sequence":
                start = int(opts.get(f"fields.{column.name}.start", "0"))
                if f"fields.{column.name}.end" not in opts:
                    raise invalid(f"A sequence field needs 'fields.{column.name}.end' (and .start)")
                count = int(opts[f"fields.{column.name}.end"]) - start + 1
                rows = count if rows is None else min(rows, count)
        if "rows-per-second" in opts and float(opts["rows-per-second"]) <= 0:
            raise invalid("'rows-per-second' must be positive")
    except ValueError as exc:
        raise invalid(f"Invalid datagen option value: {exc}") from exc
    return None if rows is None else max(rows, 0)


def _number(opts: Mapping[str, str], key: str, default: str, parse: Callable[[str], _N]) -> _N:
    """Option ``key`` as a number; an error naming the option when it is not one."""
    raw = opts.get(key, default)
    try:
        return parse(raw)
    except ValueError:
        kind = "an integer" if parse is int else "a number"
        raise invalid(
            f"Invalid value {raw!r} for datagen option '{key}': expected {kind}"
        ) from None


def _datagen_expr(definition: TableDefinition, column: Column, id_column: str) -> str:
    opts = definition.options
    prefix = f"fields.{column.name}."
    kind = opts.get(prefix + "kind", "random")
    if kind not in ("random", "sequence"):
        raise invalid(f"Unsupported '{prefix}kind' {kind!r}; valid kinds: random, sequence")
    stype = spark_type(column.type or "")
    base = stype.split("(")[0].strip().upper()
    if kind == "sequence":
        if base not in _INTEGRAL and base not in _FRACTIONAL and base not in ("STRING", "DECIMAL"):
            raise invalid(f"A sequence field must be numeric or STRING: {column.name}")
        start = _number(opts, prefix + "start", "0", int)
        expr = f"({start} + {id_column})"
    elif base in _INTEGRAL or base == "DECIMAL":
        lo = _number(opts, prefix + "min", "0", int)
        hi = _number(opts, prefix + "max", "1000000", int)
        expr = f"({lo} + floor(rand() * {hi - lo + 1}))"
    elif base in _FRACTIONAL:
        lo_f = _number(opts, prefix + "min", "0", float)
        hi_f = _number(opts, prefix + "max", "1", float)
        expr = f"({lo_f!r} + rand() * {hi_f - lo_f!r})"
    elif base == "STRING":
        expr = f"randstr({_number(opts, prefix + 'length', '100', int)})"
    elif base == "BOOLEAN":
        expr = "(rand() < 0.5)"
    elif base in ("TIMESTAMP", "TIMESTAMP_NTZ", "DATE"):
        expr = "current_timestamp()"
    else:
        raise invalid(
            f"datagen cannot generate type {column.type} (column {column.name}); supported: "
            "integral, FLOAT, DOUBLE, DECIMAL, STRING/VARCHAR, BOOLEAN, TIMESTAMP, DATE"
        )
    null_rate = _number(opts, prefix + "null-rate", "0", float)
    if null_rate > 0:
        expr = f"IF(rand() < {null_rate!r}, NULL, {expr})"
    return _cast(expr, column)


def stored_select(definition: TableDefinition) -> str | None:
    """The body of the catalog view that stores ``definition`` (None: a filesystem
    table, stored as Spark's own table). A definition whose options are not valid
    (an ALTER TABLE SET stores options unchecked, as Flink does) gets a view that
    fails with the reason when read."""
    if definition.connector == "filesystem":
        return None
    try:
        check_definition(definition)
    except ExecutionError as exc:
        return _failing_select(definition, exc.message)
    if definition.connector == "datagen":
        return datagen_select(definition)
    return sink_select(definition)


def datagen_select(definition: TableDefinition) -> str:
    """SQL that generates a bounded datagen table in batch (the catalog view's body)."""
    rows = _datagen_rows(definition)
    exprs = [_datagen_expr(definition, c, "id") for c in definition.physical]
    if rows is None:
        message = (
            f"datagen table {'.'.join(definition.name)} is unbounded (no 'number-of-rows' "
            "or sequence field): read it in streaming mode (SET 'execution.runtime-mode' = "
            "'streaming')"
        )
        return _failing_select(definition, message)
    return f"SELECT {', '.join(exprs)} FROM range(0, {rows})"


def sink_select(definition: TableDefinition) -> str:
    message = f"Connector '{definition.connector}' is a sink only: it cannot be read"
    if definition.connector in _READABLE:  # read by the gateway's connector, not by this view
        message = (
            f"Table {'.'.join(definition.name)} ({definition.connector}) is read through "
            "sparkgate's statements, not by Spark alone"
        )
    return _failing_select(definition, message)


def _failing_select(definition: TableDefinition, message: str) -> str:
    """A one-row SELECT of the table's columns that fails with ``message`` when run
    (and of the connector's columns its metadata columns read)."""
    exprs = [_cast(f"raise_error({quote_string(message)})", c) for c in definition.physical]
    sources = METADATA.get(definition.connector, {})
    exprs += [
        f"CAST(NULL AS {spark_type(c.type or '')}) AS {sources[c.metadata or '']}"
        for c in definition.columns
        if c.metadata in sources
    ]
    return f"SELECT {', '.join(exprs)} FROM range(1)"


def _cast(expr: str, column: Column) -> str:
    return f"CAST({expr} AS {spark_type(column.type or '')}) AS {quote_identifier(column.name)}"


# -- frames ----------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """A table read as a stream; ``rows`` bounds a datagen source (None: unbounded);
    ``values``: a VALUES list read row by row; ``changelog``: each row says its
    kind in :data:`KIND_COLUMN`, the frame's last column."""

    frame: DataFrame
    bounded: bool
    rows: int | None = None
    values: bool = False
    changelog: bool = False


def _finish(df: DataFrame, definition: TableDefinition) -> DataFrame:
    """Computed columns in declared order, then the watermark.

    Each column carries its Flink declaration in its field metadata
    (:func:`flink_column`), which Spark keeps through views and projections, so
    a view over the table describes its columns as Flink does."""
    from pyspark.sql import functions as F

    # A physical column keeps the metadata Spark gave it (a file's, a CHAR's length).
    kept = {f.name.lower(): f.metadata for f in df.schema.fields}
    columns = []
    for column in definition.columns:
        meta = _column_metadata(definition, column)
        if column.is_physical:
            meta = {**kept.get(column.name.lower(), {}), **meta}
        expr = _column_expr(definition, column)
        columns.append(F.expr(expr).alias(column.name, metadata=meta))
    if KIND_COLUMN in df.columns:  # a changelog keeps each row's kind, last
        columns.append(F.col(KIND_COLUMN))
    out = df.select(*columns)
    if definition.watermark is not None:
        out = out.withWatermark(definition.watermark.column, definition.watermark.delay)
    return out


def _column_expr(definition: TableDefinition, column: Column) -> str:
    """The Spark SQL expression of a column over the table's physical columns."""
    if column.is_physical:
        return quote_identifier(column.name)
    if column.metadata is not None:
        source = METADATA[definition.connector][column.metadata]
        return f"CAST({source} AS {spark_type(column.type or '')})"
    if column.is_proctime:
        return "current_timestamp()"
    # Flink's spellings (LOCALTIMESTAMP, ARRAY[...], ...) as a query's are read.
    return flink_functions(column.expression or "")


# Field metadata keys of a connector table's columns (see :func:`flink_column`).
_FLINK_NOT_NULL = "sparkgate.flink.notNull"
_FLINK_ROWTIME = "sparkgate.flink.rowtime"


def _column_metadata(definition: TableDefinition, column: Column) -> dict[str, object]:
    meta: dict[str, object] = {}
    if column.is_proctime:
        meta[FLINK_PROCTIME_KEY] = True
    elif column.type is not None:
        meta[FLINK_TYPE_KEY] = column.type_text
    keys = {k.lower() for k in definition.primary_key}
    if column.not_null or column.name.lower() in keys:
        meta[_FLINK_NOT_NULL] = True
    mark = definition.watermark
    if mark is not None and mark.column.lower() == column.name.lower():
        meta[_FLINK_ROWTIME] = True
    return meta


@dataclass(frozen=True)
class FlinkColumn:
    """What a frame's field says of the connector column it comes from."""

    type: str | None  # the declared type, as declared (upper case)
    not_null: bool
    rowtime: bool
    proctime: bool


def flink_column(metadata: Mapping[str, object]) -> FlinkColumn | None:
    """The connector column declaration a field's metadata carries, if any."""
    if not any(key in metadata for key in (FLINK_TYPE_KEY, FLINK_PROCTIME_KEY, _FLINK_NOT_NULL)):
        return None
    declared = metadata.get(FLINK_TYPE_KEY)
    return FlinkColumn(
        type=declared if isinstance(declared, str) else None,
        not_null=metadata.get(_FLINK_NOT_NULL) is True,
        rowtime=metadata.get(_FLINK_ROWTIME) is True,
        proctime=metadata.get(FLINK_PROCTIME_KEY) is True,
    )


def _file_format(io: Any, definition: TableDefinition) -> Any:
    """A Spark reader or writer (batch or stream) set to the table's file format."""
    io = io.format(definition.options["format"])
    if "csv.field-delimiter" in definition.options:
        io = io.option("sep", definition.options["csv.field-delimiter"])
    return io


def _file_reader(reader: Any, definition: TableDefinition) -> Any:
    return _file_format(reader, definition).schema(_physical_ddl(definition))


def _file_writer(writer: Any, definition: TableDefinition) -> Any:
    writer = _file_format(writer, definition)
    if definition.partition_keys:
        writer = writer.partitionBy(*definition.partition_keys)
    return writer


_READABLE = frozenset({"datagen", "filesystem", "jdbc", "kafka", "upsert-kafka"})


def check_readable(definition: TableDefinition) -> None:
    """Refuse, before anything runs, to read a table whose options are not valid (an
    ALTER TABLE SET stores them unchecked, as Flink's) or whose connector is a sink
    only."""
    check_definition(definition)
    if definition.connector not in _READABLE:
        message = (
            f"Connector '{definition.connector}' can only be used as a sink: table "
            f"{'.'.join(definition.name)} cannot be read."
        )
        raise invalid(message)


def batch_frame(spark: SparkSession, definition: TableDefinition) -> DataFrame:
    connector = definition.connector
    if connector == "datagen":
        return _finish(spark.sql(datagen_select(definition)), definition)
    if connector == "filesystem":
        df = _file_reader(spark.read, definition).load(definition.options["path"])
        return _finish(df, definition)
    if connector == "jdbc":
        return _finish(jdbc.read(spark, definition), definition)
    if connector in kafka.CONNECTORS:
        return _finish(kafka.read(spark, definition, stream=False), definition)
    return _finish(spark.sql(sink_select(definition)), definition)


def stream_frame(spark: SparkSession, definition: TableDefinition, trigger_s: float) -> Source:
    connector = definition.connector
    if connector == "datagen":
        rows = _datagen_rows(definition)
        per_second = float(definition.options.get("rows-per-second", "10000"))
        # Deterministic micro-batches: batch k holds values [k*n, (k+1)*n), so a
        # restarted job regenerates exactly the rows it had not yet written.
        per_batch = max(1, math.ceil(per_second * trigger_s))
        raw = (
            spark.readStream.format("rate-micro-batch")
            .option("rowsPerBatch", per_batch)
            .option("numPartitions", 1)
            .load()
        )
        if rows is not None:
            raw = raw.where(f"value < {rows}")
        exprs = [_datagen_expr(definition, c, "value") for c in definition.physical]
        return Source(_finish(raw.selectExpr(*exprs), definition), rows is not None, rows)
    if connector == "filesystem":
        df = _file_reader(spark.readStream, definition).load(definition.options["path"])
        monitored = "source.monitor-interval" in definition.options
        return Source(_finish(df, definition), not monitored)
    if connector in kafka.CONNECTORS:
        frame = _finish(kafka.read(spark, definition, stream=True), definition)
        return Source(
            frame, kafka.bounded_stream(definition), changelog=KIND_COLUMN in frame.columns
        )
    if connector == "jdbc":
        raise invalid(
            f"jdbc table {'.'.join(definition.name)} is read in batch mode: Spark reads no "
            "database table as a stream (SET 'execution.runtime-mode' = 'batch')"
        )
    raise invalid(f"Connector '{connector}' can only be used as a sink, not read")


# -- sinks -------------------------------------------------------------------------


def _print_rows(definition: TableDefinition) -> Callable[[DataFrame, int], None]:
    ident = definition.options.get("print-identifier")
    printer = logging.getLogger("sparkgate.print")

    def emit(df: DataFrame, _batch_id: int) -> None:
        changelog = df.columns[-1] == KIND_COLUMN
        for row in df.toLocalIterator():
            kind = ROW_KINDS[row[-1]].value if changelog else "+I"
            values = row[:-1] if changelog else row
            line = kind + "[" + ", ".join("null" if v is None else str(v) for v in values) + "]"
            printer.info("%s%s", f"{ident}> " if ident else "", line)

    return emit


def write_batch(df: DataFrame, definition: TableDefinition) -> None:
    """Write a batch result into a connector sink."""
    kind = sink_kind(definition)
    if kind == "filesystem":
        _file_writer(df.write.mode("append"), definition).save(definition.options["path"])
    elif kind == "print":
        _print_rows(definition)(df, 0)
    elif kind == "jdbc":
        jdbc.write(df, definition)
    elif kind in kafka.CONNECTORS:
        kafka.write(df, definition)
    else:
        df.write.format("noop").mode("overwrite").save()


# A checkpoint's mark of a micro-batch a stop cut short (its number).
_CUT_BATCH = "sparkgate-cut-batch"


def _file_batches(
    spark: SparkSession, definition: TableDefinition, checkpoint: str
) -> Callable[[DataFrame, int], None]:
    """A streaming job's micro-batches into a filesystem table's directory.

    Not Spark's file sink: its ``_spark_metadata`` log belongs to one query, so a
    second job into the same table had its first batches skipped as committed,
    and readers saw only logged files (not a batch INSERT's). Each batch is
    written aside (a ``_`` directory readers skip), then its files are moved
    in, named after the query (its id in the checkpoint, kept by savepoints)
    and the batch: a batch run again after a restart replaces its own files."""
    path = definition.options["path"].rstrip("/")
    _run_cut_batch_again(Files(spark), checkpoint)
    query: list[str] = []

    def write(df: DataFrame, batch_id: int) -> None:
        files = Files(df.sparkSession)
        if not query:
            stored = json.loads(files.read(f"{checkpoint}/metadata") or "{}")
            query.append(str(stored.get("id") or uuid.uuid5(uuid.NAMESPACE_URL, checkpoint)))
            if files.exists(f"{path}/_spark_metadata"):
                # An earlier release's log: readers would see its files only.
                files.delete(f"{path}/_spark_metadata")
        aside = f"_staging-{query[0]}-"
        for stale in files.children(path):  # a batch a stop cut short
            if stale.startswith(aside):
                files.delete(f"{path}/{stale}")
        try:
            if df.isEmpty():
                return  # nothing to move in
            staging = f"{path}/{aside}{batch_id}"
            _file_writer(df.write.mode("overwrite"), definition).save(staging)
            files.publish(staging, path, f"part-{query[0]}-{batch_id:08d}-")
        except Exception:
            if not _stopping(spark, query[0]):
                raise
            # A stop cancelled the batch's Spark jobs. Raised back through py4j, that
            # would fill Spark's log (its stream thread even overflows its stack on
            # py4j's message); returned, the batch is recorded as done. So it is
            # marked, and the next start from this checkpoint (a savepoint copies
            # it) runs it again.
            files.write(f"{checkpoint}/{_CUT_BATCH}", str(batch_id))
            log.info(
                "Micro-batch %d into %s was cut by a stop: it runs again on resume", batch_id, path
            )

    return write


def _stopping(spark: SparkSession, query_id: str) -> bool:
    """Whether the streaming query ``query_id``, started from ``spark``, is being
    stopped. (A micro-batch's own session is the stream's clone, whose manager
    knows no query: asked there, every failure would look like a stop.) A
    query not found is not taken for one: its failure is raised."""
    try:
        query = spark.streams.get(query_id)
    except Exception:
        log.debug("No streaming query %s in the session that started it", query_id, exc_info=True)
        return False
    return query is not None and not query.isActive


def _run_cut_batch_again(files: Files, checkpoint: str) -> None:
    """Make Spark run again the micro-batch a stop cut short: without its
    commit, a batch whose offsets are logged is run again on start."""
    cut = files.read(f"{checkpoint}/{_CUT_BATCH}")
    if cut is None:
        return
    commits = f"{checkpoint}/commits"
    done = [int(n) for n in files.children(commits) if n.isdigit()]
    if cut.strip().isdigit() and max(done, default=-1) == int(cut):
        files.delete(f"{commits}/{int(cut)}")
        files.delete(f"{commits}/.{int(cut)}.crc")
    files.delete(f"{checkpoint}/{_CUT_BATCH}")


def stream_writer(
    df: DataFrame, definition: TableDefinition | None, checkpoint: str
) -> DataStreamWriter:
    """A stream writer into ``definition``'s sink (None: the caller sets the table),
    its job's checkpoints in ``checkpoint``."""
    writer = df.writeStream.option("checkpointLocation", checkpoint)
    if definition is None:
        return writer
    kind = sink_kind(definition)
    if kind == "filesystem":
        return writer.foreachBatch(_file_batches(df.sparkSession, definition, checkpoint))
    if kind == "print":
        return writer.foreachBatch(_print_rows(definition))
    if kind == "jdbc":
        return writer.foreachBatch(jdbc.write_changelog(definition))
    if kind in kafka.CONNECTORS:
        # Its writer is of the records it encodes from df.
        return kafka.stream_writer(df, definition).option("checkpointLocation", checkpoint)
    return writer.format("noop")
