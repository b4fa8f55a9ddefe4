"""Flink JSON rows written straight from Arrow as JSON text, for REST result pages.

:func:`sparkgate.codec.rows.encode_json_rows` makes a Python object per value
for orjson to serialise; at about 650k rows/s that bounded a REST fetch. Here
each column becomes an Arrow string array of its values' JSON text, built by
``pyarrow.compute`` kernels; a kernel joins each row's fields with commas,
and one ``binary_join`` puts the constant ``]},{"kind":"INSERT","fields":[``
between all the rows. The result is spliced into the body as an
:class:`orjson.Fragment`: no Python object per row or value.

The bytes are exactly ``orjson.dumps(encode_json_rows(...))``: floats are
written by orjson itself (its NumPy serialiser formats them as its float
serialiser does), strings are escaped with the escapes orjson uses, and
temporal and decimal text comes from the kernels the per-value encoder uses
(:mod:`sparkgate.codec.arrow_text`). A batch with a column that has no kernel
path (BINARY, MAP, MULTISET, values in unexpected Arrow types, invalid
UTF-8...) goes to the per-value encoder whole.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from sparkgate.api.results import RowKind
from sparkgate.api.types import (
    ArrayType,
    LocalZonedTimestampType,
    LogicalType,
    ResultSchema,
    RowType,
    TimestampType,
    TypeRoot,
)
from sparkgate.codec.arrow_text import (
    INTEGERS,
    STRINGS,
    UNIT_DIGITS,
    decimal_strings,
    java_decimal,
    millis,
    timestamp_strings,
    trim_fraction,
    wall_clock,
)
from sparkgate.codec.rows import encode_json_rows

__all__ = ["encode_json_data", "json_rows_text"]

log = logging.getLogger(__name__)

# The ASCII characters orjson escapes and how (non-ASCII is written as UTF-8),
# asked of orjson itself so that the two cannot disagree.
_ESCAPES = {
    code: orjson.dumps(chr(code))[1:-1].decode()
    for code in range(128)
    if orjson.dumps(chr(code)) != b'"' + bytes([code]) + b'"'
}
_BACKSLASH = ord("\\")
# Every byte but the escaped ones: bytes.translate(None, _PLAIN) keeps only those.
_PLAIN = bytes(b for b in range(256) if b not in _ESCAPES)
_ROW_PREFIX = {kind: '{"kind":"' + kind.name + '","fields":[' for kind in RowKind}
_ROW_END = "]}"
# Above this many bytes of field text a batch's rows need 64-bit string offsets.
_LARGE_TEXT = 1 << 30
_MAX_OFFSET = (1 << 31) - 1
# Each kernel call costs some 15 µs of Python, some 0.5 ms per batch: below
# this many rows the per-value encoder is faster.
_KERNEL_MIN_ROWS = 512
# Below these sizes fewer, per-row kernels beat the whole-array tricks.
_WRAP_JOIN_ROWS = 2048
_SCIENTIFIC_KERNEL_ROWS = 128


def encode_json_data(
    batches: Sequence[pa.RecordBatch],
    schema: ResultSchema,
    kinds: Sequence[RowKind] | None = None,
    *,
    time_zone: str | None = None,
) -> orjson.Fragment:
    """A page's ``data`` array as pre-serialised JSON, for a body written by ``orjson.dumps``.

    ``kinds`` has one entry per row of all ``batches`` (None: all INSERT);
    ``time_zone`` as in :func:`~sparkgate.codec.rows.encode_json_rows`.
    """
    chunks: list[bytes | memoryview] = [b"["]
    offset = 0
    for batch in _combined(batches):
        n = batch.num_rows
        rows = _rows_chunks(
            batch, schema, None if kinds is None else kinds[offset : offset + n], time_zone
        )
        offset += n
        if rows:
            if len(chunks) > 1:
                chunks.append(b",")
            chunks += rows
    chunks.append(b"]")
    return orjson.Fragment(b"".join(chunks))


def json_rows_text(
    batch: pa.RecordBatch,
    schema: ResultSchema,
    kinds: Sequence[RowKind] | None = None,
    *,
    time_zone: str | None = None,
) -> bytes:
    """``orjson.dumps(encode_json_rows(batch, schema, kinds, ...))`` without its brackets."""
    return b"".join(_rows_chunks(batch, schema, kinds, time_zone))


def _combined(batches: Sequence[pa.RecordBatch]) -> Sequence[pa.RecordBatch]:
    """The batches as one: each batch costs a fixed ~0.5 ms of kernel calls."""
    if len(batches) < 2:
        return batches
    try:
        return pa.Table.from_batches(batches).combine_chunks().to_batches()  # type: ignore[no-any-return]
    except pa.ArrowException:  # e.g. schemas that differ in their metadata
        return batches


def _rows_chunks(
    batch: pa.RecordBatch,
    schema: ResultSchema,
    kinds: Sequence[RowKind] | None,
    time_zone: str | None,
) -> list[bytes | memoryview]:
    """The batch's rows, comma-separated without brackets, in pieces to concatenate."""
    n = batch.num_rows
    fits = batch.num_columns == len(schema) and (kinds is None or len(kinds) == n)
    if fits and not n:
        return []
    if fits and batch.num_columns and n >= _KERNEL_MIN_ROWS:
        try:
            chunks = _kernel_rows(batch, schema, kinds, time_zone)
        except pa.ArrowException as e:  # e.g. invalid UTF-8: the per-value path reports it
            log.debug("JSON text path declined a batch: %s", e)
            chunks = None
        if chunks is not None:
            return chunks
    # Mismatches raise their ValueError here, as encode_json_rows does.
    text = orjson.dumps(encode_json_rows(batch, schema, kinds, time_zone=time_zone))[1:-1]
    return [text] if text else []


