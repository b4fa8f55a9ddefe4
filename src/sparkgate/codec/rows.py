"""Flink's JSON and PLAIN_TEXT row formats, encoded from Arrow record batches.

Both encoders return the ``data`` list of a Flink fetch response:
``[{"kind": "INSERT", "fields": [...]}, ...]``.

JSON (Flink's ``RowDataToJsonConverters``, as the gateway configures it):

* numbers as JSON numbers; NaN and infinities as the strings ``"NaN"``,
  ``"Infinity"``, ``"-Infinity"`` (Jackson quotes non-finite numbers); FLOAT
  values as their shortest float32 digits (``33.333``, not ``33.33300018…``).
* DECIMAL as a JSON number carrying every digit, written like Jackson writes a
  ``BigDecimal`` node: trailing zeros stripped, Java ``BigDecimal.toString``
  notation (``1.50`` -> ``1.5``, ``0.00`` -> ``0``, ``100`` -> ``1E+2``,
  ``0.0000001`` -> ``1E-7``). That is Flink's wire, not a loss: its gateway
  converts with ``encodeDecimalAsPlainNumber=false`` into a ``DecimalNode``
  that ``JsonNodeFactory`` strips, and its clients restore the scale from the
  column's type (the Flink SQL client prints ``1.50``).
  Such numbers are :class:`orjson.Fragment` values (pre-serialised JSON), so
  **the result must be serialised with orjson**; ``json.dumps`` cannot.
* DATE ``1990-10-14``; TIMESTAMP ``1990-10-14T12:12:43.123`` (ISO, fraction
  trimmed to the digits it needs, none when zero); TIMESTAMP_LTZ the same with
  a ``Z`` suffix, in UTC by default. Flink's gateway instead writes the session
  time zone's wall clock with the ``Z``; pass ``time_zone`` to do the same.
  TIME ``12:12:43[.123]`` (Flink drops the fraction; we keep it, trimmed, and
  Flink's parser accepts it).
* BINARY/VARBINARY as base64; ARRAY as a list; MAP and MULTISET as an object
  keyed by the key's PLAIN_TEXT form (null key -> ``"null"``); ROW as an
  object keyed by field name.
* INTERVAL_YEAR_MONTH as months, INTERVAL_DAY_TIME as milliseconds (Flink's
  internal values); sub-millisecond parts are dropped.

PLAIN_TEXT (Flink's ``RowDataToStringConverterImpl``: CAST to STRING while
printing): ``TRUE``/``FALSE``; FLOAT/DOUBLE in Java ``toString`` form
(``1.0``, ``1.0E10``, ``NaN``); DECIMAL plain with its scale (``1.50``);
BINARY ``x'cafe'``; TIMESTAMP ``1990-10-14 12:12:43.123`` with at least the
type's precision in fraction digits; TIMESTAMP_LTZ likewise in ``time_zone``;
TIME with exactly its precision; intervals ``+1-02`` and
``+1 02:03:04.500``; ARRAY ``[1.1, 2.2]``; MAP/MULTISET ``{k=v}``; ROW
``(1, abc)``. A top-level NULL is JSON ``null``; a nested one prints ``NULL``.

Everything is converted column by column with ``pyarrow.compute`` kernels and
``to_pylist``; per-value Python runs only for the rare values that need it
(non-finite floats, decimals in scientific notation) and for the types that
have no kernel (base64, hex, intervals). REST pages skip the Python values
altogether: :mod:`sparkgate.codec.json_text` writes the same JSON as text.
"""

from __future__ import annotations

import base64
import contextlib
import decimal
import gc
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from sparkgate.api.results import RowKind
from sparkgate.api.types import (
    INT,
    ArrayType,
    DayTimeIntervalType,
    LocalZonedTimestampType,
    LogicalType,
    MapType,
    MultisetType,
    ResultSchema,
    RowType,
    TimestampType,
    TimeType,
    TypeRoot,
)
from sparkgate.codec.arrow_text import (
    INTEGERS,
    STRINGS,
    UNIT_DIGITS,
    decimal_strings,
    fit_fraction,
    java_decimal,
    millis,
    timestamp_strings,
    trim_fraction,
    wall_clock,
)

