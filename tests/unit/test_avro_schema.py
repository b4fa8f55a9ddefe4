"""The Avro schema the ``avro`` format derives from a Kafka table's columns, against
the schema Flink's ``AvroSchemaConverter.convertToSchema`` derives (written out
here by hand): nested ARRAY, MAP and ROW types included."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sparkgate.api.errors import ExecutionError
from sparkgate.service.streaming.connectors import nested_type, nullability, row_field, spark_type
from sparkgate.service.streaming.ddl import Column
from sparkgate.service.streaming.kafka import avro_schema

_DATE = {"type": "int", "logicalType": "date"}
_MILLIS = {"type": "long", "logicalType": "timestamp-millis"}


def _decimal(precision: int, scale: int) -> dict[str, Any]:
    return {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}


def _nullable(name: str, avro: object) -> dict[str, Any]:
    """A nullable field: the union with null first, and null its default."""
    return {"name": name, "type": ["null", avro], "default": None}


def _schema(*fields: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "record",
        "name": "record",
        "namespace": "org.apache.flink.avro.generated",
        "fields": list(fields),
    }


def _derived(*columns: Column, prefix: str = "") -> Any:
    return json.loads(avro_schema(list(columns), prefix))


def test_top_level_columns_keep_their_layout() -> None:
    assert _derived(
        Column("id", type="BIGINT", not_null=True),
        Column("name", type="VARCHAR(20)"),
        Column("amount", type="DECIMAL(10, 2)"),
        Column("at", type="TIMESTAMP(3)"),
        Column("day", type="DATE"),
        Column("flag", type="BOOLEAN", not_null=True),
    ) == _schema(
        {"name": "id", "type": "long"},
        _nullable("name", "string"),
        _nullable("amount", _decimal(10, 2)),
        _nullable("at", _MILLIS),
        _nullable("day", _DATE),
        {"name": "flag", "type": "boolean"},
    )


def test_arrays_maps_and_rows_are_flinks_avro_types() -> None:
    assert _derived(
        Column("tags", type="ARRAY<STRING>"),
        Column("ids", type="ARRAY<BIGINT NOT NULL>", not_null=True),
        Column("scores", type="MAP<STRING, INT>"),
        Column("sizes", type="MAP<VARCHAR(10), SMALLINT NOT NULL> NOT NULL"),
        Column("owner", type="ROW<name STRING NOT NULL, born DATE, at TIMESTAMP(3)>"),
    ) == _schema(
        _nullable("tags", {"type": "array", "items": ["null", "string"]}),
        {"name": "ids", "type": {"type": "array", "items": "long"}},
        _nullable("scores", {"type": "map", "values": ["null", "int"]}),
        {"name": "sizes", "type": {"type": "map", "values": "int"}},
        _nullable(
            "owner",
            {
                "type": "record",
                "name": "record_owner",
                "fields": [
                    {"name": "name", "type": "string"},
                    _nullable("born", _DATE),
                    _nullable("at", _MILLIS),
                ],
            },
        ),
    )


def test_nested_records_are_named_after_their_path() -> None:
    # A ROW's record is named record_<field>, a ROW inside it record_<field>_<field>;
    # an ARRAY's element and a MAP's value are named as the ARRAY or MAP itself.
    lines = Column(
        "lines",
        type="ARRAY<ROW<sku STRING, price DECIMAL(10, 2) NOT NULL, "
        "extra MAP<STRING, ROW<note STRING, at TIMESTAMP(3) NOT NULL>>>>",
    )
    order = Column("order", type="ROW(`ship_to` ROW<city STRING> NOT NULL 'where', day DATE)")
    line = {
        "type": "record",
        "name": "record_lines",
        "fields": [
            _nullable("sku", "string"),
            {"name": "price", "type": _decimal(10, 2)},
            _nullable(
                "extra",
                {
                    "type": "map",
                    "values": [
                        "null",
                        {
                            "type": "record",
                            "name": "record_lines_extra",
                            "fields": [
                                _nullable("note", "string"),
                                {"name": "at", "type": _MILLIS},
                            ],
                        },
                    ],
                },
            ),
        ],
    }
    ship_to = {
        "type": "record",
        "name": "record_order_ship_to",
        "fields": [_nullable("city", "string")],
    }
    assert _derived(lines, order) == _schema(
        _nullable("lines", {"type": "array", "items": ["null", line]}),
        _nullable(
            "order",
            {
                "type": "record",
                "name": "record_order",
                "fields": [{"name": "ship_to", "type": ship_to}, _nullable("day", _DATE)],
            },
        ),
    )


def test_a_key_prefix_is_not_part_of_a_nested_records_name() -> None:
    derived = _derived(
        Column("k_id", type="INT", not_null=True),
        Column("k_where", type="ROW<city STRING>"),
        prefix="k_",
    )
    assert derived == _schema(
        {"name": "id", "type": "int"},
        _nullable(
            "where",
            {"type": "record", "name": "record_where", "fields": [_nullable("city", "string")]},
        ),
    )


@pytest.mark.parametrize("key", ["INT", "BIGINT NOT NULL", "BYTES", "ROW<a STRING>"])
def test_a_map_key_other_than_a_string_is_refused_as_flink_refuses_it(key: str) -> None:
    column = Column("m", type=f"ARRAY<MAP<{key}, STRING>>")
    with pytest.raises(ExecutionError) as info:
        avro_schema([column])
    message = str(info.value)
    assert "Avro format doesn't support non-string as key type of map." in message
    assert f"The key type is: {key}" in message
    assert "column m" in message


@pytest.mark.parametrize("key", ["STRING", "VARCHAR(5)", "CHAR(2) NOT NULL"])
def test_string_map_keys_are_accepted(key: str) -> None:
    derived = _derived(Column("m", type=f"MAP<{key}, BOOLEAN>", not_null=True))
    assert derived["fields"] == [
        {"name": "m", "type": {"type": "map", "values": ["null", "boolean"]}}
    ]


def test_a_nested_type_avro_has_none_for_is_named_with_its_column() -> None:
    with pytest.raises(ExecutionError, match=r"no type for TIME in column t \(ROW<a TIME>\)"):
        avro_schema([Column("t", type="ROW<a TIME>")])


@pytest.mark.parametrize(
    ("flink", "spark"),
    [
        ("ARRAY<INT NOT NULL>", "ARRAY<INT>"),
        ("MAP<STRING NOT NULL, ARRAY<BIGINT> NOT NULL>", "MAP<STRING, ARRAY<BIGINT>>"),
        ("ROW<a INT NOT NULL, b STRING 'the b'>", "STRUCT<a: INT, b: STRING>"),
        ("ROW(a VARCHAR(3), `b c` BYTES NULL)", "STRUCT<a: STRING, `b c`: BINARY>"),
        ("ROW<>", "STRUCT<>"),
        ("ARRAY<ROW<x TIMESTAMP(3)>> NOT NULL", "ARRAY<STRUCT<x: TIMESTAMP>>"),
    ],
)
def test_nested_types_in_spark_are_nullable_and_without_descriptions(
    flink: str, spark: str
) -> None:
    assert spark_type(flink) == spark


def test_the_type_helpers_split_a_nested_type() -> None:
    assert nullability("ARRAY<INT NOT NULL>  not  null") == ("ARRAY<INT NOT NULL>", True)
    assert nullability("INT NULL") == ("INT", False)
    assert nullability("DECIMAL(10, 2)") == ("DECIMAL(10, 2)", False)
    assert nested_type("MAP<STRING, ROW<a INT, b INT>>") == ("MAP", ["STRING", "ROW<a INT, b INT>"])
    assert nested_type("ROW(a INT)") == ("ROW", ["a INT"])
    assert nested_type("ARRAY(INT)") is None
    assert nested_type("DECIMAL(10, 2)") is None
    assert row_field("`it``s` INT NOT NULL 'it''s a comment'") == ("it`s", "INT NOT NULL")
    assert row_field("a ROW<b INT 'x'>") == ("a", "ROW<b INT 'x'>")
