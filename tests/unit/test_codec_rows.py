"""JSON and PLAIN_TEXT row encoding of hand-built Arrow batches."""

from __future__ import annotations

__all__: list[str] = []

import base64
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pytest

from sparkgate.api.results import RowKind
from sparkgate.api.types import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    NULL,
    STRING,
    ArrayType,
    DayTimeIntervalType,
    DayTimeResolution,
    DecimalType,
    LocalZonedTimestampType,
    LogicalType,
    MapType,
    MultisetType,
    ResultSchema,
    RowField,
    RowType,
    TimestampType,
    TimeType,
    YearMonthIntervalType,
)
from sparkgate.codec.rows import (
    encode_json_rows,
    encode_plain_text_rows,
    json_column,
    plain_text_column,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "flink"

# 1990-10-14T12:12:43.123456789Z in nanoseconds.
TS9 = (
    int(dt.datetime(1990, 10, 14, 12, 12, 43, tzinfo=dt.timezone.utc).timestamp()) * 1_000_000_000
    + 123_456_789
)


def _reference(name: str) -> tuple[str, dict[str, Any]]:
    text = (DATA / name).read_text(encoding="utf-8").strip()
    return text, json.loads(text)


def _reference_batch(binary: bytes) -> tuple[pa.RecordBatch, ResultSchema]:
    _, body = _reference("result_info_json_format.txt")
    schema = ResultSchema.from_json(body["columns"])
    arrays = [
        pa.array([True]),
        pa.array([99], pa.int8()),
        pa.array([128], pa.int16()),
        pa.array([45536], pa.int32()),
        pa.array([1238123899121], pa.int64()),
        pa.array([33.333], pa.float32()),
        pa.array(["asdlkjasjkdla998y1122"]),
        pa.array([binary]),
        pa.array([Decimal("123.456789")], pa.decimal128(9, 6)),
        pa.array([[1.1, 2.2, 3.3]]),
        pa.array([dt.date(1990, 10, 14)]),
        pa.array([dt.time(12, 12, 43)], pa.time32("s")),
        pa.array([dt.datetime(1990, 10, 14, 12, 12, 43, 123000)], pa.timestamp("ms")),
        pa.array([TS9], pa.int64()).cast(pa.timestamp("ns")),
        pa.array([TS9], pa.int64()).cast(pa.timestamp("ns", tz="UTC")),
        pa.array([[("element", 123)]], pa.map_(pa.string(), pa.int64())),
        pa.array([[("element", 2)]], pa.map_(pa.string(), pa.int32())),
        pa.array(
            [[("inner_map", [("key", 234)])]],
            pa.map_(pa.string(), pa.map_(pa.string(), pa.int32())),
        ),
        pa.array([123], pa.int64()),  # day-time interval: milliseconds
        pa.array([123], pa.int32()),  # year-month interval: months
    ]
    return pa.RecordBatch.from_arrays(arrays, names=list(schema.names)), schema


def test_json_rows_match_flink_reference_byte_for_byte() -> None:
    text, body = _reference("result_info_json_format.txt")
    batch, schema = _reference_batch(base64.b64decode(body["data"][0]["fields"][7]))
    data = encode_json_rows(batch, schema)
    wire = orjson.dumps({"columns": schema.to_json(), "rowFormat": "JSON", "data": data})
    assert wire.decode() == text


def test_plain_text_rows_match_flink_reference() -> None:
    _, body = _reference("result_info_plain_text_format.txt")
    expected = body["data"][0]["fields"]
    binary = bytes.fromhex(expected[7][2:-1])
    batch, schema = _reference_batch(binary)
    [row] = encode_plain_text_rows(batch, schema)
    assert row["kind"] == "INSERT"
    # The reference's interval strings ("123") are hand-written test data; a real
    # Flink CAST prints intervals as below (DateTimeUtils.formatInterval*).
    assert row["fields"][:18] == expected[:18]
    assert row["fields"][18:] == ["+0 00:00:00.123", "+10-03"]


JSON_CASES: list[tuple[str, pa.Array, LogicalType, list[Any], list[str | None]]] = [
    ("bool", pa.array([True, False, None]), BOOLEAN, [True, False, None], ["TRUE", "FALSE", None]),
    ("int", pa.array([1, -2, None], pa.int32()), INT, [1, -2, None], ["1", "-2", None]),
    (
        "bigint",
        pa.array([2**63 - 1, None], pa.int64()),
        BIGINT,
        [2**63 - 1, None],
        [str(2**63 - 1), None],
    ),
    (
        "float",
        pa.array([33.333, 1e10, 1e-5, 1.0, None], pa.float32()),
        FLOAT,
        [33.333, 1e10, 1e-5, 1.0, None],
        ["33.333", "1.0E10", "1.0E-5", "1.0", None],
    ),
    (
        "double",
        pa.array([1.1, 123.0, 1e7, 9999999.0, 0.001, 0.0, -0.0, 1.5e-7, -2.5e300]),
        DOUBLE,
        [1.1, 123.0, 1e7, 9999999.0, 0.001, 0.0, -0.0, 1.5e-7, -2.5e300],
        ["1.1", "123.0", "1.0E7", "9999999.0", "0.001", "0.0", "-0.0", "1.5E-7", "-2.5E300"],
    ),
    (
        "non-finite",
        pa.array([float("nan"), float("inf"), float("-inf"), None]),
        DOUBLE,
        ["NaN", "Infinity", "-Infinity", None],
        ["NaN", "Infinity", "-Infinity", None],
    ),
    ("string", pa.array(["a", "", None]), STRING, ["a", "", None], ["a", "", None]),
    (
        "binary",
        pa.array([b"\xca\xfe", b"", None]),
        BYTES,
        ["yv4=", "", None],
        ["x'cafe'", "x''", None],
    ),
    (
        "date",
        pa.array([dt.date(1990, 10, 14), dt.date(1, 1, 1), None]),
        DATE,
        ["1990-10-14", "0001-01-01", None],
        ["1990-10-14", "0001-01-01", None],
    ),
    (
        "time(6)",
        pa.array([dt.time(12, 12, 43, 123000), dt.time(1, 2, 3), None], pa.time64("ns")),
        TimeType(6),
        ["12:12:43.123", "01:02:03", None],
        ["12:12:43.123000", "01:02:03.000000", None],
    ),
    (
        "time(0)",
        pa.array([dt.time(12, 12, 43, 123000)], pa.time64("us")),
        TimeType(0),
        ["12:12:43.123"],
        ["12:12:43"],
    ),
    (
        "timestamp(6)",
        pa.array(
            [
                dt.datetime(1990, 10, 14, 12, 12, 43, 123400),
                dt.datetime(1990, 10, 14, 12, 10),
                None,
            ],
            pa.timestamp("us"),
        ),
        TimestampType(6),
        ["1990-10-14T12:12:43.1234", "1990-10-14T12:10:00", None],
        ["1990-10-14 12:12:43.123400", "1990-10-14 12:10:00.000000", None],
    ),
    (
        "timestamp(3) from us",
        pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 100000)], pa.timestamp("us")),
        TimestampType(3),
        ["2024-01-02T03:04:05.1"],
        ["2024-01-02 03:04:05.100"],
    ),
    (
        "timestamp_ltz",
        pa.array(
            [dt.datetime(1990, 10, 14, 12, 12, 43, 500000), None], pa.timestamp("us", tz="UTC")
        ),
        LocalZonedTimestampType(6),
        ["1990-10-14T12:12:43.5Z", None],
        ["1990-10-14 12:12:43.500000", None],
    ),
    (
        "decimal",
        pa.array(
            [Decimal("1.50"), Decimal("100.00"), Decimal("0.00"), Decimal("-0.10"), None],
            pa.decimal128(5, 2),
        ),
        DecimalType(5, 2),
        [Decimal("1.5"), Decimal("100"), Decimal("0"), Decimal("-0.1"), None],
        ["1.50", "100.00", "0.00", "-0.10", None],
    ),
    (
        "day-time interval",
        pa.array(
            [dt.timedelta(days=1, hours=2, minutes=3, seconds=4, milliseconds=500), None],
            pa.duration("us"),
        ),
        DayTimeIntervalType(DayTimeResolution.DAY_TO_SECOND),
        [93784500, None],
        ["+1 02:03:04.500", None],
    ),
    (
        "negative day-time interval",
        pa.array([dt.timedelta(hours=-3)], pa.duration("us")),
        DayTimeIntervalType(DayTimeResolution.HOUR),
        [-10800000],
        ["-0 03:00:00.000"],
    ),
    (
        "year-month interval",
        pa.array([14, -14, 0, None], pa.int32()),
        YearMonthIntervalType(),
        [14, -14, 0, None],
        ["+1-02", "-1-02", "+0-00", None],
    ),
    ("null type", pa.nulls(2), NULL, [None, None], [None, None]),
    (
        "array",
        pa.array([[1.1, None], [], None]),
        ArrayType(DOUBLE),
        [[1.1, None], [], None],
        ["[1.1, NULL]", "[]", None],
    ),
    (
        "array of strings and binary",
        pa.array([["a", None, "b c"]]),
        ArrayType(STRING),
        [["a", None, "b c"]],
        ["[a, NULL, b c]"],
    ),
    (
        "map",
        pa.array([[("k", 1), ("z", None)], None, []], pa.map_(pa.string(), pa.int64())),
        MapType(STRING, BIGINT),
        [{"k": 1, "z": None}, None, {}],
        ["{k=1, z=NULL}", None, "{}"],
    ),
    (
        "map with int keys",
        pa.array([[(1, "a"), (2, "b")]], pa.map_(pa.int32(), pa.string())),
        MapType(INT, STRING),
        [{"1": "a", "2": "b"}],
        ["{1=a, 2=b}"],
    ),
    (
        "multiset",
        pa.array([[("x", 2)]], pa.map_(pa.string(), pa.int32())),
        MultisetType(STRING),
        [{"x": 2}],
        ["{x=2}"],
    ),
    (
        "row",
        pa.array(
            [{"a": 1, "b": "x"}, {"a": None, "b": "y"}, None],
            pa.struct([("a", pa.int32()), ("b", pa.string())]),
        ),
        RowType((RowField("a", INT), RowField("b", STRING))),
        [{"a": 1, "b": "x"}, {"a": None, "b": "y"}, None],
        ["(1, x)", "(NULL, y)", None],
    ),
    (
        "array of rows with binary",
        pa.array([[{"x": b"\x01"}, None]], pa.list_(pa.struct([("x", pa.binary())]))),
        ArrayType(RowType((RowField("x", BYTES),))),
        [[{"x": "AQ=="}, None]],
        ["[(x'01'), NULL]"],
    ),
    (
        "map of arrays of timestamps",
        pa.array(
            [[("k", [dt.datetime(2024, 1, 1, 0, 0, 1)])]],
            pa.map_(pa.string(), pa.list_(pa.timestamp("us"))),
        ),
        MapType(STRING, ArrayType(TimestampType(6))),
        [{"k": ["2024-01-01T00:00:01"]}],
        ["{k=[2024-01-01 00:00:01.000000]}"],
    ),
]