__all__ = [
    "encode_json_rows",
    "encode_plain_text_rows",
    "json_column",
    "plain_text_column",
]

log = logging.getLogger(__name__)

# Below this many rows pausing the garbage collector is not worth it.
_GC_PAUSE_ROWS = 10_000
_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = False


def encode_json_rows(
    batch: pa.RecordBatch,
    schema: ResultSchema,
    kinds: Sequence[RowKind] | None = None,
    *,
    time_zone: str | None = None,
) -> list[dict[str, Any]]:
    """Flink JSON rows for ``batch``; serialise the result with orjson (see module doc).

    ``time_zone`` None writes TIMESTAMP_LTZ as the UTC instant; a zone name
    writes that zone's wall clock (what Flink's gateway does with the session
    zone), both with a ``Z`` suffix.
    """
    encoder = _Encoder(time_zone)
    return _rows(batch, schema, kinds, encoder.json)


def encode_plain_text_rows(
    batch: pa.RecordBatch,
    schema: ResultSchema,
    kinds: Sequence[RowKind] | None = None,
    *,
    time_zone: str = "UTC",
) -> list[dict[str, Any]]:
    """Flink PLAIN_TEXT rows: every field a string, or None for a NULL field.

    TIMESTAMP_LTZ values print as wall clock time in ``time_zone`` (the
    session's ``table.local-time-zone`` in Flink).
    """
    encoder = _Encoder(time_zone)
    return _rows(batch, schema, kinds, encoder.text)


def json_column(
    array: pa.Array, logical_type: LogicalType, time_zone: str | None = None
) -> list[Any]:
    """One column's JSON values (None for NULL), as in :func:`encode_json_rows`."""
    return _Encoder(time_zone).json(array, logical_type)


def plain_text_column(
    array: pa.Array, logical_type: LogicalType, time_zone: str = "UTC"
) -> list[str | None]:
    """One column's PLAIN_TEXT values (None for NULL), as in :func:`encode_plain_text_rows`."""
    return _Encoder(time_zone).text(array, logical_type)


def _rows(
    batch: pa.RecordBatch,
    schema: ResultSchema,
    kinds: Sequence[RowKind] | None,
    convert: Callable[[pa.Array, LogicalType], list[Any]],
) -> list[dict[str, Any]]:
    if batch.num_columns != len(schema):
        raise ValueError(f"batch has {batch.num_columns} columns, schema has {len(schema)}")
    n = batch.num_rows
    if kinds is not None and len(kinds) != n:
        raise ValueError(f"{len(kinds)} row kinds for {n} rows")
    with _gc_paused() if n >= _GC_PAUSE_ROWS else contextlib.nullcontext():
        columns = [convert(batch.column(i), c.logical_type) for i, c in enumerate(schema.columns)]
        fields: Any = zip(*columns, strict=True) if columns else ([] for _ in range(n))
        if kinds is None:
            return [{"kind": "INSERT", "fields": list(row)} for row in fields]
        return [{"kind": k.name, "fields": list(row)} for k, row in zip(kinds, fields, strict=True)]


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of containers are built.

    Collections triggered by the allocations rescan the growing result again
    and again: a 1M-row page encodes 2-3x slower with the collector running.
    Nothing built here forms reference cycles, so pausing leaks nothing.
    Nested pauses from concurrent fetches share one pause.
    """
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


def _indices(mask: pa.Array) -> list[int]:
    """Positions where a boolean array is true (null counts as false)."""
    return pc.indices_nonzero(pc.fill_null(mask, False)).to_pylist()  # type: ignore[no-any-return]


def _java_double(text: str) -> str:
    """Java's ``Double.toString`` for a value outside [1e-3, 1e7), from its shortest digits."""
    if text == "nan":
        return "NaN"
    if text in ("inf", "-inf"):
        return "-Infinity" if text[0] == "-" else "Infinity"
    value = decimal.Decimal(text)
    if value.is_zero():
        return "-0.0" if text.startswith("-") else "0.0"
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    significant = "".join(map(str, digits)).rstrip("0")
    adjusted = exponent + len(digits) - 1
    return f"{'-' if sign else ''}{significant[0]}.{significant[1:] or '0'}E{adjusted}"


