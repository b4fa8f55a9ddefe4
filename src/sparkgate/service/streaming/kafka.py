"""Flink's ``kafka`` connector on Spark's Kafka source and sink.

A table ``WITH ('connector' = 'kafka', 'topic' = ..., 'properties.bootstrap.servers'
= ..., 'format' = 'json')`` is read with Spark's ``kafka`` source: in batch mode
from the startup offsets to the bounded mode's end (the offsets current when the
statement starts, by default), in streaming mode continuously. Its records'
key and value are decoded with the table's formats into the physical columns;
Kafka's own fields are the metadata columns. Writing encodes the rows the same
way and appends them with Spark's Kafka sink, which delivers at least once.

Spark's Kafka integration is a Maven package, loaded into the engine the first
time a Kafka table is created or read (:mod:`sparkgate.service.spark.packages`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from sparkgate.api.catalog import quote_identifier
from sparkgate.service.spark import packages
from sparkgate.service.spark.jobs import invalid
from sparkgate.service.streaming.changelog import KIND_COLUMN
from sparkgate.service.streaming.ddl import Column, TableDefinition
from sparkgate.sql.quoting import quote_string

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter

__all__ = [
    "METADATA",
    "OPTIONS",
    "PREFIXES",
    "check",
    "read",
    "stream_writer",
    "write",
]

_FORMATS = ("json", "csv", "raw")
OPTIONS = (
    "topic",
    "topic-pattern",
    "format",
    "key.format",
    "value.format",
    "key.fields",
    "key.fields-prefix",
    "value.fields-include",
    "scan.startup.mode",
    "scan.startup.timestamp-millis",
    "scan.startup.specific-offsets",
    "scan.bounded.mode",
    "scan.bounded.timestamp-millis",
    "scan.bounded.specific-offsets",
    "sink.partitioner",
    "sink.delivery-guarantee",
    "sink.parallelism",
    "json.ignore-parse-errors",
    "json.timestamp-format.standard",
    "key.json.ignore-parse-errors",
    "value.json.ignore-parse-errors",
    "csv.field-delimiter",
    "csv.quote-character",
    "csv.null-literal",
    "csv.ignore-parse-errors",
)
#: Option families passed on: ``properties.*`` to the Kafka client.
PREFIXES = ("properties.",)

# Flink's metadata keys and the column of the frame :func:`read` makes for each.
_RAW = "__kafka_"
METADATA: Mapping[str, str] = {
    "topic": f"{_RAW}topic",
    "partition": f"{_RAW}partition",
    "offset": f"{_RAW}offset",
    "timestamp": f"{_RAW}timestamp",
    "timestamp-type": f"{_RAW}timestamp_type",
    "headers": f"{_RAW}headers",
}
_STARTUP = ("earliest-offset", "latest-offset", "timestamp", "specific-offsets", "group-offsets")
_BOUNDED = ("unbounded", "latest-offset", "timestamp", "specific-offsets")


# -- definition --------------------------------------------------------------------


def check(definition: TableDefinition) -> None:
    """Refuse, at CREATE TABLE, what the table cannot do: a missing topic or
    bootstrap servers, an unknown format or mode, a guarantee Spark does not give."""
    opts = definition.options
    topics = _topics(definition)
    if not topics and "topic-pattern" not in opts:
        raise invalid("Kafka table requires the option 'topic' or 'topic-pattern'")
    if topics and "topic-pattern" in opts:
        raise invalid("Option 'topic' and 'topic-pattern' shouldn't be set together")
    if "properties.bootstrap.servers" not in opts:
        raise invalid("Kafka table requires the option 'properties.bootstrap.servers'")
    value_format = _value_format(definition)
    for role, fmt in (("value", value_format), ("key", opts.get("key.format"))):
        if fmt is not None and fmt not in _FORMATS:
            raise invalid(
                f"Unsupported {role} format '{fmt}'; valid formats: {', '.join(_FORMATS)}"
            )
    key_fields = _key_fields(definition)
    if key_fields and "key.format" not in opts:
        raise invalid("Option 'key.fields' needs 'key.format' too")
    physical = {c.name for c in definition.physical}
    for name in key_fields:
        if name not in physical:
            raise invalid(f"key.fields names no physical column: '{name}'")
    include = opts.get("value.fields-include", "ALL").upper()
    if include not in ("ALL", "EXCEPT_KEY"):
        raise invalid(f"Unsupported value.fields-include '{include}'; valid: ALL, EXCEPT_KEY")
    if value_format == "raw" and len(_value_columns(definition)) != 1:
        raise invalid("The 'raw' format needs exactly one value column")
    _check_mode(definition, "scan.startup", "group-offsets", _STARTUP)
    _check_mode(definition, "scan.bounded", "unbounded", _BOUNDED)
    guarantee = opts.get("sink.delivery-guarantee", "at-least-once")
    if guarantee == "exactly-once":
        raise invalid(
            "sink.delivery-guarantee 'exactly-once' cannot be given: Spark's Kafka sink "
            "writes at least once (a restarted micro-batch may write its records again)"
        )
    if guarantee not in ("at-least-once", "none"):
        raise invalid(f"Unsupported sink.delivery-guarantee '{guarantee}'")
    partitioner = opts.get("sink.partitioner", "default")
    if partitioner not in ("default", "round-robin"):
        raise invalid(f"Unsupported sink.partitioner '{partitioner}'; valid: default, round-robin")


def _check_mode(
    definition: TableDefinition, prefix: str, default: str, valid: tuple[str, ...]
) -> None:
    """``<prefix>.mode`` is one of ``valid``, with the option its mode needs."""
    opts = definition.options
    mode = opts.get(f"{prefix}.mode", default)
    if mode not in valid:
        raise invalid(f"Unsupported {prefix}.mode '{mode}'; valid: {', '.join(valid)}")
    if mode == "timestamp" and f"{prefix}.timestamp-millis" not in opts:
        kind = prefix.removeprefix("scan.")
        raise invalid(f"'{prefix}.timestamp-millis' is required in 'timestamp' {kind} mode")
    if mode == "specific-offsets":
        _offsets(definition, opts.get(f"{prefix}.specific-offsets"), prefix)


def _split(text: str) -> list[str]:
    """Flink's ``;``-separated list (``topic``, ``key.fields``), blanks dropped."""
    return [item.strip() for item in text.split(";") if item.strip()]


