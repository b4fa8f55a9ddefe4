"""Cheap checks of a few Spark options, so a typo fails before Spark's slow start.

Spark reads its configuration only once the JVM runs (10 s or more); a bad
``spark.master`` or memory size would otherwise fail then, with a JVM stack
trace. Each check is a :class:`ConfigOption` so the gateway's configuration
loader reports it in its one style (key, value, what is allowed). Only forms
Spark itself accepts pass; keys not listed here go to Spark unchecked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sparkgate.api.config import ConfigOption, parse_bool, port_option

__all__ = ["SPARK_CHECKED_OPTIONS", "local_cores"]

_MASTER = re.compile(
    r"local(\[(\*|[1-9]\d*)(\s*,\s*[1-9]\d*)?\])?"
    r"|local-cluster\[\d+,\s*\d+,\s*\d+\]"
    r"|spark://\S+|yarn|k8s://\S+",
)
_LOCAL = re.compile(r"local(?:\[(\*|[1-9]\d*)(?:\s*,\s*[1-9]\d*)?\])?")
# JavaUtils.byteStringAs: a number and an optional binary unit.
_BYTES = re.compile(r"\d+\s*(b|k|kb|m|mb|g|gb|t|tb|p|pb)?", re.IGNORECASE)


def local_cores(master: str, available: int) -> int | None:
    """The cores a ``local`` master uses (``available`` for ``[*]``); None if not local."""
    match = _LOCAL.fullmatch(master.strip())
    if match is None:
        return None
    threads = match.group(1)
    if threads is None:
        return 1
    return available if threads == "*" else int(threads)


def _checked(key: str, type_name: str, form: str, ok: Callable[[str], bool]) -> ConfigOption[str]:
    def parse(text: str) -> str:
        if not ok(text.strip()):
            raise ValueError(f"expected {form}")
        return text

    return ConfigOption(key, "", "Checked before Spark starts.", type_name, parse, str)


def _positive_int(text: str) -> bool:
    return text.isdigit() and int(text) > 0


def _bool(text: str) -> bool:
    try:
        parse_bool(text)
    except ValueError:
        return False
    return True


def _memory(text: str) -> bool:
    return _BYTES.fullmatch(text) is not None


_MEMORY_FORM = "a JVM memory size such as '512m', '2g' or '4gb'"

SPARK_CHECKED_OPTIONS: tuple[ConfigOption[Any], ...] = (
    _checked(
        "spark.master",
        "String",
        "local, local[N], local[*], local[N,F], local-cluster[N,C,M], spark://HOST:PORT, "
        "yarn or k8s://URL",
        lambda text: _MASTER.fullmatch(text) is not None,
    ),
    _checked("spark.sql.shuffle.partitions", "Integer", "a positive integer", _positive_int),
    _checked("spark.default.parallelism", "Integer", "a positive integer", _positive_int),
    _checked("spark.driver.cores", "Integer", "a positive integer", _positive_int),
    _checked("spark.executor.cores", "Integer", "a positive integer", _positive_int),
    _checked("spark.driver.memory", "MemorySize", _MEMORY_FORM, _memory),
    _checked("spark.executor.memory", "MemorySize", _MEMORY_FORM, _memory),
    _checked("spark.ui.enabled", "Boolean", "'true' or 'false'", _bool),
    port_option("spark.ui.port", 4040, "Checked before Spark starts."),
)