def _day_time_text(millis: int) -> str:
    """Flink's ``formatIntervalDayTime``: ``+D HH:MM:SS.mmm``."""
    sign = "+" if millis >= 0 else "-"
    millis = abs(millis)
    seconds, ms = divmod(millis, 1000)
    minutes, s = divmod(seconds, 60)
    hours, m = divmod(minutes, 60)
    days, h = divmod(hours, 24)
    return f"{sign}{days} {h:02d}:{m:02d}:{s:02d}.{ms:03d}"


def _year_month_text(months: int) -> str:
    """Flink's ``formatIntervalYearMonth``: ``+Y-MM``."""
    sign = "+" if months >= 0 else "-"
    years, m = divmod(abs(months), 12)
    return f"{sign}{years}-{m:02d}"


class _Encoder:
    """Column converters for one encoding call; ``time_zone`` drives TIMESTAMP_LTZ."""

    def __init__(self, time_zone: str | None) -> None:
        self.time_zone = time_zone

    # -- JSON -------------------------------------------------------------

    def json(self, array: pa.Array, logical_type: LogicalType) -> list[Any]:
        if pa.types.is_dictionary(array.type):
            array = array.dictionary_decode()
        root = logical_type.type_root
        if (
            root in STRINGS
            or root in INTEGERS
            or root
            in (
                TypeRoot.BOOLEAN,
                TypeRoot.NULL,
                TypeRoot.INTERVAL_YEAR_MONTH,
            )
        ):
            return array.to_pylist()  # type: ignore[no-any-return]
        if root in (TypeRoot.FLOAT, TypeRoot.DOUBLE):
            return self._json_floats(array)
        if root is TypeRoot.DECIMAL:
            return self._json_decimals(array)
        if root in (TypeRoot.BINARY, TypeRoot.VARBINARY):
            return [
                None if b is None else base64.b64encode(b).decode("ascii")
                for b in array.to_pylist()
            ]
        if root is TypeRoot.DATE:
            return pc.cast(array, pa.string()).to_pylist()  # type: ignore[no-any-return]
        if root is TypeRoot.TIME_WITHOUT_TIME_ZONE:
            strings = pc.cast(array, pa.string())
            if UNIT_DIGITS[array.type.unit]:
                strings = trim_fraction(strings)
            return strings.to_pylist()  # type: ignore[no-any-return]
        if isinstance(logical_type, TimestampType):
            strings = timestamp_strings(array, True, logical_type.precision)
            return strings.to_pylist()  # type: ignore[no-any-return]
        if isinstance(logical_type, LocalZonedTimestampType):
            wall = wall_clock(array, self.time_zone)
            strings = timestamp_strings(wall, True, logical_type.precision)
            return pc.binary_join_element_wise(strings, "Z", "").to_pylist()  # type: ignore[no-any-return]
        if root is TypeRoot.INTERVAL_DAY_TIME:
            return millis(array).to_pylist()  # type: ignore[no-any-return]
        if isinstance(logical_type, ArrayType):
            offsets, start, end = _nested_offsets(array)
            values = self.json(array.values.slice(start, end - start), logical_type.element_type)
            return [
                values[a - start : b - start] if ok else None
                for a, b, ok in zip(
                    offsets[:-1], offsets[1:], array.is_valid().to_pylist(), strict=True
                )
            ]
        if isinstance(logical_type, (MapType, MultisetType)):
            return self._json_maps(array, logical_type)
        if isinstance(logical_type, RowType):
            names = logical_type.field_names
            children = array.flatten()
            if len(children) != len(names):
                raise ValueError(
                    f"struct has {len(children)} fields, {logical_type} has {len(names)}"
                )
            valid = array.is_valid().to_pylist()
            if not names:
                return [{} if ok else None for ok in valid]
            columns = [
                self.json(c, f.type) for c, f in zip(children, logical_type.fields, strict=True)
            ]
            return [
                dict(zip(names, row, strict=True)) if ok else None
                for ok, row in zip(valid, zip(*columns, strict=True), strict=True)
            ]
        return [None if v is None else str(v) for v in array.to_pylist()]

    def _json_floats(self, array: pa.Array) -> list[Any]:
        if pa.types.is_float32(array.type) or pa.types.is_float16(array.type):
            # Through the shortest float32 digits, so 33.333f stays 33.333.
            array = pc.cast(pc.cast(array, pa.string()), pa.float64())
        values: list[Any] = array.to_pylist()
        for i in _indices(pc.invert(pc.is_finite(array))):
            v = values[i]
            values[i] = "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
        return values

    @staticmethod
    def _json_decimals(array: pa.Array) -> list[Any]:
        strings = decimal_strings(array)
        values: list[Any] = strings.to_pylist()
        # Java writes these in scientific notation (or Arrow already did).
        odd = pc.or_(
            pc.or_(pc.ends_with(strings, "0"), pc.match_substring(strings, "E")),
            pc.or_(pc.starts_with(strings, "0.000000"), pc.starts_with(strings, "-0.000000")),
        )
        for i in _indices(odd):
            values[i] = java_decimal(values[i])
        fragment = orjson.Fragment
        return [None if v is None else fragment(v) for v in values]

    def _json_maps(self, array: pa.Array, logical_type: MapType | MultisetType) -> list[Any]:
        if isinstance(logical_type, MapType):
            key_type, value_type = logical_type.key_type, logical_type.value_type
        else:  # a multiset is a map of element to count
            key_type, value_type = logical_type.element_type, INT
        offsets, start, end = _nested_offsets(array)
        keys = array.keys.slice(start, end - start)
        items = array.items.slice(start, end - start)
        key_text = keys.to_pylist() if key_type.type_root in STRINGS else self.text(keys, key_type)
        values = self.json(items, value_type)
        out: list[Any] = []
        for a, b, ok in zip(offsets[:-1], offsets[1:], array.is_valid().to_pylist(), strict=True):
            if not ok:
                out.append(None)
                continue
            out.append(
                {
                    ("null" if k is None else k): v
                    for k, v in zip(
                        key_text[a - start : b - start], values[a - start : b - start], strict=True
                    )
                }
            )
        return out

    # -- PLAIN_TEXT -------------------------------------------------------

    def text(self, array: pa.Array, logical_type: LogicalType) -> list[str | None]:
        if pa.types.is_dictionary(array.type):
            array = array.dictionary_decode()
        root = logical_type.type_root
        if root in STRINGS:
            return array.to_pylist()  # type: ignore[no-any-return]
        if root is TypeRoot.NULL:
            return [None] * len(array)
        if root is TypeRoot.BOOLEAN:
            return pc.if_else(array, "TRUE", "FALSE").to_pylist()  # type: ignore[no-any-return]
        if root in INTEGERS or root is TypeRoot.DATE:
            return pc.cast(array, pa.string()).to_pylist()  # type: ignore[no-any-return]
        if root in (TypeRoot.FLOAT, TypeRoot.DOUBLE):
            return self._text_floats(array)
        if root is TypeRoot.DECIMAL:
            values: list[str | None] = pc.cast(array, pa.string()).to_pylist()
            for i, v in enumerate(values):
                if v is not None and "E" in v:  # Arrow's notation for tiny values
                    values[i] = format(decimal.Decimal(v), "f")
            return values
        if root in (TypeRoot.BINARY, TypeRoot.VARBINARY):
            return [None if b is None else f"x'{b.hex()}'" for b in array.to_pylist()]
        if isinstance(logical_type, TimeType):
            strings = pc.cast(array, pa.string())
            digits, precision = UNIT_DIGITS[array.type.unit], logical_type.precision
            if digits >= precision:
                strings = pc.utf8_slice_codeunits(strings, 0, 9 + precision if precision else 8)
            else:
                strings = fit_fraction(strings, digits, precision)
            return strings.to_pylist()  # type: ignore[no-any-return]
        if isinstance(logical_type, TimestampType):
            return timestamp_strings(array, False, logical_type.precision).to_pylist()  # type: ignore[no-any-return]
        if isinstance(logical_type, LocalZonedTimestampType):
            wall = wall_clock(array, self.time_zone)
            return timestamp_strings(wall, False, logical_type.precision).to_pylist()  # type: ignore[no-any-return]
        if isinstance(logical_type, DayTimeIntervalType):
            return [None if v is None else _day_time_text(v) for v in millis(array).to_pylist()]
        if root is TypeRoot.INTERVAL_YEAR_MONTH:
            return [None if v is None else _year_month_text(v) for v in array.to_pylist()]
        if isinstance(logical_type, ArrayType):
            offsets, start, end = _nested_offsets(array)
            items = self.text(array.values.slice(start, end - start), logical_type.element_type)
            return [
                "[" + ", ".join(_or_null(items[a - start : b - start])) + "]" if ok else None
                for a, b, ok in zip(
                    offsets[:-1], offsets[1:], array.is_valid().to_pylist(), strict=True
                )
            ]
        if isinstance(logical_type, (MapType, MultisetType)):
            return self._text_maps(array, logical_type)
        if isinstance(logical_type, RowType):
            children = array.flatten()
            valid = array.is_valid().to_pylist()
            columns = [
                self.text(c, f.type) for c, f in zip(children, logical_type.fields, strict=True)
            ]
            rows = zip(*columns, strict=True) if columns else (() for _ in valid)
            return [
                "(" + ", ".join(_or_null(row)) + ")" if ok else None
                for ok, row in zip(valid, rows, strict=True)
            ]
        return [None if v is None else str(v) for v in array.to_pylist()]

    @staticmethod
    def _text_floats(array: pa.Array) -> list[str | None]:
        strings = pc.cast(array, pa.string())  # shortest digits for the value's width
        values: list[str | None] = strings.to_pylist()
        magnitude = pc.abs(array)
        plain = pc.fill_null(
            pc.and_(pc.greater_equal(magnitude, 1e-3), pc.less(magnitude, 1e7)), False
        )
        for i in _indices(pc.and_(plain, pc.invert(pc.match_substring(strings, ".")))):
            values[i] = f"{values[i]}.0"
        for i in _indices(pc.and_(pc.is_valid(array), pc.invert(plain))):
            text = values[i]
            assert text is not None
            values[i] = _java_double(text)
        return values

    def _text_maps(self, array: pa.Array, logical_type: MapType | MultisetType) -> list[str | None]:
        if isinstance(logical_type, MapType):
            key_type, value_type = logical_type.key_type, logical_type.value_type
        else:  # a multiset is a map of element to count
            key_type, value_type = logical_type.element_type, INT
        offsets, start, end = _nested_offsets(array)
        keys = self.text(array.keys.slice(start, end - start), key_type)
        values = self.text(array.items.slice(start, end - start), value_type)
        out: list[str | None] = []
        for a, b, ok in zip(offsets[:-1], offsets[1:], array.is_valid().to_pylist(), strict=True):
            if not ok:
                out.append(None)
                continue
            pairs = zip(
                _or_null(keys[a - start : b - start]),
                _or_null(values[a - start : b - start]),
                strict=True,
            )
            out.append("{" + ", ".join(f"{k}={v}" for k, v in pairs) + "}")
        return out


def _nested_offsets(array: pa.Array) -> tuple[list[int], int, int]:
    offsets: list[int] = array.offsets.to_pylist()
    return offsets, offsets[0], offsets[-1]


def _or_null(values: Sequence[str | None]) -> list[str]:
    return ["NULL" if v is None else v for v in values]
