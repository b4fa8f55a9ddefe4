"""Flink's ``kafka`` connector on Spark's Kafka source and sink.

A table ``WITH ('connector' = 'kafka', 'topic' = ..., 'properties.bootstrap.servers'
= ..., 'format' = 'json')`` is read with Spark's ``kafka`` source: in batch mode
from the startup offsets to the bounded mode's end (the offsets current when the
statement starts, by default), in streaming mode continuously. Its records'
key and value are decoded with the table's formats into the physical columns;
Kafka's own fields are the metadata columns. Writing encodes the rows the same
way and appends them with Spark's Kafka sink, which delivers at least once.

An ``upsert-kafka`` table is the topic read as a table keyed by its PRIMARY
KEY: the record key holds the key columns, a record's value the row, a record
without a value (a tombstone) deletes its key. A batch read answers each key's
last row; a streaming read a changelog (``+I`` for a new key, ``-U``/``+U`` for
a changed one, ``-D`` for a tombstone), kept per key in Spark's state store.
Writing an updating query writes each change as an upsert or a tombstone.

Spark's Kafka integration is a Maven package, loaded into the engine the first
time a Kafka table is created or read (:mod:`sparkgate.service.spark.packages`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import re
import socket
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

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
    "CONNECTORS",
    "METADATA",
    "OPTIONS",
    "PREFIXES",
    "UPSERT_OPTIONS",
    "avro_schema",
    "check",
    "check_writable",
    "read",
    "require",
    "stream_writer",
    "write",
    "written",
]

#: The connectors this module serves.
CONNECTORS = frozenset({"kafka", "upsert-kafka"})
_FORMATS = ("json", "csv", "raw", "avro")
log = logging.getLogger(__name__)
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
    "json.fail-on-missing-field",
    "key.json.ignore-parse-errors",
    "value.json.ignore-parse-errors",
    "csv.field-delimiter",
    "csv.quote-character",
    "csv.null-literal",
    "csv.ignore-parse-errors",
)
#: Flink's ``upsert-kafka`` options: no startup mode (it reads a topic whole) and
#: no ``key.fields`` (the primary key is the record key).
UPSERT_OPTIONS = (
    "topic",
    "key.format",
    "value.format",
    "key.fields-prefix",
    "value.fields-include",
    "sink.delivery-guarantee",
    "sink.parallelism",
    "sink.buffer-flush.max-rows",
    "sink.buffer-flush.interval",
    *(o for o in OPTIONS if o.startswith(("json.", "key.json.", "value.json.", "csv."))),
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
    # Spark's source does not carry it; Flink's column is nullable, NULL where unknown.
    "leader-epoch": f"{_RAW}leader_epoch",
}
_STARTUP = ("earliest-offset", "latest-offset", "timestamp", "specific-offsets", "group-offsets")
_BOUNDED = ("unbounded", "latest-offset", "timestamp", "specific-offsets")


# -- definition --------------------------------------------------------------------


def _upsert(definition: TableDefinition) -> bool:
    return definition.connector == "upsert-kafka"


def check(definition: TableDefinition) -> None:
    """Refuse, at CREATE TABLE, what the table cannot do: a missing topic or
    bootstrap servers, an unknown format or mode, a guarantee Spark does not give;
    for ``upsert-kafka`` also a missing primary key or key format."""
    opts = definition.options
    topics = _topics(definition)
    if not topics and "topic-pattern" not in opts:
        raise invalid(f"{_kind(definition)} table requires the option 'topic' or 'topic-pattern'")
    if topics and "topic-pattern" in opts:
        raise invalid("Option 'topic' and 'topic-pattern' shouldn't be set together")
    if "properties.bootstrap.servers" not in opts:
        raise invalid(
            f"{_kind(definition)} table requires the option 'properties.bootstrap.servers'"
        )
    if _upsert(definition):
        if not definition.primary_key:
            raise invalid(
                "'upsert-kafka' tables require to define a PRIMARY KEY constraint. The "
                "PRIMARY KEY specifies which columns should be read from or write to the "
                "Kafka message key. The PRIMARY KEY also defines records in the "
                "'upsert-kafka' table should update or delete on which keys."
            )
        missing = [o for o in ("key.format", "value.format") if o not in opts]
        if missing:
            raise invalid(
                "One or more required options are missing.\n\nMissing required options "
                "are:\n\n" + "\n".join(missing)
            )
    value_format = _value_format(definition)
    for role, fmt in (("value", value_format), ("key", opts.get("key.format"))):
        if fmt is not None and fmt not in _FORMATS:
            raise invalid(
                f"Unsupported {role} format '{fmt}'; valid formats: {', '.join(_FORMATS)}"
            )
    key_fields = _key_fields(definition)
    if key_fields and "key.format" not in opts:
        raise invalid("Option 'key.fields' needs 'key.format' too")
    physical = {c.name.lower() for c in definition.physical}
    for name in key_fields:
        if name.lower() not in physical:
            raise invalid(f"key.fields names no physical column: '{name}'")
    if opts.get("json.fail-on-missing-field") == "true" and "true" in (
        opts.get("json.ignore-parse-errors"),
        opts.get("value.json.ignore-parse-errors"),
    ):
        raise invalid("fail-on-missing-field and ignore-parse-errors shouldn't both be true.")
    include = opts.get("value.fields-include", "ALL").upper()
    if include not in ("ALL", "EXCEPT_KEY"):
        raise invalid(f"Unsupported value.fields-include '{include}'; valid: ALL, EXCEPT_KEY")
    if value_format == "raw" and len(_value_columns(definition)) != 1:
        raise invalid("The 'raw' format needs exactly one value column")
    if opts.get("key.format") == "raw" and len(key_fields) != 1:
        raise invalid("The 'raw' key format needs exactly one key column")
    if not _upsert(definition):
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
    if partitioner not in ("default", "fixed", "round-robin"):
        raise invalid(
            f"Unsupported sink.partitioner '{partitioner}'; valid: default, fixed, round-robin"
        )


def require(spark: SparkSession, definition: TableDefinition) -> None:
    """Load the Spark packages the table needs: Kafka's, and Avro's for ``avro``."""
    packages.require(spark, packages.KAFKA)
    opts = definition.options
    if "avro" in (opts.get("format"), opts.get("key.format"), opts.get("value.format")):
        packages.require(spark, packages.AVRO)


def written(definition: TableDefinition) -> tuple[Column, ...]:
    """The columns an INSERT gives values for: the physical ones and the metadata
    columns not declared VIRTUAL, in declared order (Flink's sink schema)."""
    return tuple(c for c in definition.columns if c.is_physical or (c.metadata and not c.virtual))


def check_writable(definition: TableDefinition) -> None:
    """Refuse a table whose persisted (not VIRTUAL) metadata columns cannot be written:
    Spark's sink writes a record's headers, not its timestamp, topic or offset."""
    for column in definition.columns:
        if column.metadata is None or column.virtual or column.metadata == "headers":
            continue
        if column.metadata == "timestamp":
            raise invalid(
                f"Column '{column.name}' would set the records' timestamps, which Spark's "
                "Kafka sink cannot (a record gets the time it is written): declare it "
                "METADATA FROM 'timestamp' VIRTUAL to write this table"
            )
        raise invalid(
            f"Invalid metadata key '{column.metadata}' in column '{column.name}' of table "
            f"'{'.'.join(definition.name)}'. The {definition.connector} sink supports the "
            "following metadata keys for writing:\nheaders"
        )


def _kind(definition: TableDefinition) -> str:
    return "Upsert-kafka" if _upsert(definition) else "Kafka"


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
    """The columns the record key holds: ``key.fields``, or upsert-kafka's primary key."""
    if _upsert(definition):
        return list(definition.primary_key)
    return _split(definition.options.get("key.fields", ""))


def _physical(definition: TableDefinition) -> list[Column]:
    """The physical columns, a primary key's NOT NULL (as Flink's formats see them)."""
    keys = {k.lower() for k in definition.primary_key}
    return [
        dataclasses.replace(c, not_null=True) if c.name.lower() in keys else c
        for c in definition.physical
    ]


def _value_columns(definition: TableDefinition) -> list[Column]:
    if definition.options.get("value.fields-include", "ALL").upper() == "EXCEPT_KEY":
        keys = set(_key_fields(definition))
        return [c for c in _physical(definition) if c.name not in keys]
    return _physical(definition)


def _key_columns(definition: TableDefinition) -> list[Column]:
    by_name = {c.name.lower(): c for c in _physical(definition)}
    return [by_name[name.lower()] for name in _key_fields(definition)]


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


# How long a bootstrap server may take to accept a connection before a statement
# is refused: Kafka's client would retry for minutes (default.api.timeout.ms).
_CONNECT_S = 5.0
# How long an admin request (list topics, describe a topic) may take.
_ADMIN_S = 10


def _check_reachable(definition: TableDefinition) -> None:
    """Refuse, within seconds, a statement none of whose bootstrap servers answers."""
    servers = _split(definition.options["properties.bootstrap.servers"].replace(",", ";"))
    failures = []
    for server in servers:
        address = server.rpartition("://")[2]
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=_CONNECT_S):
                return
        except (OSError, ValueError) as exc:
            failures.append(f"{server}: {exc}")
    raise invalid(
        f"No bootstrap server of Kafka table {'.'.join(definition.name)} can be reached "
        f"({'; '.join(failures)}); check 'properties.bootstrap.servers'",
        kind="TimeoutException",
    )