def _decimals_as_json(values: list[Any]) -> list[Any]:
    # orjson.Fragment values only become comparable once serialised.
    return json.loads(orjson.dumps(values), parse_float=Decimal, parse_int=Decimal)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("array", "logical_type", "json_values", "text_values"),
    [case[1:] for case in JSON_CASES],
    ids=[case[0] for case in JSON_CASES],
)
def test_column_values(
    array: pa.Array,
    logical_type: LogicalType,
    json_values: list[Any],
    text_values: list[str | None],
) -> None:
    encoded = json_column(array, logical_type)
    if isinstance(logical_type, DecimalType):
        assert _decimals_as_json(encoded) == json_values
    else:
        assert orjson.loads(orjson.dumps(encoded)) == json_values
    assert plain_text_column(array, logical_type) == text_values


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        (Decimal("1.50"), b"1.5"),
        (Decimal("100.00"), b"1E+2"),
        (Decimal("0.00"), b"0"),
        (Decimal("-2500.00"), b"-2.5E+3"),
        (Decimal("0.00000010"), b"1E-7"),
        (Decimal("0.00000123"), b"0.00000123"),
        (
            Decimal("12345678901234567890123456789.000000123"),
            b"12345678901234567890123456789.000000123",
        ),
    ],
)
def test_decimal_json_is_java_bigdecimal_stripped(value: Decimal, wire: bytes) -> None:
    """Jackson strips trailing zeros and writes BigDecimal.toString; every digit stays."""
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    array = pa.array([value], pa.decimal128(38, -exponent))
    assert orjson.dumps(json_column(array, DecimalType(38, -exponent))) == b"[" + wire + b"]"