def _kernel_rows(
    batch: pa.RecordBatch,
    schema: ResultSchema,
    kinds: Sequence[RowKind] | None,
    time_zone: str | None,
) -> list[bytes | memoryview] | None:
    """:func:`_rows_chunks` with kernels; None when a column has no kernel path."""
    fields: list[pa.Array] = []
    for i, column in enumerate(schema.columns):
        text = _column(batch.column(i), column.logical_type, time_zone)
        if text is None:
            return None
        fields.append(text)
    large = sum(f.nbytes for f in fields) > _LARGE_TEXT
    string_type = pa.large_string() if large else pa.string()
    if large:
        fields = [f.cast(string_type) for f in fields]
    comma = pa.scalar(",", string_type)
    values = pc.binary_join_element_wise(*fields, comma) if len(fields) > 1 else fields[0]
    n = len(values)
    if kinds is None or kinds.count(RowKind.INSERT) == len(kinds):
        # The text between two rows' fields is always the same: put it between
        # them all in one go, as the separator of a single list.
        lists_of = pa.LargeListArray if large else pa.ListArray
        whole = lists_of.from_arrays(pa.array([0, n], pa.int64() if large else pa.int32()), values)
        between = pa.scalar(_ROW_END + "," + _ROW_PREFIX[RowKind.INSERT], string_type)
        text = _value_bytes(pc.binary_join(whole, between))
        assert text is not None  # no field's text is empty
        return [_ROW_PREFIX[RowKind.INSERT].encode(), text, _ROW_END.encode()]
    prefixes = pa.array([_ROW_PREFIX[k] for k in kinds], string_type)
    end, nothing = pa.scalar(_ROW_END + ",", string_type), pa.scalar("", string_type)
    text = _value_bytes(pc.binary_join_element_wise(prefixes, values, end, nothing))
    assert text is not None
    return [text[:-1]]  # no comma after the last row


def _column(array: pa.Array, logical_type: LogicalType, time_zone: str | None) -> pa.Array | None:
    """Each value's JSON text (``null`` for NULL), or None when there is no kernel path."""
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    text = _values(array, logical_type, time_zone)
    if text is None:
        return None
    if text.type != pa.string():
        text = text.cast(pa.string())
    return pc.fill_null(text, "null") if text.null_count else text


