"""DECIMAL in REST JSON is written as Flink's gateway writes it.

Flink's ``ResultInfoSerializer`` converts a DECIMAL with
``RowDataToJsonConverters(..., encodeDecimalAsPlainNumber=false)``, which
makes a Jackson ``DecimalNode`` through ``JsonNodeFactory.numberNode``: that
strips trailing zeros (zero becomes ``0``), and Jackson writes the node with
``BigDecimal.toString`` (``1E+2``, ``1E-7``). So DECIMAL(10,2) ``1.50`` is the
JSON number ``1.5`` on Flink's wire (the JDBC transcript in tests/data/flink
has ``CAST(1.5 AS DECIMAL(5,2))`` as ``1.5``); the scale travels in the
column's ``logicalType``, and Flink's clients rescale (its SQL client prints
``1.50``). PLAIN_TEXT keeps the scale in the text.

The expected texts below were produced by Flink 2.3.0's own converter with
the serializer's options, serialised by its shaded Jackson (2.20).
"""

from __future__ import annotations

from decimal import Decimal

import orjson
import pyarrow as pa
import pytest

from sparkgate.api.types import (
    STRING,
    ArrayType,
    DecimalType,
    MapType,
    ResultSchema,
    RowField,
    RowType,
)
from sparkgate.codec.json_text import encode_json_data
from sparkgate.codec.rows import encode_json_rows, encode_plain_text_rows

# (precision, scale, unscaled value, Flink 2.3.0's JSON text)
FLINK_JSON = [
    (10, 2, 150, "1.5"),
    (10, 2, 0, "0"),
    (10, 2, -150, "-1.5"),
    (10, 2, -10, "-0.1"),
    (10, 2, 10000, "1E+2"),
    (10, 2, 1, "0.01"),
    (10, 0, 0, "0"),
    (10, 0, 7, "7"),
    (10, 0, 100, "1E+2"),
    (10, 0, -1200, "-1.2E+3"),
    (5, 0, 10000, "1E+4"),
    (38, 0, 10**37, "1E+37"),
    (38, 0, 10**38 - 1, "99999999999999999999999999999999999999"),
    (38, 18, 12345678901234567890123456789012345678, "12345678901234567890.123456789012345678"),
    (38, 18, 1, "1E-18"),
    (38, 18, 10**12, "0.000001"),
    (38, 18, -(10**11), "-1E-7"),
    (38, 18, 10**18, "1"),
    (38, 18, 15 * 10**20, "1.5E+3"),
    (38, 38, 10**37, "0.1"),
    (38, 38, 1, "1E-38"),
    (10, 7, 1, "1E-7"),
    (10, 7, 10, "0.000001"),
    (10, 7, 100, "0.00001"),
    (10, 6, 1, "0.000001"),
    (10, 6, 10**6, "1"),
    (9, 6, 123456789, "123.456789"),
    (20, 10, -12 * 10**9, "-1.2"),
]
GROUPS = sorted({(p, s) for p, s, _, _ in FLINK_JSON})


def _decimal(unscaled: int, scale: int) -> Decimal:
    return Decimal(f"{unscaled}E-{scale}")  # exact, whatever the context's precision


def _case(precision: int, scale: int, repeat: int) -> tuple[pa.RecordBatch, ResultSchema, str]:
    """One column of the group's values, ``repeat`` times, and Flink's ``data`` text."""
    cases = [(u, text) for p, s, u, text in FLINK_JSON if (p, s) == (precision, scale)] * repeat
    array = pa.array([_decimal(u, scale) for u, _ in cases], pa.decimal128(precision, scale))
    schema = ResultSchema.of(("d", DecimalType(precision, scale)))
    rows = ",".join('{"kind":"INSERT","fields":[' + text + "]}" for _, text in cases)
    return pa.record_batch([array], names=["d"]), schema, f"[{rows}]"


@pytest.mark.parametrize(("precision", "scale"), GROUPS)
@pytest.mark.parametrize("repeat", [1, 700], ids=["per-value", "kernels"])
def test_json_decimals_are_flinks_text(precision: int, scale: int, repeat: int) -> None:
    batch, schema, flink = _case(precision, scale, repeat)
    assert orjson.dumps(encode_json_data([batch], schema)).decode() == flink
    assert orjson.dumps(encode_json_rows(batch, schema)).decode() == flink


def test_nested_decimals_are_flinks_text() -> None:
    """In ARRAY, ROW and MAP values as at the top level (Flink 2.3.0: ``[1.5]``, ``{"x":0}``)."""
    d = DecimalType(10, 2)
    schema = ResultSchema.of(
        ("a", ArrayType(d)),
        ("r", RowType((RowField("x", d),))),
        ("m", MapType(STRING, d)),
    )
    dec = pa.decimal128(10, 2)
    batch = pa.record_batch(
        [
            pa.array([[Decimal("1.50"), Decimal("-0.10")]], pa.list_(dec)),
            pa.array([{"x": Decimal("0.00")}], pa.struct([("x", dec)])),
            pa.array([[("k", Decimal("100.00"))]], pa.map_(pa.string(), dec)),
        ],
        names=["a", "r", "m"],
    )
    flink = '[{"kind":"INSERT","fields":[[1.5,-0.1],{"x":0},{"k":1E+2}]}]'
    assert orjson.dumps(encode_json_data([batch], schema)).decode() == flink
    assert orjson.dumps(encode_json_rows(batch, schema)).decode() == flink


def test_plain_text_keeps_the_scale() -> None:
    batch, schema, _ = _case(10, 2, 1)
    texts = [r["fields"][0] for r in encode_plain_text_rows(batch, schema)]
    assert texts == ["1.50", "0.00", "-1.50", "-0.10", "100.00", "0.01"]