def test_decimal_plain_text_keeps_scale_for_tiny_values() -> None:
    array = pa.array([Decimal("0.00000010")], pa.decimal128(10, 8))
    assert plain_text_column(array, DecimalType(10, 8)) == ["0.00000010"]


def test_local_zoned_timestamp_in_session_zone() -> None:
    array = pa.array([dt.datetime(1990, 10, 14, 12, 12, 43)], pa.timestamp("us", tz="UTC"))
    logical = LocalZonedTimestampType(6)
    # Flink's gateway writes the session zone's wall clock, still with a Z.
    assert json_column(array, logical, "Asia/Shanghai") == ["1990-10-14T20:12:43Z"]
    assert json_column(array, logical) == ["1990-10-14T12:12:43Z"]
    assert plain_text_column(array, logical, "Asia/Shanghai") == ["1990-10-14 20:12:43.000000"]
    # mapInArrow hands over the session zone; the instant is what counts.
    shanghai = array.cast(pa.timestamp("us", tz="Asia/Shanghai"))
    assert json_column(shanghai, logical) == ["1990-10-14T12:12:43Z"]


def test_sliced_nested_columns() -> None:
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([[1], None, [2, 3], [4]]),
            pa.array([[("a", 1)], [("b", 2)], None, [("c", 3)]], pa.map_(pa.string(), pa.int8())),
            pa.array([{"x": 1}, None, {"x": 3}, {"x": 4}], pa.struct([("x", pa.int8())])),
        ],
        names=["l", "m", "s"],
    ).slice(1, 2)
    schema = ResultSchema.of(
        ("l", ArrayType(BIGINT)),
        ("m", MapType(STRING, BIGINT)),
        ("s", RowType((RowField("x", BIGINT),))),
    )
    assert encode_json_rows(batch, schema) == [
        {"kind": "INSERT", "fields": [None, {"b": 2}, None]},
        {"kind": "INSERT", "fields": [[2, 3], None, {"x": 3}]},
    ]
    assert encode_plain_text_rows(batch, schema) == [
        {"kind": "INSERT", "fields": [None, "{b=2}", None]},
        {"kind": "INSERT", "fields": ["[2, 3]", None, "(3)"]},
    ]