def _values(array: pa.Array, logical_type: LogicalType, time_zone: str | None) -> pa.Array | None:
    """The non-NULL values' JSON text; None for a type without a kernel path.

    Each case takes only the Arrow types whose per-value encoding it
    reproduces; anything else is left to the per-value encoder.
    """
    kind, root, types = array.type, logical_type.type_root, pa.types
    if root in STRINGS and (types.is_string(kind) or types.is_large_string(kind)):
        return _json_strings(array)
    if (root in INTEGERS or root is TypeRoot.INTERVAL_YEAR_MONTH) and types.is_integer(kind):
        return pc.cast(array, pa.string())
    if root is TypeRoot.INTERVAL_DAY_TIME and (types.is_integer(kind) or types.is_duration(kind)):
        return pc.cast(millis(array), pa.string())
    if root is TypeRoot.BOOLEAN and types.is_boolean(kind):
        return pc.if_else(array, "true", "false")
    if root is TypeRoot.NULL and types.is_null(kind):
        return pa.nulls(len(array), pa.string())
    if root in (TypeRoot.FLOAT, TypeRoot.DOUBLE) and (
        types.is_float32(kind) or types.is_float64(kind)
    ):
        return _json_floats(array)
    if root is TypeRoot.DECIMAL and types.is_decimal(kind):
        return _json_decimals(array)
    if root is TypeRoot.DATE and types.is_date(kind):
        return _quoted(pc.cast(array, pa.string()))
    if root is TypeRoot.TIME_WITHOUT_TIME_ZONE and types.is_time(kind):
        strings = pc.cast(array, pa.string())
        return _quoted(trim_fraction(strings) if UNIT_DIGITS[kind.unit] else strings)
    if isinstance(logical_type, TimestampType) and types.is_timestamp(kind):
        return _quoted(timestamp_strings(array, True, logical_type.precision))
    if isinstance(logical_type, LocalZonedTimestampType) and types.is_timestamp(kind):
        strings = timestamp_strings(wall_clock(array, time_zone), True, logical_type.precision)
        return _wrapped(strings, '"', 'Z"')
    if isinstance(logical_type, ArrayType) and (types.is_list(kind) or types.is_large_list(kind)):
        return _json_arrays(array, logical_type, time_zone)
    if isinstance(logical_type, RowType) and types.is_struct(kind):
        return _json_objects(array, logical_type, time_zone)
    return None


def _quoted(strings: pa.Array) -> pa.Array:
    """Strings that need no escaping (dates, times, escaped strings) as JSON strings."""
    return _wrapped(strings, '"', '"')


def _wrapped(strings: pa.Array, before: str, after: str) -> pa.Array:
    """``before + s + after`` for each string; NULL stays NULL.

    Without NULLs, one ``binary_join`` of the whole array with
    ``after + before`` between the values writes all of the text, and the new
    offsets are the old ones shifted by the added bytes: three times faster
    than ``binary_join_element_wise``.
    """
    n = len(strings)
    if strings.null_count or n < _WRAP_JOIN_ROWS:
        literals = [pa.scalar(text, strings.type) for text in (before, after, "")]
        return pc.binary_join_element_wise(literals[0], strings, *literals[1:])
    large = pa.types.is_large_string(strings.type)
    whole = (pa.LargeListArray if large else pa.ListArray).from_arrays(
        pa.array([0, n], pa.int64() if large else pa.int32()), strings
    )
    joined = _value_bytes(pc.binary_join(whole, pa.scalar(after + before, strings.type)))
    data = b"".join([before.encode(), b"" if joined is None else joined, after.encode()])
    added = len(before.encode()) + len(after.encode())
    old = _offsets(strings)
    offsets = (old - old[0]).astype(np.int64) + added * np.arange(n + 1, dtype=np.int64)
    if len(data) > _MAX_OFFSET:
        return pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    width = np.int64 if large else np.int32
    array_of = pa.LargeStringArray if large else pa.StringArray
    return array_of.from_buffers(n, pa.py_buffer(offsets.astype(width)), pa.py_buffer(data))


