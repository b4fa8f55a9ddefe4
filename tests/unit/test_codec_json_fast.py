"""The JSON text encoder against the per-value encoder, byte for byte.

:mod:`sparkgate.codec.json_text` must write exactly what
``orjson.dumps(encode_json_rows(...))`` writes, for every logical type and
value; these tests build batches of awkward values and compare the bytes.
``kernels_only`` makes a fallback to the per-value encoder fail the test, so a
green case really went through the kernels.
"""

from __future__ import annotations

__all__: list[str] = []

import datetime as dt
from decimal import Decimal
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from sparkgate.api.results import ResultKind, ResultSet, ResultType, RowKind
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
    CharType,
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
from sparkgate.codec import json_text
from sparkgate.codec.json_text import encode_json_data, json_rows_text
from sparkgate.codec.rows import encode_json_rows
from sparkgate.endpoints.rest.results import RowFormat, result_body

RNG_SEED = 20240611
ZONES = [None, "UTC", "Asia/Shanghai", "America/New_York", "+05:30"]
KINDS = [RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE]
# Every ASCII character, the Unicode line separators, a BOM, non-BMP characters.
CHARS = [chr(c) for c in range(0x80)] + ["é", "€", "中", "😀", "\u2028", "\u2029", "\ufeff"]
CHARS += ["\U0010ffff", "\x80", "\xff"]


def _expected(
    batch: pa.RecordBatch,
    schema: ResultSchema,
    kinds: list[RowKind] | None = None,
    time_zone: str | None = None,
) -> bytes:
    return orjson.dumps(encode_json_rows(batch, schema, kinds, time_zone=time_zone))


def _fast(
    batch: pa.RecordBatch,
    schema: ResultSchema,
    kinds: list[RowKind] | None = None,
    time_zone: str | None = None,
) -> bytes:
    return b"[" + json_rows_text(batch, schema, kinds, time_zone=time_zone) + b"]"


def _assert_same(
    batch: pa.RecordBatch,
    schema: ResultSchema,
    kinds: list[RowKind] | None = None,
    time_zone: str | None = None,
) -> None:
    expected = _expected(batch, schema, kinds, time_zone)
    fast = _fast(batch, schema, kinds, time_zone)
    if fast != expected:  # show the first differing row, not two huge byte strings
        for i, (a, b) in enumerate(zip(orjson.loads(fast), orjson.loads(expected), strict=False)):
            assert orjson.dumps(a) == orjson.dumps(b), f"row {i}"
    assert fast == expected