@contextlib.contextmanager
def _admin(spark: SparkSession, definition: TableDefinition) -> Iterator[Any]:
    """Kafka's admin client, in the engine, with the table's client properties."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    props = jvm.java.util.Properties()
    for key, value in _client_options(definition).items():
        props.setProperty(key.removeprefix("kafka."), value)
    admin = jvm.org.apache.kafka.clients.admin.Admin.create(props)
    try:
        yield admin
    finally:
        admin.close()


def _seconds(spark: SparkSession) -> Any:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    return jvm.java.util.concurrent.TimeUnit.SECONDS


def _check_topics(spark: SparkSession, definition: TableDefinition) -> None:
    """Refuse to read listed topics the cluster does not have, as Flink's source does
    (Spark's error would be a raw ``UnknownTopicOrPartitionException``)."""
    topics = _topics(definition)
    if not topics:
        return
    try:
        with _admin(spark, definition) as admin:
            names = set(admin.listTopics().names().get(_ADMIN_S, _seconds(spark)))
    except Exception:  # no answer, no right to list: Spark's own read says why
        log.debug("Could not list the topics of %s", definition.name, exc_info=True)
        return
    missing = [t for t in topics if t not in names]
    if missing:
        raise invalid(
            f"Failed to get metadata for topics [{', '.join(missing)}]. Caused by: "
            "UnknownTopicOrPartitionException: This server does not host this topic-partition.",
            kind="RuntimeException",
        )


def _partition_count(spark: SparkSession, definition: TableDefinition, topic: str) -> int:
    """How many partitions ``topic`` has (for the ``fixed`` partitioner)."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    try:
        with _admin(spark, definition) as admin:
            described = admin.describeTopics(jvm.java.util.List.of(topic))
            info = described.allTopicNames().get(_ADMIN_S, _seconds(spark)).get(topic)
            return int(info.partitions().size())
    except Exception as exc:
        raise invalid(
            f"sink.partitioner 'fixed' needs the partitions of topic '{topic}': {exc}"
        ) from exc


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
    # Headers cost a conversion per record: read only where a column shows them.
    if _upsert(definition) or any(c.metadata == "headers" for c in definition.columns):
        out["includeHeaders"] = "true"
    # upsert-kafka reads its topics whole: the table is every key's last record.
    mode = opts.get(
        "scan.startup.mode", "earliest-offset" if _upsert(definition) else "group-offsets"
    )
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
) -> tuple[str | None, list[str]]:
    """How ``source`` (Kafka's key or value bytes) decodes into ``columns``: the
    expression parsing it once, to be named ``role`` (None: nothing to parse), and
    the columns' expressions over that; a column's field in the record is its
    name without ``prefix``."""
    from sparkgate.service.streaming.connectors import spark_type

    if not columns:
        return None, []
    text = f"CAST({source} AS STRING)"
    if fmt == "raw":
        [column] = columns
        kind = spark_type(column.type or "")
        value = source if kind == "BINARY" else text
        return None, [f"CAST({value} AS {kind}) AS {quote_identifier(column.name)}"]
    fields = [quote_identifier(c.name.removeprefix(prefix)) for c in columns]
    parsed = quote_identifier(f"__sparkgate_{role}")
    if fmt == "avro":
        schema_json = quote_string(avro_schema(columns, prefix))
        # Avro's int is a TINYINT's or SMALLINT's too: each column in its declared type.
        return f"from_avro({source}, {schema_json}, map('mode', 'FAILFAST'))", [
            f"CAST({parsed}.{field} AS {spark_type(c.type or '')}) AS {quote_identifier(c.name)}"
            for field, c in zip(fields, columns, strict=True)
        ]
    schema = ", ".join(
        f"{field} {spark_type(c.type or '')}" for field, c in zip(fields, columns, strict=True)
    )
    ignore = opts.get(f"{role}.{fmt}.ignore-parse-errors", opts.get(f"{fmt}.ignore-parse-errors"))
    # A record that does not parse sets the corrupt-record field: a failure naming
    # where the record is, or (ignore-parse-errors) NULL columns.
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT}
    schema += f", {_CORRUPT} STRING"
    kind = fmt.upper()
    if fmt == "json":
        if opts.get("json.timestamp-format.standard", "SQL").upper() == "SQL":
            options["timestampFormat"] = "yyyy-MM-dd HH:mm:ss[.SSSSSSSSS]"
        parse = f"from_json({text}, {quote_string(schema)}, {_map(options)})"
    else:
        options.update(_csv_options(opts))
        parse = f"from_csv({text}, {quote_string(schema)}, {_map(options)})"
    where = (
        "concat('topic ', topic, ', partition ', partition, ', offset ', offset, ': ', "
        f"{parsed}.{_CORRUPT})"
    )
    broken = f"raise_error(concat('Failed to deserialize {kind} record at ', {where}))"
    missing_fails = fmt == "json" and opts.get("json.fail-on-missing-field") == "true"
    out = []
    for field, column in zip(fields, columns, strict=True):
        value = f"{parsed}.{field}"
        if missing_fails:
            name = quote_string(column.name.removeprefix(prefix))
            lost = (
                f"raise_error(concat('Failed to deserialize JSON record at topic ', topic, "
                f"', partition ', partition, ', offset ', offset, ': Could not find field "
                f"with name ', {name}, '.'))"
            )
            value = (
                f"CASE WHEN {text} IS NOT NULL AND NOT array_contains("
                f"coalesce(json_object_keys({text}), array()), {name}) THEN {lost} ELSE {value} END"
            )
        if ignore != "true":
            value = f"CASE WHEN {parsed}.{_CORRUPT} IS NOT NULL THEN {broken} ELSE {value} END"
        out.append(f"{value} AS {quote_identifier(column.name)}")
    return parse, out


_CORRUPT = "__sparkgate_corrupt"


# Flink's Avro types of its SQL types (AvroSchemaConverter), by Spark's spelling.
_AVRO_TYPES: Mapping[str, object] = {
    "BOOLEAN": "boolean",
    "TINYINT": "int",
    "SMALLINT": "int",
    "INT": "int",
    "BIGINT": "long",
    "FLOAT": "float",
    "DOUBLE": "double",
    "STRING": "string",
    "BINARY": "bytes",
    "DATE": {"type": "int", "logicalType": "date"},
    "TIMESTAMP": {"type": "long", "logicalType": "timestamp-millis"},
}
# The namespace of Flink's records; a nested ROW's record is named after the path
# to it: ``record_<field>``, ``record_<field>_<field>`` (an ARRAY's element or a
# MAP's value is named as the ARRAY or MAP).
_AVRO_NAMESPACE = "org.apache.flink.avro.generated"


def avro_schema(columns: list[Column], prefix: str = "") -> str:
    """The Avro schema Flink's ``avro`` format derives from ``columns``: a record
    named ``record`` (in Flink's namespace), a nullable column or element, MAP value
    or ROW field as the union ``["null", type]`` (and a field ``"default": null``),
    an ``ARRAY`` an Avro array, a ``MAP`` (of string keys only) an Avro map, a
    ``ROW`` a record named after its path."""
    fields = [
        _avro_field(column, column.name.removeprefix(prefix), column.type or "", column.not_null)
        for column in columns
    ]
    return json.dumps(
        {"type": "record", "name": "record", "namespace": _AVRO_NAMESPACE, "fields": fields}
    )


def _avro_field(
    column: Column, name: str, flink_type: str, not_null: bool, record: str = "record"
) -> dict[str, object]:
    """Field ``name`` of the record named ``record``, of type ``flink_type``."""
    from sparkgate.sql.flink_types import nullability

    not_null = not_null or nullability(flink_type)[1]
    field: dict[str, object] = {
        "name": name,
        "type": _avro_type(column, flink_type, not_null, f"{record}_{name}"),
    }
    if not not_null:
        field["default"] = None
    return field


def _avro_type(column: Column, flink_type: str, not_null: bool, record: str) -> object:
    """Flink's Avro type of ``flink_type`` (a part of ``column``'s type); a ROW in
    it is the record named ``record``."""
    from sparkgate.service.streaming.connectors import spark_type
    from sparkgate.sql.flink_types import nested_type, nullability, row_field

    text, declared_not_null = nullability(flink_type)
    nested = nested_type(text)
    avro: object
    if nested is None:
        avro = _avro_scalar(column, text)
    elif nested[0] == "ARRAY" and len(nested[1]) == 1:
        avro = {"type": "array", "items": _avro_type(column, nested[1][0], False, record)}
    elif nested[0] == "MAP" and len(nested[1]) == 2:
        key, value = nested[1]
        if spark_type(key) != "STRING":
            raise invalid(
                "Avro format doesn't support non-string as key type of map. The key type "
                f"is: {key} (column {column.name}: {_declared(column)}); declare the map "
                "MAP<STRING, ...>"
            )
        avro = {"type": "map", "values": _avro_type(column, value, False, record)}
    elif nested[0] == "ROW":
        fields = [
            _avro_field(column, name, field_type, False, record)
            for name, field_type in map(row_field, nested[1])
        ]
        avro = {"type": "record", "name": record, "fields": fields}
    else:
        raise _no_avro_type(column, text)
    return avro if not_null or declared_not_null else ["null", avro]


def _avro_scalar(column: Column, flink_type: str) -> object:
    from sparkgate.service.streaming.connectors import spark_type

    kind = spark_type(flink_type)
    decimal = re.fullmatch(r"DECIMAL\((\d+),\s*(\d+)\)", kind)
    if decimal:
        precision, scale = int(decimal[1]), int(decimal[2])
        return {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}
    if kind in _AVRO_TYPES:
        return _AVRO_TYPES[kind]
    raise _no_avro_type(column, flink_type)


def _declared(column: Column) -> str:
    """``column``'s type as declared, on one line."""
    return " ".join((column.type or "").split())


def _no_avro_type(column: Column, flink_type: str) -> Exception:
    where = "" if flink_type == _declared(column) else f"{flink_type} in "
    return invalid(
        f"The 'avro' format has no type for {where}column {column.name} ({_declared(column)}); "
        "supported: "
        + ", ".join([*_AVRO_TYPES, "DECIMAL(p, s)", "ARRAY<T>", "MAP<STRING, V>", "ROW<...>"])
    )


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
    parses: list[str] = []
    if key_columns:
        # The key's fields are named without the prefix in the key's own encoding.
        parse, decoded = _decoded(opts["key.format"], "key", key_columns, opts, "key", prefix)
        exprs.update(zip((c.name for c in key_columns), decoded, strict=True))
        parses += [f"{parse} AS __sparkgate_key"] if parse else []
    parse, decoded = _decoded(_value_format(definition), "value", value_columns, opts, "value")
    for column, expr in zip(value_columns, decoded, strict=True):
        exprs.setdefault(column.name, expr)
    parses += [f"{parse} AS __sparkgate_value"] if parse else []
    physical = [exprs[c.name] for c in definition.physical]
    # Each record is parsed once, in a projection of its own: Spark does not inline
    # an expensive expression into the many columns that read it.
    raw = raw.selectExpr("*", *parses)
    kafka_fields = [
        f"topic AS {METADATA['topic']}",
        f"partition AS {METADATA['partition']}",
        f"offset AS {METADATA['offset']}",
        f"timestamp AS {METADATA['timestamp']}",
        "CASE timestampType WHEN 0 THEN 'CreateTime' WHEN 1 THEN 'LogAppendTime' "
        f"ELSE 'NoTimestampType' END AS {METADATA['timestamp-type']}",
        f"map_from_entries(coalesce(headers, array())) AS {METADATA['headers']}"
        if "headers" in raw.columns
        else f"CAST(NULL AS MAP<STRING, BINARY>) AS {METADATA['headers']}",
        f"CAST(NULL AS INT) AS {METADATA['leader-epoch']}",
    ]
    kind = [KIND_COLUMN] if KIND_COLUMN in raw.columns else []
    return raw.selectExpr(*physical, *kafka_fields, *kind)


def read(spark: SparkSession, definition: TableDefinition, *, stream: bool) -> DataFrame:
    """The table's records as a frame of its physical columns and Kafka's fields;
    for upsert-kafka its current rows (batch) or its changelog (streaming, each
    row's kind in :data:`KIND_COLUMN`)."""
    require(spark, definition)
    _check_reachable(definition)
    _check_topics(spark, definition)
    reader = spark.readStream if stream else spark.read
    options = _source_options(definition, not stream)
    empty = not stream and options.get("startingOffsets") == "latest"
    if empty:
        # Read from the end up to the end, as Flink's bounded read does: nothing.
        # Spark refuses to start a batch read at "latest"; the filter prunes the read.
        options["startingOffsets"] = "earliest"
    raw = reader.format("kafka").options(**options).load()
    if empty:
        raw = raw.where("false")
    if _upsert(definition):
        raw = _changelog(raw) if stream else _last_per_key(raw)
    return _frame(raw, definition)


def _last_per_key(raw: DataFrame) -> DataFrame:
    """Each key's last record, unless it is a tombstone: the table as it is now."""
    # A key's records are in one partition (the producer partitions by key), in the
    # order of their offsets there; a record's timestamp may be any its producer set.
    last = raw.selectExpr("*", "row_number() OVER (PARTITION BY key ORDER BY offset DESC) AS __n")
    return last.where("__n = 1 AND value IS NOT NULL").drop("__n")


# Spark's Kafka source's columns, and the part of a record a key's state keeps.
_RAW_FIELDS = (
    ("key", "BINARY"),
    ("value", "BINARY"),
    ("topic", "STRING"),
    ("partition", "INT"),
    ("offset", "BIGINT"),
    ("timestamp", "TIMESTAMP"),
    ("timestampType", "INT"),
    ("headers", "ARRAY<STRUCT<key: STRING, value: BINARY>>"),
)
_STATE_FIELDS = ("value", "topic", "partition", "offset", "timestamp", "timestampType")


def _changelog(raw: DataFrame) -> DataFrame:
    """The upsert stream as Flink's normalized changelog, per key in Spark's state."""
    import pandas as pd
    from pyspark.sql.streaming.state import GroupStateTimeout

    kinds = {kind: code for code, kind in enumerate(("+I", "-U", "+U", "-D"))}
    columns = [*(f for f, _ in _RAW_FIELDS), KIND_COLUMN]
    out_schema = ", ".join([*(f"{f} {t}" for f, t in _RAW_FIELDS), f"{KIND_COLUMN} TINYINT"])
    state_schema = ", ".join(f"{f} {t}" for f, t in _RAW_FIELDS if f in _STATE_FIELDS)

    def normalize(key: tuple[Any, ...], batches: Iterator[Any], state: Any) -> Iterator[Any]:
        last = state.get if state.exists else None
        out: list[tuple[Any, ...]] = []
        records = pd.concat(list(batches)).sort_values("offset")
        for record in records.itertuples(index=False):
            now = (record.value, *(getattr(record, f) for f in _STATE_FIELDS[1:]))
            if record.value is None:
                if last is not None:  # a tombstone deletes the key's last row
                    out.append((key[0], *last, None, kinds["-D"]))
                last = None
            elif last is None:
                out.append((key[0], *now, record.headers, kinds["+I"]))
                last = now
            elif last[0] != record.value:
                out.append((key[0], *last, None, kinds["-U"]))
                out.append((key[0], *now, record.headers, kinds["+U"]))
                last = now
            else:
                last = now
        if last is None:
            state.remove()
        else:
            state.update(last)
        yield pd.DataFrame(out, columns=columns)

    return raw.groupBy("key").applyInPandasWithState(
        normalize,
        out_schema,
        state_schema,
        "append",
        GroupStateTimeout.NoTimeout,
    )


def bounded_stream(definition: TableDefinition) -> bool:
    """Whether a streaming read ends (a bounded mode other than ``unbounded``)."""
    return definition.options.get("scan.bounded.mode", "unbounded") != "unbounded"


# -- writing -----------------------------------------------------------------------


def _encoded(df: DataFrame, definition: TableDefinition) -> DataFrame:
    """``df``'s rows as Kafka records: ``key`` and ``value`` in the table's formats;
    into upsert-kafka a changelog's deletions are tombstones (no value) and its
    update-befores are dropped (the update-after replaces the row)."""
    changelog = KIND_COLUMN in df.columns
    if changelog and not _upsert(definition):
        raise invalid(
            f"Table sink '{'.'.join(definition.name)}' doesn't support consuming update and "
            "delete changes: the 'kafka' connector appends; write an updating query into "
            "an 'upsert-kafka' table"
        )
    opts = definition.options
    names = [c.name for c in written(definition)]
    kind = [KIND_COLUMN] if changelog else []  # a changelog's kind is its last column
    renamed = df.toDF(*names, *kind) if len(df.columns) == len(names) + len(kind) else df
    value = _encode(_value_format(definition), _value_columns(definition), opts)
    if changelog:
        renamed = renamed.where(f"{KIND_COLUMN} <> 1")
        value = f"CASE WHEN {KIND_COLUMN} = 3 THEN NULL ELSE {value} END"
    exprs = [f"{value} AS value"]
    headers = [c for c in written(definition) if c.metadata == "headers"]
    if headers:
        entries = f"CAST({quote_identifier(headers[0].name)} AS MAP<STRING, BINARY>)"
        exprs.append(f"map_entries({entries}) AS headers")
    key_columns = _key_columns(definition)
    if key_columns:
        prefix = opts.get("key.fields-prefix", "")
        exprs.append(f"{_encode(opts['key.format'], key_columns, opts, prefix)} AS key")
    if opts.get("sink.partitioner") == "fixed":
        # Flink's fixed partitioner: each writing task into one partition.
        [topic] = _topics(definition)
        count = _partition_count(df.sparkSession, definition, topic)
        exprs.append(f"pmod(spark_partition_id(), {count}) AS partition")
    return renamed.selectExpr(*exprs)


def _encode(fmt: str, columns: list[Column], opts: Mapping[str, str], prefix: str = "") -> str:
    if fmt == "raw":
        [column] = columns
        return quote_identifier(column.name)
    fields = ", ".join(
        f"{quote_string(c.name.removeprefix(prefix))}, {quote_identifier(c.name)}" for c in columns
    )
    if fmt == "avro":
        return f"to_avro(named_struct({fields}), {quote_string(avro_schema(columns, prefix))})"
    if fmt == "json":
        options = {"ignoreNullFields": "false"}
        if opts.get("json.timestamp-format.standard", "SQL").upper() == "SQL":
            options["timestampFormat"] = "yyyy-MM-dd HH:mm:ss.SSS"
        return f"to_json(named_struct({fields}), {_map(options)})"
    return f"to_csv(named_struct({fields}), {_map(_csv_options(opts))})"


def _csv_options(opts: Mapping[str, str]) -> dict[str, str]:
    """Flink's csv options as Spark's, for reading and writing."""
    spark_names = {
        "csv.field-delimiter": "sep",
        "csv.quote-character": "quote",
        "csv.null-literal": "nullValue",
    }
    return {spark_names[k]: v for k, v in opts.items() if k in spark_names}


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
    require(df.sparkSession, definition)
    _check_reachable(definition)
    _send(df, definition)


def _send(df: DataFrame, definition: TableDefinition) -> None:
    _encoded(df, definition).write.format("kafka").options(**_sink_options(definition)).save()


def stream_writer(df: DataFrame, definition: TableDefinition) -> DataStreamWriter:
    """A stream writer appending ``df``'s rows to the topic; into upsert-kafka each
    micro-batch's changes (an updating query's new rows) as upserts."""
    require(df.sparkSession, definition)
    _check_reachable(definition)
    if _upsert(definition):
        return df.writeStream.foreachBatch(lambda batch, _id: _send(batch, definition))
    encoded = _encoded(df, definition)
    return encoded.writeStream.format("kafka").options(**_sink_options(definition))
