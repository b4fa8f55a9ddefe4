"""The logical-type model against Flink's wire JSON and summary strings."""

from __future__ import annotations

__all__: list[str] = []

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from sparkgate.api.types import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    NULL,
    SMALLINT,
    STRING,
    TINYINT,
    ArrayType,
    BinaryType,
    CharType,
    Column,
    DayTimeIntervalType,
    DayTimeResolution,
    DecimalType,
    LocalZonedTimestampType,
    LogicalType,
    MapType,
    MultisetType,
    RawType,
    ResultSchema,
    RowField,
    RowType,
    SimpleType,
    TimestampType,
    TimeType,
    TypeRoot,
    VarBinaryType,
    VarCharType,
    YearMonthIntervalType,
    YearMonthResolution,
    from_json,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "flink"

# The schema of Flink's ResultInfo test row, written with our model.
REFERENCE_SCHEMA = ResultSchema.of(
    ("bool", BOOLEAN),
    ("tinyint", TINYINT),
    ("smallint", SMALLINT),
    ("int", INT),
    ("bigint", BIGINT),
    ("float", FLOAT),
    ("name", STRING),
    ("bytes", BYTES),
    ("decimal", DecimalType(9, 6)),
    ("doubles", ArrayType(DOUBLE)),
    ("date", DATE),
    ("time", TimeType(0)),
    ("timestamp3", TimestampType(3)),
    ("timestamp9", TimestampType(9)),
    ("timestampWithLocalZone", LocalZonedTimestampType(9)),
    ("map", MapType(STRING, BIGINT)),
    ("multiSet", MultisetType(STRING)),
    ("map2map", MapType(STRING, MapType(STRING, INT))),
    ("dayTimeInterval", DayTimeIntervalType(DayTimeResolution.DAY_TO_SECOND, 3, 3)),
    ("yearMonthInterval", YearMonthIntervalType(YearMonthResolution.YEAR_TO_MONTH, 3)),
)


def _reference(name: str) -> tuple[str, dict[str, Any]]:
    text = (DATA / name).read_text(encoding="utf-8").strip()
    return text, json.loads(text)


@pytest.mark.parametrize(
    "name", ["result_info_json_format.txt", "result_info_plain_text_format.txt"]
)
def test_reference_columns_byte_for_byte(name: str) -> None:
    text, body = _reference(name)
    assert REFERENCE_SCHEMA.to_json() == body["columns"]
    # Key order matters on the wire: compare the serialised bytes too.
    columns_json = orjson.dumps(REFERENCE_SCHEMA.to_json()).decode()
    assert text.startswith('{"columns":' + columns_json + ',"rowFormat"')


def test_reference_columns_parse_back() -> None:
    _, body = _reference("result_info_json_format.txt")
    assert ResultSchema.from_json(body["columns"]) == REFERENCE_SCHEMA


@pytest.mark.parametrize(
    ("column", "wire"),
    [
        # From the JDBC-driver transcript.
        (
            Column("a", INT.not_null()),
            '{"name":"a","logicalType":{"type":"INTEGER","nullable":false},"comment":null}',
        ),
        (
            Column("b", VarCharType(5, nullable=False)),
            '{"name":"b","logicalType":{"type":"VARCHAR","nullable":false,"length":5},'
            '"comment":null}',
        ),
        (
            Column("c", DecimalType(5, 2)),
            '{"name":"c","logicalType":{"type":"DECIMAL","nullable":true,"precision":5,'
            '"scale":2},"comment":null}',
        ),
        (
            Column("result", STRING),
            '{"name":"result","logicalType":{"type":"VARCHAR","nullable":true,'
            '"length":2147483647},"comment":null}',
        ),
        (
            Column("x", NULL, "a comment"),
            '{"name":"x","logicalType":{"type":"NULL"},"comment":"a comment"}',
        ),
    ],
)
def test_column_wire_json(column: Column, wire: str) -> None:
    assert orjson.dumps(column.to_json()).decode() == wire


def test_row_type_json_follows_flink_serializer() -> None:
    row = RowType((RowField("a", INT), RowField("b", STRING.not_null(), "the b")), nullable=False)
    assert orjson.dumps(row.to_json()).decode() == (
        '{"type":"ROW","nullable":false,"fields":['
        '{"name":"a","fieldType":{"type":"INTEGER","nullable":true}},'
        '{"name":"b","fieldType":{"type":"VARCHAR","nullable":false,"length":2147483647},'
        '"description":"the b"}]}'
    )