@pytest.fixture
def any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernels even for the small batches the per-value encoder writes faster."""
    monkeypatch.setattr(json_text, "_KERNEL_MIN_ROWS", 0)


@pytest.fixture(params=["default sizes", "whole-array tricks", "per-row kernels"])
def kernels_only(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, any_size: None
) -> None:
    """Fail instead of falling back to the per-value encoder.

    The size-dependent variants (whole-array joins, per-value decimal
    rewriting) are each forced for every case as well.
    """

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the JSON text encoder fell back to encode_json_rows")

    monkeypatch.setattr(json_text, "encode_json_rows", refuse)
    if request.param != "default sizes":
        size = 0 if request.param == "whole-array tricks" else 1 << 62
        monkeypatch.setattr(json_text, "_WRAP_JOIN_ROWS", size)
        monkeypatch.setattr(json_text, "_SCIENTIFIC_KERNEL_ROWS", size)


def _counting_fallbacks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return encode_json_rows(*args, **kwargs)

    monkeypatch.setattr(json_text, "encode_json_rows", counting)
    return calls


# -- values -------------------------------------------------------------------


def _rng() -> np.random.Generator:
    return np.random.default_rng(RNG_SEED)


def _random_strings(n: int) -> list[str | None]:
    rng = _rng()
    out: list[str | None] = []
    for _ in range(n):
        if rng.random() < 0.1:
            out.append(None)
            continue
        picks = rng.integers(0, len(CHARS), int(rng.integers(0, 12)))
        out.append("".join(CHARS[i] for i in picks))
    return out


EDGE_STRINGS: list[str | None] = [
    "",
    None,
    "plain",
    'say "hi"',
    "back\\slash",
    "\\",
    '"',
    '\\"',
    "\\\\n",
    "line\nbreak\r\n\ttab",
    "\b\f\x00\x01\x1f\x7f",
    "".join(chr(c) for c in range(0x20)),
    "unicode é € 中 😀 \u2028",
    "\x00",
    "null",
]


def _float64_values() -> list[float | None]:
    specials = [0.0, -0.0, 1.0, -1.0, 1.5, 0.1, 1e15, 1e16, 1e17, 1e20, 1e21, 1e22, 1e23]
    specials += [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1.5e-7, 9.999999e-6, 123456789012345680.0]
    specials += [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308]
    specials += [float("nan"), float("inf"), float("-inf"), None, 9007199254740993.0, 33.333]
    rng = _rng()
    bits = rng.integers(0, 2**64, 3000, dtype=np.uint64).view(np.float64)
    ints = rng.integers(-(2**53), 2**53, 500).astype(np.float64)
    decimals = np.round(rng.normal(size=500) * 10.0 ** rng.integers(-12, 18, 500), 3)
    return [*specials, *bits.tolist(), *ints.tolist(), *decimals.tolist()]


def _float32_values() -> pa.Array:
    fixed = pa.array(
        [
            *(33.333, 1e10, 1e-5, 1.0, -0.0, 3.4028235e38, 1e-45, 1.1754944e-38, 16777217.0),
            *(0.1, float("nan"), float("inf"), float("-inf"), None, 7.0e-10),
        ],
        pa.float32(),
    )
    bits = _rng().integers(0, 2**32, 2000, dtype=np.uint32).view(np.float32)
    return pa.concat_arrays([fixed, pa.array(bits)])


def _decimal(unscaled: int, scale: int) -> Decimal:
    return Decimal(f"{unscaled}E-{scale}")  # exact, whatever the context's precision


def _decimals(precision: int, scale: int, n: int = 300) -> pa.Array:
    rng = _rng()
    values: list[Decimal | None] = [Decimal(0), None]
    for _ in range(n):
        digits = int(rng.integers(1, precision + 1))
        unscaled = int("".join(str(int(d)) for d in rng.integers(0, 10, digits)))
        zeros = int(rng.integers(0, digits + 1))
        unscaled = (unscaled // 10**zeros) * 10**zeros  # trailing zeros are the hard part
        sign = -1 if rng.random() < 0.3 else 1
        values.append(_decimal(sign * unscaled, scale))
    for unscaled in (
        1,
        10,
        100,
        10 ** (precision - 1),
        10**precision - 1,
        5 * 10 ** (precision - 1),
    ):
        values += [_decimal(unscaled, scale), _decimal(-unscaled, scale)]
    return pa.array(values, pa.decimal128(precision, scale))


def _epoch(unit: str, n: int, low: int, high: int) -> pa.Array:
    """``n`` random instants between two years, as int64 in ``unit``, with a null."""
    per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    start = int(dt.datetime(low, 1, 1, tzinfo=dt.timezone.utc).timestamp())
    end = int(dt.datetime(high, 12, 31, tzinfo=dt.timezone.utc).timestamp())
    rng = _rng()
    seconds = rng.integers(start, end, n)
    fraction = rng.integers(0, per_second, n)
    # Some whole seconds and round fractions, whose trailing zeros get trimmed.
    fraction[::3] = 0
    fraction[1::5] = (fraction[1::5] // max(per_second // 10, 1)) * max(per_second // 10, 1)
    values = pa.array(seconds * per_second + fraction, pa.int64())
    return pa.concat_arrays([values, pa.nulls(1, pa.int64())])


def _timestamps(unit: str, tz: str | None = None) -> pa.Array:
    low, high = (1678, 2261) if unit == "ns" else (1, 9999)
    return _epoch(unit, 400, low, high).cast(pa.timestamp(unit, tz=tz))


def _times(unit: str) -> pa.Array:
    per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    values = _rng().integers(0, 86400 * per_second, 300)
    values[::4] = (values[::4] // per_second) * per_second
    small = unit in ("s", "ms")
    array = pa.array(
        [*values.tolist(), None, 0, 86400 * per_second - 1], pa.int32() if small else pa.int64()
    )
    return array.cast(pa.time32(unit) if small else pa.time64(unit))


def _ints(arrow_type: pa.DataType) -> pa.Array:
    info = np.iinfo(arrow_type.to_pandas_dtype())
    random = _rng().integers(info.min, info.max, 200, endpoint=True, dtype=info.dtype)
    return pa.array([info.min, info.max, 0, -1, 1, None, *random.tolist()], arrow_type)


def _struct() -> pa.Array:
    return pa.array(
        [{"a": 1, "b": 'x"y', "c": 1.5}, None, {"a": None, "b": None, "c": float("nan")}] * 20,
        pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.float64())]),
    )


STRUCT_TYPE = RowType(
    (RowField("a", INT), RowField('quote"d\\ \n é', STRING), RowField("c", DOUBLE))
)

CASES: list[tuple[str, pa.Array, LogicalType]] = [
    ("boolean", pa.array([True, False, None, True]), BOOLEAN),
    ("tinyint", _ints(pa.int8()), TINYINT),
    ("smallint", _ints(pa.int16()), SMALLINT),
    ("int", _ints(pa.int32()), INT),
    ("bigint", _ints(pa.int64()), BIGINT),
    ("null", pa.nulls(5), NULL),
    ("double", pa.array(_float64_values(), pa.float64()), DOUBLE),
    ("float", _float32_values(), FLOAT),
    ("double with no nulls", pa.array([1.5, 2.0, 1e300, -3.25]), DOUBLE),
    ("string edges", pa.array(EDGE_STRINGS), STRING),
    ("string random", pa.array(_random_strings(2000)), STRING),
    ("string each ascii", pa.array([chr(c) for c in range(0x80)]), STRING),
    ("string no specials", pa.array(["a", "bc", "", "déf"]), STRING),
    ("char", pa.array(["ab   ", None, 'a"']), CharType(5)),
    ("large string", pa.array(EDGE_STRINGS, pa.large_string()), STRING),
    ("dictionary string", pa.array(_random_strings(300)).dictionary_encode(), STRING),
    ("date32", pa.array([0, -719162, 2932896, 7592, None], pa.int32()).cast(pa.date32()), DATE),
    ("date64", pa.array([dt.date(1990, 10, 14), None], pa.date64()), DATE),
    ("year-month interval", _ints(pa.int32()), YearMonthIntervalType()),
    (
        "day-time interval from int",
        pa.array([0, -1, 93784500, None, 2**62], pa.int64()),
        DayTimeIntervalType(DayTimeResolution.DAY_TO_SECOND),
    ),
    ("empty row type", pa.array([{}, None, {}], pa.struct([])), RowType(())),
    ("row", _struct(), STRUCT_TYPE),
    ("array of bigint", pa.array([[1, None, 3], [], None, [2**63 - 1]]), ArrayType(BIGINT)),
    ("array of strings", pa.array([EDGE_STRINGS, [], None, ["x"]]), ArrayType(STRING)),
    (
        "array of doubles",
        pa.array([[1.0, float("nan"), None, -0.0], [float("-inf")], None, []]),
        ArrayType(DOUBLE),
    ),
    (
        "array of arrays",
        pa.array([[[1], [], None], None, [[2, 3]], []], pa.list_(pa.list_(pa.int8()))),
        ArrayType(ArrayType(TINYINT)),
    ),
    (
        "large list",
        pa.array([["a", None], [], None], pa.large_list(pa.string())),
        ArrayType(STRING),
    ),
    (
        "array of rows",
        pa.array(
            [[{"x": 1}, None, {"x": None}], None, []], pa.list_(pa.struct([("x", pa.int64())]))
        ),
        ArrayType(RowType((RowField("x", BIGINT),))),
    ),
    (
        "array of decimals",
        pa.array([[Decimal("1.50"), Decimal("100.00"), None]], pa.list_(pa.decimal128(5, 2))),
        ArrayType(DecimalType(5, 2)),
    ),
    (
        "row of arrays and timestamps",
        pa.array(
            [
                {"l": [1, 2], "t": dt.datetime(2024, 1, 2, 3, 4, 5, 600)},
                None,
                {"l": None, "t": None},
            ],
            pa.struct([("l", pa.list_(pa.int64())), ("t", pa.timestamp("us"))]),
        ),
        RowType((RowField("l", ArrayType(BIGINT)), RowField("t", TimestampType(6)))),
    ),
]
for _unit in ("s", "ms", "us", "ns"):
    CASES += [
        (f"timestamp[{_unit}]", _timestamps(_unit), TimestampType(9)),
        (f"time[{_unit}]", _times(_unit), TimeType(9)),
        (
            f"day-time interval duration[{_unit}]",
            _epoch(_unit, 200, 1970, 2100).cast(pa.duration(_unit)),
            DayTimeIntervalType(DayTimeResolution.DAY_TO_SECOND),
        ),
    ]
for _precision, _scale in [(5, 2), (18, 2), (18, 0), (10, 8), (20, 6), (19, 7), (38, 0)]:
    CASES.append((f"decimal({_precision},{_scale})", _decimals(_precision, _scale), DecimalType()))
for _precision, _scale in [(38, 10), (38, 18), (38, 37), (38, 38), (12, 12)]:
    CASES.append((f"decimal({_precision},{_scale})", _decimals(_precision, _scale), DecimalType()))
CASES = [
    (name, array, DecimalType(array.type.precision, array.type.scale))
    if isinstance(logical, DecimalType)
    else (name, array, logical)
    for name, array, logical in CASES
]

LTZ_ARRAYS = [
    ("naive us", _timestamps("us")),
    ("utc ms", _timestamps("ms", "UTC")),
    ("shanghai us", _timestamps("us", "Asia/Shanghai")),
    ("utc ns", _timestamps("ns", "UTC")),
    ("utc s", _timestamps("s", "UTC")),
]

# Types without a kernel path: the per-value encoder writes them.
FALLBACK_CASES: list[tuple[str, pa.Array, LogicalType]] = [
    ("binary", pa.array([b"\xca\xfe", b"", None]), BYTES),
    (
        "map",
        pa.array([[("k", 1), ("z", None)], None, []], pa.map_(pa.string(), pa.int64())),
        MapType(STRING, BIGINT),
    ),
    ("multiset", pa.array([[("x", 2)]], pa.map_(pa.string(), pa.int32())), MultisetType(STRING)),
    ("array of binary", pa.array([[b"\x01"], None]), ArrayType(BYTES)),
    (
        "row with duplicate names",
        pa.array([{"a": 1, "b": 2}], pa.struct([("a", pa.int8()), ("b", pa.int8())])),
        RowType((RowField("a", TINYINT), RowField("a", TINYINT))),
    ),
    ("string held as int", pa.array([1, 2]), STRING),
    ("double held as int", pa.array([1, 2]), DOUBLE),
]


def _batch(array: pa.Array, name: str = "c") -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([array], names=[name])


def _kinds(n: int) -> list[RowKind]:
    return [KINDS[i % 4] for i in range(n)]


# -- tests --------------------------------------------------------------------


@pytest.mark.usefixtures("kernels_only")
@pytest.mark.parametrize(
    ("array", "logical_type"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_column_matches_per_value_encoder(array: pa.Array, logical_type: LogicalType) -> None:
    schema = ResultSchema.of(("c", logical_type))
    batch = _batch(array)
    _assert_same(batch, schema)
    _assert_same(batch, schema, _kinds(len(array)))
    # Sliced: a non-zero offset into every buffer.
    sliced = batch.slice(1, max(len(array) - 2, 0))
    _assert_same(sliced, schema)
    _assert_same(sliced, schema, _kinds(sliced.num_rows))
    _assert_same(batch.slice(len(array) - 1), schema)


@pytest.mark.usefixtures("kernels_only")
@pytest.mark.parametrize("time_zone", ZONES)
@pytest.mark.parametrize("precision", [0, 3, 6, 9])
@pytest.mark.parametrize(("array"), [a for _, a in LTZ_ARRAYS], ids=[n for n, _ in LTZ_ARRAYS])
def test_local_zoned_timestamps_in_session_zone(
    array: pa.Array, precision: int, time_zone: str | None
) -> None:
    schema = ResultSchema.of(("t", LocalZonedTimestampType(precision)))
    _assert_same(_batch(array), schema, time_zone=time_zone)
    _assert_same(_batch(array).slice(3, 50), schema, time_zone=time_zone)


@pytest.mark.usefixtures("kernels_only")
@pytest.mark.parametrize("kinds", ["none", "inserts", "mixed"])
def test_wide_batch_of_every_type(kinds: str) -> None:
    n = 60
    arrays, columns = [], []
    for i, (_, array, logical_type) in enumerate(
        [*CASES, ("ltz", _timestamps("us", "UTC"), LocalZonedTimestampType(6))]
    ):
        arrays.append(pa.concat_arrays([array] * (n // len(array) + 1)).slice(0, n))
        columns.append((f"c{i}", logical_type))
    batch = pa.RecordBatch.from_arrays(arrays, names=[c[0] for c in columns])
    schema = ResultSchema.of(*columns)
    row_kinds = {"none": None, "inserts": [RowKind.INSERT] * n, "mixed": _kinds(n)}[kinds]
    for zone in ("Asia/Shanghai", None):
        _assert_same(batch, schema, row_kinds, zone)
        _assert_same(batch.slice(7, 40), schema, row_kinds and row_kinds[7:47], zone)


@pytest.mark.usefixtures("any_size")
@pytest.mark.parametrize(
    ("array", "logical_type"), [c[1:] for c in FALLBACK_CASES], ids=[c[0] for c in FALLBACK_CASES]
)
def test_types_without_kernels_fall_back(
    array: pa.Array, logical_type: LogicalType, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counting_fallbacks(monkeypatch)
    schema = ResultSchema.of(("n", BIGINT), ("c", logical_type))
    batch = pa.RecordBatch.from_arrays([pa.array(range(len(array))), array], names=["n", "c"])
    _assert_same(batch, schema, _kinds(len(array)))
    assert calls  # the whole batch went to the per-value encoder


@pytest.mark.usefixtures("kernels_only")
def test_large_offsets(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 64-bit offset paths for pages of more than 2 GB, forced small."""
    monkeypatch.setattr(json_text, "_LARGE_TEXT", 0)
    monkeypatch.setattr(json_text, "_MAX_OFFSET", 0)
    schema = ResultSchema.of(("d", DOUBLE), ("s", STRING), ("t", TimestampType(6)))
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array(_float64_values()[:100]),
            pa.array(_random_strings(100)),
            _timestamps("us")[:100],
        ],
        names=["d", "s", "t"],
    )
    _assert_same(batch, schema)
    _assert_same(batch.slice(5), schema, _kinds(95))