def _topics(definition: TableDefinition) -> list[str]:
    return _split(definition.options.get("topic", ""))


def _value_format(definition: TableDefinition) -> str:
    opts = definition.options
    fmt = opts.get("value.format", opts.get("format"))
    if fmt is None:
        raise invalid("Kafka table requires the option 'format' or 'value.format'")
    return fmt


def _key_fields(definition: TableDefinition) -> list[str]:
    return _split(definition.options.get("key.fields", ""))


def _value_columns(definition: TableDefinition) -> list[Column]:
    if definition.options.get("value.fields-include", "ALL").upper() == "EXCEPT_KEY":
        keys = set(_key_fields(definition))
        return [c for c in definition.physical if c.name not in keys]
    return list(definition.physical)


def _key_columns(definition: TableDefinition) -> list[Column]:
    by_name = {c.name: c for c in definition.physical}
    return [by_name[name] for name in _key_fields(definition)]


def _offsets(definition: TableDefinition, text: str | None, option: str) -> str:
    """Flink's ``partition:0,offset:42;partition:1,offset:300`` as Spark's JSON."""
    topics = _topics(definition)
    if len(topics) != 1:
        raise invalid(f"'{option}.specific-offsets' needs exactly one topic")
    if not text:
        raise invalid(f"'{option}.specific-offsets' is required in 'specific-offsets' mode")
    offsets: dict[str, int] = {}
    for part in text.split(";"):
        fields = dict(item.split(":", 1) for item in part.split(",") if ":" in item)
        try:
            offsets[str(int(fields["partition"]))] = int(fields["offset"])
        except (KeyError, ValueError):
            raise invalid(
                f"Invalid properties '{option}.specific-offsets' should follow the format "
                f"'partition:0,offset:42;partition:1,offset:300', but is '{text}'."
            ) from None
    return json.dumps({topics[0]: offsets})


# -- reading -----------------------------------------------------------------------


def _client_options(definition: TableDefinition) -> dict[str, str]:
    return {
        f"kafka.{key.removeprefix('properties.')}": value
        for key, value in definition.options.items()
        if key.startswith("properties.")
    }