def test_row_kinds_use_wire_names() -> None:
    batch = pa.RecordBatch.from_arrays([pa.array([1, 2, 3, 4])], names=["n"])
    schema = ResultSchema.of(("n", BIGINT))
    kinds = [RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE]
    rows = encode_json_rows(batch, schema, kinds)
    assert [r["kind"] for r in rows] == ["INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"]
    assert encode_plain_text_rows(batch, schema, kinds)[3] == {"kind": "DELETE", "fields": ["4"]}


def test_set_result_row() -> None:
    batch = pa.RecordBatch.from_arrays([pa.array(["OK"])], names=["result"])
    schema = ResultSchema.of(("result", STRING))
    expected = b'[{"kind":"INSERT","fields":["OK"]}]'
    assert orjson.dumps(encode_json_rows(batch, schema)) == expected
    assert orjson.dumps(encode_plain_text_rows(batch, schema)) == expected


def test_zero_columns_and_zero_rows() -> None:
    empty = pa.RecordBatch.from_pydict({})
    assert encode_json_rows(empty, ResultSchema()) == []
    no_rows = pa.RecordBatch.from_arrays([pa.array([], pa.int64())], names=["n"])
    assert encode_plain_text_rows(no_rows, ResultSchema.of(("n", BIGINT))) == []


@pytest.mark.parametrize(
    ("schema", "kinds"),
    [
        (ResultSchema.of(("a", BIGINT), ("b", BIGINT)), None),
        (ResultSchema.of(("a", BIGINT)), [RowKind.INSERT]),
    ],
)
def test_mismatches_are_rejected(schema: ResultSchema, kinds: list[RowKind] | None) -> None:
    batch = pa.RecordBatch.from_arrays([pa.array([1, 2])], names=["a"])
    with pytest.raises(ValueError):
        encode_json_rows(batch, schema, kinds)
    with pytest.raises(ValueError):
        encode_plain_text_rows(batch, schema, kinds)


def test_large_batch_restores_garbage_collector() -> None:
    import gc

    n = 20_000
    batch = pa.RecordBatch.from_arrays(
        [pa.array(range(n), pa.int64()), pa.array([1.5] * n)], names=["a", "b"]
    )
    schema = ResultSchema.of(("a", BIGINT), ("b", DOUBLE))
    assert gc.isenabled()
    rows = encode_json_rows(batch, schema)
    assert gc.isenabled()
    assert rows[n - 1] == {"kind": "INSERT", "fields": [n - 1, 1.5]}