def _json_strings(array: pa.Array) -> pa.Array:
    """JSON string literals, escaped exactly as orjson escapes them."""
    array.validate(full=True)  # invalid UTF-8 raises: the per-value path reports it
    data = _value_bytes(array)
    # The escaped bytes present, in one pass over the text.
    present = set(bytes(data).translate(None, _PLAIN)) if data is not None else set()
    # Backslashes first: the other escapes add backslashes of their own.
    for code in sorted(present, key=lambda c: (c != _BACKSLASH, c)):
        array = pc.replace_substring(array, chr(code), _ESCAPES[code])
    return _quoted(array)


def _offsets(array: pa.Array) -> np.ndarray[Any, Any]:
    """A (possibly sliced) string array's ``len + 1`` value offsets, without a copy."""
    width = np.int64 if pa.types.is_large_string(array.type) else np.int32
    count = 1 + len(array) + array.offset
    return np.frombuffer(array.buffers()[1], dtype=width, count=count)[array.offset :]


def _value_bytes(array: pa.Array) -> memoryview | None:
    """The UTF-8 bytes of a (possibly sliced) string array's values, or None if empty."""
    data = array.buffers()[2]
    if data is None or not len(array):
        return None
    offsets = _offsets(array)
    return memoryview(data)[int(offsets[0]) : int(offsets[-1])]


def _json_floats(array: pa.Array) -> pa.Array:
    """orjson's float text; NaN and infinities as Jackson's quoted names.

    orjson serialises the NumPy array in one call (nulls are NaN there and
    come out as ``null``); splitting that text at its commas yields one
    string per value.
    """
    if pa.types.is_float32(array.type):
        # As the per-value encoder: the shortest float32 digits, read as a double.
        array = pc.cast(pc.cast(array, pa.string()), pa.float64())
    if not len(array):
        return pa.array([], pa.string())
    values = array.to_numpy(zero_copy_only=False)
    dumped = orjson.dumps(values, option=orjson.OPT_SERIALIZE_NUMPY)
    # One string holding the text between the brackets, without a copy.
    large = len(dumped) > _LARGE_TEXT
    bounds = pa.array([1, len(dumped) - 1], pa.int64() if large else pa.int32()).buffers()[1]
    strings = pa.LargeStringArray if large else pa.StringArray
    whole = strings.from_buffers(1, bounds, pa.py_buffer(dumped))
    text = pc.split_pattern(whole, ",").flatten()
    if len(text) != len(array):
        raise pa.ArrowInvalid(f"{len(text)} float texts for {len(array)} values")
    if np.isfinite(values).all():  # no NaN, infinity or NULL (NaN in ``values``)
        return text
    odd = pc.fill_null(pc.invert(pc.is_finite(array)), False)
    if odd.true_count:
        names = pc.if_else(
            pc.is_nan(array),
            '"NaN"',
            pc.if_else(pc.greater(array, 0), '"Infinity"', '"-Infinity"'),
        )
        text = pc.if_else(odd, names, text)
    return text


def _json_decimals(array: pa.Array) -> pa.Array:
    """Java ``BigDecimal.toString`` of the stripped value, as the per-value encoder writes.

    Integral values with trailing zeros (common: ``100`` -> ``1E+2``) are
    rewritten with kernels; the rare scientific and tiny values per value.
    """
    strings = decimal_strings(array)
    scale = array.type.scale
    # Arrow writes scientific notation below 1E-6 or for a negative scale:
    # impossible, like a 0.000000 prefix, for scales 0 to 6.
    rare = None
    if not 0 <= scale <= 6:
        rare = pc.fill_null(
            pc.or_(
                pc.match_substring(strings, "E"),
                pc.or_(pc.starts_with(strings, "0.000000"), pc.starts_with(strings, "-0.000000")),
            ),
            False,
        )
    # Trimmed, only integers and (rare) scientific notation still end in 0.
    integral = pc.ends_with(strings, "0")
    if integral.null_count:
        integral = pc.fill_null(integral, False)
    if rare is not None:
        integral = pc.and_(integral, pc.invert(rare))
    if integral.true_count:
        strings = _replace(strings, integral, _integral_scientific)
    if rare is not None and rare.true_count:
        strings = _replace(strings, rare, _per_value_java_decimal)
    return strings