@pytest.mark.parametrize(
    ("logical_type", "summary"),
    [
        (BOOLEAN, "BOOLEAN"),
        (INT, "INT"),
        (INT.not_null(), "INT NOT NULL"),
        (BIGINT, "BIGINT"),
        (VarCharType(5, nullable=False), "VARCHAR(5) NOT NULL"),
        (STRING, "STRING"),
        (CharType(3), "CHAR(3)"),
        (BYTES, "BYTES"),
        (BinaryType(4), "BINARY(4)"),
        (VarBinaryType(8), "VARBINARY(8)"),
        (DecimalType(9, 6), "DECIMAL(9, 6)"),
        (TimeType(0), "TIME(0)"),
        (TimestampType(3), "TIMESTAMP(3)"),
        (LocalZonedTimestampType(6), "TIMESTAMP_LTZ(6)"),
        (ArrayType(DOUBLE), "ARRAY<DOUBLE>"),
        (ArrayType(INT.not_null(), nullable=False), "ARRAY<INT NOT NULL> NOT NULL"),
        (MultisetType(STRING), "MULTISET<STRING>"),
        (MapType(STRING.not_null(), BIGINT), "MAP<STRING NOT NULL, BIGINT>"),
        (
            RowType((RowField("a", INT), RowField("b`c", STRING, "it's"))),
            "ROW<`a` INT, `b``c` STRING 'it''s'>",
        ),
        (NULL, "NULL"),
        (
            DayTimeIntervalType(DayTimeResolution.DAY_TO_SECOND, 2, 6),
            "INTERVAL DAY(2) TO SECOND(6)",
        ),
        (DayTimeIntervalType(DayTimeResolution.HOUR), "INTERVAL HOUR"),
        (
            DayTimeIntervalType(DayTimeResolution.MINUTE_TO_SECOND, 2, 3),
            "INTERVAL MINUTE TO SECOND(3)",
        ),
        (YearMonthIntervalType(YearMonthResolution.YEAR_TO_MONTH, 4), "INTERVAL YEAR(4) TO MONTH"),
        (YearMonthIntervalType(YearMonthResolution.MONTH), "INTERVAL MONTH"),
        (RawType("java.lang.Object", "AAA"), "RAW('java.lang.Object', ?)"),
    ],
)
def test_summary(logical_type: LogicalType, summary: str) -> None:
    assert logical_type.summary() == summary
    assert str(logical_type) == summary


ROUND_TRIP_TYPES: list[LogicalType] = [
    BOOLEAN,
    TINYINT.not_null(),
    SMALLINT,
    INT,
    BIGINT,
    FLOAT,
    DOUBLE,
    DATE,
    NULL,
    STRING,
    BYTES,
    CharType(10, nullable=False),
    BinaryType(16),
    DecimalType(38, 10),
    TimeType(3),
    TimestampType(9, nullable=False),
    LocalZonedTimestampType(3),
    *(DayTimeIntervalType(r, 6, 6) for r in DayTimeResolution),
    *(YearMonthIntervalType(r, 4) for r in YearMonthResolution),
    ArrayType(ArrayType(INT.not_null())),
    MultisetType(STRING),
    MapType(STRING.not_null(), MapType(STRING, INT), nullable=False),
    RowType((RowField("a", INT), RowField("nested", RowType((RowField("x", DATE, "d"),))))),
    RowType(()),
    RawType("org.example.Thing", "c2VyaWFsaXplcg=="),
]


@pytest.mark.parametrize("logical_type", ROUND_TRIP_TYPES, ids=lambda t: t.summary())
def test_from_json_round_trip(logical_type: LogicalType) -> None:
    wire = orjson.loads(orjson.dumps(logical_type.to_json()))
    assert from_json(wire) == logical_type
    assert from_json(wire).to_json() == wire


def test_json_key_order_is_type_nullable_then_parameters() -> None:
    keys = list(DayTimeIntervalType(DayTimeResolution.DAY_TO_SECOND, 3, 3).to_json())
    assert keys == ["type", "nullable", "precision", "fractionalPrecision", "resolution"]
    assert list(MapType(STRING, INT).to_json()) == ["type", "nullable", "keyType", "valueType"]


def test_result_schema_helpers() -> None:
    schema = ResultSchema.of(("result", STRING), Column("n", INT, "count"))
    assert len(schema) == 2
    assert schema.names == ("result", "n")
    assert schema.types == (STRING, INT)
    assert [c.name for c in schema] == ["result", "n"]
    assert schema[1].comment == "count"
    assert ResultSchema.from_json(schema.to_json()) == schema
    assert hash(schema) == hash(ResultSchema.of(("result", STRING), Column("n", INT, "count")))


@pytest.mark.parametrize(
    "build",
    [
        lambda: DecimalType(0, 0),
        lambda: DecimalType(5, 6),
        lambda: TimestampType(10),
        lambda: VarCharType(-1),
        lambda: DayTimeIntervalType(DayTimeResolution.DAY, 7, 6),
        lambda: YearMonthIntervalType(YearMonthResolution.YEAR, 5),
        lambda: SimpleType(TypeRoot.DECIMAL),
        lambda: SimpleType(TypeRoot.NULL, nullable=False),
    ],
)
def test_invalid_types_are_rejected(build: Any) -> None:
    with pytest.raises(ValueError):
        build()


@pytest.mark.parametrize("data", [{}, {"type": "NOPE"}, {"nullable": True}])
def test_from_json_rejects_unknown(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        from_json(data)


def test_nullability_copy_keeps_parameters() -> None:
    t = DecimalType(9, 6)
    assert t.not_null() == DecimalType(9, 6, nullable=False)
    assert t.with_nullable(True) is t