def _source_options(definition: TableDefinition, batch: bool) -> dict[str, str]:
    opts = definition.options
    out = _client_options(definition)
    if "topic-pattern" in opts:
        out["subscribePattern"] = opts["topic-pattern"]
    else:
        out["subscribe"] = ",".join(_topics(definition))
    out["includeHeaders"] = "true"
    mode = opts.get("scan.startup.mode", "group-offsets")
    if mode == "group-offsets":
        # Spark's source keeps its offsets in its checkpoint, not in the group: a new
        # reader starts where Flink's would without committed offsets (its default
        # auto.offset.reset is latest, and so is Spark's).
        reset = opts.get("properties.auto.offset.reset", "latest")
        out["startingOffsets"] = "earliest" if reset == "earliest" else "latest"
    elif mode == "earliest-offset":
        out["startingOffsets"] = "earliest"
    elif mode == "latest-offset":
        out["startingOffsets"] = "latest"
    elif mode == "timestamp":
        out["startingTimestamp"] = opts["scan.startup.timestamp-millis"]
    else:
        out["startingOffsets"] = _offsets(
            definition, opts.get("scan.startup.specific-offsets"), "scan.startup"
        )
    if batch:
        bounded = opts.get("scan.bounded.mode", "unbounded")
        if bounded == "timestamp":
            out["endingTimestamp"] = opts["scan.bounded.timestamp-millis"]
        elif bounded == "specific-offsets":
            out["endingOffsets"] = _offsets(
                definition, opts.get("scan.bounded.specific-offsets"), "scan.bounded"
            )
        else:  # up to the offsets current when the statement starts
            out["endingOffsets"] = "latest"
    # A topic compacted or expired under a reader is Flink's "offset out of range"
    # reset, not a failed query.
    out["failOnDataLoss"] = "false"
    return out


def _decoded(
    fmt: str,
    source: str,
    columns: list[Column],
    opts: Mapping[str, str],
    role: str,
    prefix: str = "",
) -> list[str]:
    """SQL expressions decoding ``source`` (Kafka's key or value bytes) into ``columns``;
    a column's field in the record is its name without ``prefix``."""
    from sparkgate.service.streaming.connectors import spark_type

    if not columns:
        return []
    text = f"CAST({source} AS STRING)"
    if fmt == "raw":
        [column] = columns
        kind = spark_type(column.type or "")
        value = source if kind == "BINARY" else text
        return [f"CAST({value} AS {kind}) AS {quote_identifier(column.name)}"]
    fields = [quote_identifier(c.name.removeprefix(prefix)) for c in columns]
    schema = ", ".join(
        f"{field} {spark_type(c.type or '')}" for field, c in zip(fields, columns, strict=True)
    )
    ignore = opts.get(f"{role}.{fmt}.ignore-parse-errors", opts.get(f"{fmt}.ignore-parse-errors"))
    options = {"mode": "PERMISSIVE" if ignore == "true" else "FAILFAST"}
    if fmt == "json":
        if opts.get("json.timestamp-format.standard", "SQL").upper() == "SQL":
            options["timestampFormat"] = "yyyy-MM-dd HH:mm:ss[.SSSSSSSSS]"
        parsed = f"from_json({text}, {quote_string(schema)}, {_map(options)})"
    else:
        if "csv.field-delimiter" in opts:
            options["sep"] = opts["csv.field-delimiter"]
        if "csv.quote-character" in opts:
            options["quote"] = opts["csv.quote-character"]
        if "csv.null-literal" in opts:
            options["nullValue"] = opts["csv.null-literal"]
        parsed = f"from_csv({text}, {quote_string(schema)}, {_map(options)})"
    return [
        f"{parsed}.{field} AS {quote_identifier(c.name)}"
        for field, c in zip(fields, columns, strict=True)
    ]


def _map(options: Mapping[str, str]) -> str:
    pairs = ", ".join(f"{quote_string(k)}, {quote_string(v)}" for k, v in options.items())
    return f"map({pairs})"


def _frame(raw: DataFrame, definition: TableDefinition) -> DataFrame:
    """The physical columns decoded, then Kafka's fields under :data:`METADATA`'s names."""
    opts = definition.options
    prefix = opts.get("key.fields-prefix", "")
    key_columns = _key_columns(definition)
    value_columns = _value_columns(definition)
    exprs: dict[str, str] = {}
    if key_columns:
        # The key's fields are named without the prefix in the key's own encoding.
        decoded = _decoded(opts["key.format"], "key", key_columns, opts, "key", prefix)
        exprs.update(zip((c.name for c in key_columns), decoded, strict=True))
    decoded = _decoded(_value_format(definition), "value", value_columns, opts, "value")
    for column, expr in zip(value_columns, decoded, strict=True):
        exprs.setdefault(column.name, expr)
    physical = [exprs[c.name] for c in definition.physical]
    kafka_fields = [
        f"topic AS {METADATA['topic']}",
        f"partition AS {METADATA['partition']}",
        f"offset AS {METADATA['offset']}",
        f"timestamp AS {METADATA['timestamp']}",
        "CASE timestampType WHEN 0 THEN 'CreateTime' WHEN 1 THEN 'LogAppendTime' "
        f"ELSE 'NoTimestampType' END AS {METADATA['timestamp-type']}",
        f"map_from_entries(coalesce(headers, array())) AS {METADATA['headers']}",
    ]
    return raw.selectExpr(*physical, *kafka_fields)