def test_empty_and_zero_column_batches() -> None:
    schema = ResultSchema.of(("n", BIGINT), ("s", STRING))
    empty = pa.RecordBatch.from_arrays(
        [pa.array([], pa.int64()), pa.array([], pa.string())], names=["n", "s"]
    )
    assert json_rows_text(empty, schema) == b""
    assert json_rows_text(empty, schema, []) == b""
    _assert_same(empty, schema)
    no_columns = pa.RecordBatch.from_pydict({})
    _assert_same(no_columns, ResultSchema())


def test_mismatches_raise_as_the_per_value_encoder_does() -> None:
    batch = _batch(pa.array([1, 2]))
    with pytest.raises(ValueError):
        json_rows_text(batch, ResultSchema.of(("a", BIGINT), ("b", BIGINT)))
    with pytest.raises(ValueError):
        json_rows_text(batch, ResultSchema.of(("c", BIGINT)), [RowKind.INSERT])


@pytest.mark.usefixtures("any_size")
def test_invalid_utf8_is_reported_by_the_per_value_encoder() -> None:
    invalid = pa.array([b"ok", b"\xff\xfe"], pa.binary()).view(pa.string())
    schema = ResultSchema.of(("c", STRING))
    with pytest.raises(UnicodeDecodeError):
        encode_json_rows(_batch(invalid), schema)
    with pytest.raises(UnicodeDecodeError):
        json_rows_text(_batch(invalid), schema)


