"""Arrow values as text with ``pyarrow.compute`` kernels, shared by the row encoders.

Both the per-value encoders (:mod:`sparkgate.codec.rows`) and the JSON text
encoder (:mod:`sparkgate.codec.json_text`) build temporal and decimal strings
here, so the two can never drift apart.
"""

from __future__ import annotations

import decimal

import pyarrow as pa
import pyarrow.compute as pc

from sparkgate.api.types import TypeRoot

__all__ = [
    "INTEGERS",
    "STRINGS",
    "UNIT_DIGITS",
    "decimal_strings",
    "fit_fraction",
    "java_decimal",
    "millis",
    "timestamp_strings",
    "trim_fraction",
    "wall_clock",
]

UNIT_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
"""Fraction digits Arrow prints for each time unit."""
STRINGS = (TypeRoot.CHAR, TypeRoot.VARCHAR)
INTEGERS = (TypeRoot.TINYINT, TypeRoot.SMALLINT, TypeRoot.INTEGER, TypeRoot.BIGINT)

_UNITS = {0: "second", 3: "millisecond", 6: "microsecond", 9: "nanosecond"}
_MS_DIVISOR = {"ms": 1, "us": 1000, "ns": 1_000_000}
# Wide enough that normalising a DECIMAL(38) never rounds.
_DECIMAL_CONTEXT = decimal.Context(prec=80)


def trim_fraction(strings: pa.Array) -> pa.Array:
    """``12:00:01.500`` -> ``12:00:01.5``, ``12:00:01.000`` -> ``12:00:01``.

    Only for strings that end in a fraction; rtrim is ten times faster than a regex.
    """
    return pc.utf8_rtrim(pc.utf8_rtrim(strings, characters="0"), characters=".")


def fit_fraction(strings: pa.Array, digits: int, precision: int) -> pa.Array:
    """Flink's ``formatTimestamp``: at least ``precision`` fraction digits, zeros beyond trimmed."""
    if digits == precision:
        return strings
    if digits < precision:
        pad = "0" * (precision - digits)
        return pc.binary_join_element_wise(strings, pad if digits else "." + pad, "")
    if precision == 0:
        return trim_fraction(strings)
    pattern = r"(\.\d{" + str(precision) + r"}\d*?)0+$"
    return pc.replace_substring_regex(strings, pattern=pattern, replacement=r"\1")


def decimal_strings(array: pa.Array) -> pa.Array:
    """Arrow's decimal text with the fraction's trailing zeros trimmed (``1.50`` -> ``1.5``).

    Arrow writes values below 1E-6 in scientific notation (``1.00E-10``), only
    possible for scales above 6; those keep their zeros, which trimming would
    take from the exponent (``1E-1``).
    """
    strings = pc.cast(array, pa.string())
    scale = array.type.scale
    if scale <= 0:
        return strings
    trimmed = trim_fraction(strings)
    if scale <= 6:
        return trimmed
    return pc.if_else(pc.match_substring(strings, "E"), strings, trimmed)


def java_decimal(text: str) -> str:
    """Java's ``BigDecimal.toString`` of a decimal string with trailing zeros stripped."""
    value = decimal.Decimal(text)
    if value.is_zero():
        return "0"
    return str(value.normalize(_DECIMAL_CONTEXT))


def wall_clock(array: pa.Array, time_zone: str | None) -> pa.Array:
    """Instants as naive wall-clock timestamps in ``time_zone`` (UTC when None)."""
    unit = array.type.unit
    if array.type.tz is None:  # a naive array for an LTZ column: take it as UTC
        array = array.cast(pa.timestamp(unit, tz="UTC"))
    if time_zone is not None and time_zone not in ("UTC", "Z", "+00:00"):
        array = array.cast(pa.timestamp(unit, tz=time_zone))
        return pc.local_timestamp(array)
    return array.cast(pa.timestamp(unit))  # drop the zone: values are UTC


def timestamp_strings(array: pa.Array, iso: bool, precision: int) -> pa.Array:
    """ISO ``T`` form with the fraction trimmed, or Flink's form with ``precision`` digits.

    Either way a value never shows more than ``precision`` digits: a
    ``TIMESTAMP(3)`` column holds milliseconds in Flink, while Spark's values
    (a processing time, a cast) keep microseconds.
    """
    digits = UNIT_DIGITS[array.type.unit]
    if precision < digits:
        array = pc.floor_temporal(array, multiple=10 ** (digits - precision), unit=_UNITS[digits])
    strings = pc.cast(array, pa.string())
    if iso:
        # Fixed-width date part (Spark's years are 0001-9999): faster than replace.
        strings = pc.binary_replace_slice(strings, start=10, stop=11, replacement="T")
        return trim_fraction(strings) if digits else strings
    return fit_fraction(strings, digits, precision)


def millis(array: pa.Array) -> pa.Array:
    """A day-time interval in milliseconds (Flink's internal value); integers pass through."""
    if pa.types.is_duration(array.type):
        unit = array.type.unit
        values = pc.cast(array, pa.int64())
        if unit == "s":
            return pc.multiply(values, 1000)
        divisor = _MS_DIVISOR[unit]
        return values if divisor == 1 else pc.divide(values, divisor)
    return array