def _replace(
    strings: pa.Array, mask: pa.Array, rewrite: Callable[[pa.Array], pa.Array]
) -> pa.Array:
    """``strings`` with those under ``mask`` rewritten; a few are rewritten per value."""
    chosen = pc.filter(strings, mask)
    if len(chosen) < _SCIENTIFIC_KERNEL_ROWS:
        rewrite = _per_value_java_decimal
    return pc.replace_with_mask(strings, mask, rewrite(chosen))


def _per_value_java_decimal(strings: pa.Array) -> pa.Array:
    return pa.array([java_decimal(v) for v in strings.to_pylist()], pa.string())


def _integral_scientific(strings: pa.Array) -> pa.Array:
    """``-1500`` -> ``-1.5E+3``, ``10`` -> ``1E+1``, ``0`` -> ``0``: integers ending in zeros."""
    digits = pc.utf8_ltrim(strings, characters="-")
    significant = pc.utf8_rtrim(digits, characters="0")
    count = pc.binary_length(significant)
    head = pc.utf8_slice_codeunits(significant, 0, 1)
    tail = pc.utf8_slice_codeunits(significant, 1, 1 << 30)
    mantissa = pc.if_else(pc.greater(count, 1), pc.binary_join_element_wise(head, tail, "."), head)
    exponent = pc.cast(pc.subtract(pc.binary_length(digits), 1), pa.string())
    sign = pc.if_else(pc.starts_with(strings, "-"), "-", "")
    text = pc.binary_join_element_wise(sign, mantissa, "E+", exponent, "")
    return pc.if_else(pc.equal(count, 0), "0", text)


def _json_arrays(
    array: pa.Array, logical_type: ArrayType, time_zone: str | None
) -> pa.Array | None:
    """``[e1,e2]`` from the element texts joined within each list."""
    offsets = array.offsets
    start, end = offsets[0].as_py(), offsets[-1].as_py()
    elements = _column(array.values.slice(start, end - start), logical_type.element_type, time_zone)
    if elements is None:
        return None
    rebased = pc.subtract(offsets, pa.scalar(start, offsets.type))
    lists_of = pa.LargeListArray if pa.types.is_large_list(array.type) else pa.ListArray
    lists = lists_of.from_arrays(rebased, elements, mask=pc.is_null(array))
    return _wrapped(pc.binary_join(lists, ","), "[", "]")


def _json_objects(array: pa.Array, logical_type: RowType, time_zone: str | None) -> pa.Array | None:
    """``{"name":value,...}`` keyed by the logical field names, in field order."""
    names = logical_type.field_names
    children = array.flatten()  # sliced, with the parent's nulls applied
    if len(children) != len(names) or len(set(names)) != len(names):
        return None  # a mismatch raises, duplicates collapse: both per value
    parts: list[pa.Array | str] = ["{"]
    for i, (child, field) in enumerate(zip(children, logical_type.fields, strict=True)):
        text = _column(child, field.type, time_zone)
        if text is None:
            return None
        parts += [("," if i else "") + orjson.dumps(field.name).decode() + ":", text]
    if len(parts) == 1:
        objects: pa.Array | str = "{}"
    else:
        objects = pc.binary_join_element_wise(*parts, "}", "")
    return pc.if_else(array.is_valid(), objects, pa.scalar(None, pa.string()))