def _expected_data(
    batches: list[pa.RecordBatch], schema: ResultSchema, kinds: list[RowKind] | None
) -> bytes:
    rows, offset = [], 0
    for batch in batches:
        n = batch.num_rows
        rows += encode_json_rows(batch, schema, kinds and kinds[offset : offset + n])
        offset += n
    return orjson.dumps({"data": rows})


@pytest.mark.parametrize("mixed_kinds", [False, True])
def test_page_batches_are_encoded_as_one(
    mixed_kinds: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small batches of one page are combined: kernels cost a fixed time per batch."""
    calls = _counting_fallbacks(monkeypatch)
    schema = ResultSchema.of(("n", BIGINT), ("s", STRING))
    sizes = [300, 0, 250, 1]
    batches = [
        pa.RecordBatch.from_arrays(
            [pa.array(range(n), pa.int64()), pa.array(_random_strings(n), pa.string())],
            names=["n", "s"],
        )
        for n in sizes
    ]
    kinds = _kinds(sum(sizes)) if mixed_kinds else None
    fragment = encode_json_data(batches, schema, kinds)
    assert orjson.dumps({"data": fragment}) == _expected_data(batches, schema, kinds)
    assert not calls  # 551 rows together: the kernels
    assert orjson.dumps(encode_json_data([], schema)) == b"[]"


@pytest.mark.parametrize("mixed_kinds", [False, True])
def test_page_of_batches_that_do_not_combine(
    mixed_kinds: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches of different Arrow types, kernels and per-value text spliced in one array."""
    calls = _counting_fallbacks(monkeypatch)
    schema = ResultSchema.of(("n", BIGINT), ("s", STRING))

    def batch(n: int, strings: pa.DataType) -> pa.RecordBatch:
        values = pa.array(_random_strings(n), pa.string()).cast(strings)
        return pa.RecordBatch.from_arrays([pa.array(range(n), pa.int64()), values], ["n", "s"])

    batches = [
        batch(600, pa.string()),
        batch(0, pa.large_string()),
        batch(700, pa.large_string()),
        batch(5, pa.dictionary(pa.int32(), pa.string())),  # small: per value
    ]
    kinds = _kinds(1305) if mixed_kinds else None
    fragment = encode_json_data(batches, schema, kinds)
    assert orjson.dumps({"data": fragment}) == _expected_data(batches, schema, kinds)
    assert len(calls) == 1


@pytest.mark.parametrize("time_zone", [None, "Asia/Shanghai"])
def test_result_body_is_unchanged(time_zone: str | None) -> None:
    schema = ResultSchema.of(
        ("id", BIGINT),
        ("d", DOUBLE),
        ("s", STRING),
        ("t", LocalZonedTimestampType(3)),
        ("dec", DecimalType(18, 2)),
    )
    ids = pa.array(range(1000), pa.int64())
    batch = pa.RecordBatch.from_arrays(
        [
            ids,
            pc.multiply(ids, 1.5),
            pc.binary_join_element_wise("s", pc.cast(ids, pa.string()), ""),
            pc.cast(pc.multiply(ids, 1000), pa.timestamp("ms", tz="UTC")),
            pc.cast(pc.cast(ids, pa.decimal128(21, 2)), pa.decimal128(18, 2)),
        ],
        names=list(schema.names),
    )
    page = ResultSet(
        ResultType.PAYLOAD,
        1,
        schema,
        (batch.slice(0, 400), batch.slice(400)),
        is_query_result=True,
        result_kind=ResultKind.SUCCESS_WITH_CONTENT,
        job_id="0123456789abcdef0123456789abcdef",
    )
    body = result_body(page, RowFormat.JSON, "/v3/next", time_zone)
    old = dict(body)
    old["results"] = {
        **body["results"],
        "data": encode_json_rows(batch, schema, time_zone=time_zone),
    }
    assert list(body) == list(old)
    assert orjson.dumps(body) == orjson.dumps(old)


@pytest.mark.parametrize("sabotage", ["newline escape", "decimal exponent", "float text"])
def test_the_comparison_catches_a_wrong_encoding(
    sabotage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The differential check is not vacuous: small mistakes in the kernels fail it."""
    monkeypatch.setattr(json_text, "_KERNEL_MIN_ROWS", 0)
    monkeypatch.setattr(json_text, "_SCIENTIFIC_KERNEL_ROWS", 0)
    if sabotage == "newline escape":
        monkeypatch.setitem(json_text._ESCAPES, ord("\n"), "\\u000a")
        array, logical_type = pa.array(["a\nb"]), STRING
    elif sabotage == "decimal exponent":
        monkeypatch.setattr(json_text, "_integral_scientific", lambda strings: strings)
        array, logical_type = pa.array([Decimal("100.00")], pa.decimal128(5, 2)), DecimalType(5, 2)
    else:
        monkeypatch.setattr(json_text, "_json_floats", lambda array: pc.cast(array, pa.string()))
        array, logical_type = pa.array([1.0]), DOUBLE
    schema = ResultSchema.of(("c", logical_type))
    assert _fast(_batch(array), schema) != _expected(_batch(array), schema)


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        (Decimal("1E-10"), b"1E-10"),
        (Decimal("-2.5E-20"), b"-2.5E-20"),
        (Decimal("1.20E-29"), b"1.2E-29"),
        (Decimal("3E-7"), b"3E-7"),
        (Decimal("0.00000010"), b"1E-7"),
    ],
)
@pytest.mark.usefixtures("kernels_only")
def test_tiny_decimals_keep_their_exponent(value: Decimal, wire: bytes) -> None:
    """Arrow writes ``1.00…E-10``: trimming its zeros must not shorten the exponent."""
    array = pa.array([value], pa.decimal128(38, 30))
    schema = ResultSchema.of(("c", DecimalType(38, 30)))
    expected = b'[{"kind":"INSERT","fields":[' + wire + b"]}]"
    assert orjson.dumps(encode_json_rows(_batch(array), schema)) == expected
    assert _fast(_batch(array), schema) == expected