def read(spark: SparkSession, definition: TableDefinition, *, stream: bool) -> DataFrame:
    """The table's records as a frame of its physical columns and Kafka's fields."""
    packages.require(spark, packages.KAFKA)
    reader = spark.readStream if stream else spark.read
    options = _source_options(definition, not stream)
    empty = not stream and options.get("startingOffsets") == "latest"
    if empty:
        # Read from the end up to the end, as Flink's bounded read does: nothing.
        # Spark refuses to start a batch read at "latest"; the filter prunes the read.
        options["startingOffsets"] = "earliest"
    raw = reader.format("kafka").options(**options).load()
    return _frame(raw.where("false") if empty else raw, definition)


def bounded_stream(definition: TableDefinition) -> bool:
    """Whether a streaming read ends (a bounded mode other than ``unbounded``)."""
    return definition.options.get("scan.bounded.mode", "unbounded") != "unbounded"


# -- writing -----------------------------------------------------------------------


def _encoded(df: DataFrame, definition: TableDefinition) -> DataFrame:
    """``df``'s rows as Kafka records: ``key`` and ``value`` in the table's formats."""
    if KIND_COLUMN in df.columns:
        raise invalid(
            f"Table sink '{'.'.join(definition.name)}' doesn't support consuming update and "
            "delete changes: the 'kafka' connector appends; write an updating query into "
            "an 'upsert-kafka' table"
        )
    opts = definition.options
    names = [c.name for c in definition.physical]
    renamed = df.toDF(*names) if len(df.columns) == len(names) else df
    exprs = [f"{_encode(_value_format(definition), _value_columns(definition), opts)} AS value"]
    key_columns = _key_columns(definition)
    if key_columns:
        prefix = opts.get("key.fields-prefix", "")
        exprs.append(f"{_encode(opts['key.format'], key_columns, opts, prefix)} AS key")
    return renamed.selectExpr(*exprs)


def _encode(fmt: str, columns: list[Column], opts: Mapping[str, str], prefix: str = "") -> str:
    if fmt == "raw":
        [column] = columns
        return quote_identifier(column.name)
    fields = ", ".join(
        f"{quote_string(c.name.removeprefix(prefix))}, {quote_identifier(c.name)}" for c in columns
    )
    if fmt == "json":
        options = {"ignoreNullFields": "false"}
        if opts.get("json.timestamp-format.standard", "SQL").upper() == "SQL":
            options["timestampFormat"] = "yyyy-MM-dd HH:mm:ss.SSS"
        return f"to_json(named_struct({fields}), {_map(options)})"
    options = {}
    if "csv.field-delimiter" in opts:
        options["sep"] = opts["csv.field-delimiter"]
    return f"to_csv(named_struct({fields}), {_map(options)})"


def _sink_options(definition: TableDefinition) -> dict[str, str]:
    opts = definition.options
    topics = _topics(definition)
    if len(topics) != 1:
        raise invalid(
            "A Kafka table written to needs exactly one 'topic' (not a list or a pattern)"
        )
    out = _client_options(definition)
    out["topic"] = topics[0]
    if opts.get("sink.partitioner") == "round-robin":
        out["kafka.partitioner.class"] = "org.apache.kafka.clients.producer.RoundRobinPartitioner"
    return out


def write(df: DataFrame, definition: TableDefinition) -> None:
    """Append a batch result to the topic."""
    packages.require(df.sparkSession, packages.KAFKA)
    _encoded(df, definition).write.format("kafka").options(**_sink_options(definition)).save()


def stream_writer(df: DataFrame, definition: TableDefinition) -> DataStreamWriter:
    """A stream writer appending ``df``'s rows to the topic."""
    packages.require(df.sparkSession, packages.KAFKA)
    encoded = _encoded(df, definition)
    return encoded.writeStream.format("kafka").options(**_sink_options(definition))
