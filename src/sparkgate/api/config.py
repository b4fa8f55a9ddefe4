"""Typed configuration options and the raw-string configuration they read from.

Options are data (after Flink's ``ConfigOption``): each one knows its key,
default, description, how to parse the string form a user writes and how to
format a value back, so that validation, ``get`` and the generated docs all
come from one declaration. Values stay strings in :class:`Configuration`
because that is how they travel on Flink's wire and on the command line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Generic, TypeVar

from sparkgate.api.errors import ConfigurationError

__all__ = [
    "MAX_PORT",
    "ConfigOption",
    "Configuration",
    "bool_option",
    "choice_option",
    "duration_option",
    "format_duration",
    "format_memory",
    "int_option",
    "list_option",
    "memory_option",
    "parse_bool",
    "parse_duration",
    "parse_list",
    "parse_memory",
    "path_option",
    "port_option",
    "string_option",
]

T = TypeVar("T")

MAX_PORT = 65535


@dataclass(frozen=True)
class ConfigOption(Generic[T]):
    """One option: key, typed default, description, and its string codec.

    ``default_text`` overrides how the default is shown (docs, example
    config) when the parsed default depends on the machine, e.g. an
    expanded home directory.
    """

    key: str
    default: T
    description: str
    type_name: str
    parser: Callable[[str], T] = field(repr=False, compare=False)
    formatter: Callable[[T], str] = field(repr=False, compare=False)
    default_text: str | None = None

    def __post_init__(self) -> None:
        if not self.key or self.key != self.key.strip():
            raise ValueError(f"invalid option key {self.key!r}")

    def parse(self, text: str) -> T:
        """Parse a raw value; raises ``ValueError`` describing the expected form."""
        return self.parser(text)

    def format(self, value: T) -> str:
        return self.formatter(value)

    @property
    def default_display(self) -> str:
        """The default as users write it, independent of this machine."""
        if self.default_text is not None:
            return self.default_text
        return self.formatter(self.default)


# --------------------------------------------------------------------------
# Durations (Flink's TimeUtils forms)

_DURATION_FORM = (
    "a duration such as '5 min', '30 s', '100 ms', '2 h', '1 d' or a bare number of milliseconds"
)

# Label lists follow Flink's TimeUnit labels; the first label is the one
# format_duration emits. Values are nanoseconds per unit.
_DURATION_UNITS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (86_400 * 10**9, ("d", "day", "days")),
    (3_600 * 10**9, ("h", "hour", "hours")),
    (60 * 10**9, ("min", "m", "mins", "minute", "minutes")),
    (10**9, ("s", "sec", "secs", "second", "seconds")),
    (10**6, ("ms", "milli", "millis", "millisecond", "milliseconds")),
    (10**3, ("µs", "us", "micro", "micros", "microsecond", "microseconds")),
    (1, ("ns", "nano", "nanos", "nanosecond", "nanoseconds")),
)
_NANOS_BY_LABEL: dict[str, int] = {
    label: nanos for nanos, labels in _DURATION_UNITS for label in labels
}
_NUMBER_AND_UNIT = re.compile(r"\s*([+-]?\d+)\s*([^\d\s]*)\s*")


def parse_duration(text: str) -> timedelta:
    """Parse Flink's duration forms; a bare number means milliseconds.

    Negative values are accepted here so that options can use zero or a
    negative value to mean "disabled"; range checks belong to the option.
    """
    match = _NUMBER_AND_UNIT.fullmatch(text)
    if match is None:
        raise ValueError(f"cannot parse {text!r}; expected {_DURATION_FORM}")
    amount = int(match.group(1))
    unit = match.group(2).lower() or "ms"
    nanos_per_unit = _NANOS_BY_LABEL.get(unit)
    if nanos_per_unit is None:
        raise ValueError(
            f"unknown time unit {match.group(2)!r} in {text!r}; expected {_DURATION_FORM}"
        )
    nanos = amount * nanos_per_unit
    if nanos % 1000:
        # timedelta holds microseconds; rounding could silently turn a
        # small positive timeout into 0, which means "disabled".
        raise ValueError(f"{text!r} is finer than the supported resolution of 1 µs")
    try:
        return timedelta(microseconds=nanos // 1000)
    except OverflowError:
        raise ValueError(f"{text!r} is out of range for a duration") from None


def format_duration(value: timedelta) -> str:
    """Shortest Flink form: the largest unit that divides the value exactly."""
    nanos = ((value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds) * 1000
    if nanos == 0:
        return "0 ms"
    for nanos_per_unit, labels in _DURATION_UNITS:
        if nanos % nanos_per_unit == 0:
            return f"{nanos // nanos_per_unit} {labels[0]}"
    raise AssertionError("unreachable: 1 ns divides everything")


# --------------------------------------------------------------------------
# Memory sizes (Flink's MemorySize forms, binary multiples)

_MEMORY_FORM = "a memory size such as '64 mb', '512m', '1g', '2 gb' or a bare number of bytes"
_MEMORY_UNITS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1 << 40, ("tb", "t", "tebibytes")),
    (1 << 30, ("gb", "g", "gibibytes")),
    (1 << 20, ("mb", "m", "mebibytes")),
    (1 << 10, ("kb", "k", "kibibytes")),
    (1, ("bytes", "b")),
)
_BYTES_BY_LABEL: dict[str, int] = {
    label: size for size, labels in _MEMORY_UNITS for label in labels
}


def parse_memory(text: str) -> int:
    """Parse a memory size to bytes; a bare number means bytes."""
    match = _NUMBER_AND_UNIT.fullmatch(text)
    if match is None or match.group(1).startswith("-"):
        raise ValueError(f"cannot parse {text!r}; expected {_MEMORY_FORM}")
    unit = match.group(2).lower() or "b"
    size = _BYTES_BY_LABEL.get(unit)
    if size is None:
        raise ValueError(
            f"unknown memory unit {match.group(2)!r} in {text!r}; expected {_MEMORY_FORM}"
        )
    return int(match.group(1)) * size


def format_memory(value: int) -> str:
    if value == 0:
        return "0 bytes"
    for size, labels in _MEMORY_UNITS:
        if value % size == 0:
            return f"{value // size} {labels[0]}"
    raise AssertionError("unreachable: 1 divides everything")


# --------------------------------------------------------------------------
# Scalars


def parse_bool(text: str) -> bool:
    # Strict, as Flink: "yes"/"1" are more likely typos than intent.
    lowered = text.strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise ValueError(f"cannot parse {text!r}; expected 'true' or 'false'")


def _format_bool(value: bool) -> str:
    return "true" if value else "false"


def parse_list(text: str) -> tuple[str, ...]:
    """Split on ``;`` (Flink's separator) or ``,``; blanks are dropped."""
    return tuple(item.strip() for item in re.split(r"[;,]", text) if item.strip())


def _format_list(value: tuple[str, ...]) -> str:
    return ";".join(value)


def _parse_path(text: str) -> Path:
    if not text.strip():
        raise ValueError("expected a non-empty file system path")
    return Path(text.strip()).expanduser()


def _identity(text: str) -> str:
    return text


def _int_parser(
    key: str, min_value: int | None, max_value: int | None = None
) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"cannot parse {text!r}; expected an integer") from None
        if min_value is not None and value < min_value:
            raise ValueError(f"{value} is below the minimum of {min_value} for {key}")
        if max_value is not None and value > max_value:
            raise ValueError(f"{value} is above the maximum of {max_value} for {key}")
        return value

    return parse


def _port_parser(text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_PORT:
        raise ValueError(f"expected a port number from 0 to {MAX_PORT} (0: any free port)")
    return value


def _choice_parser(choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        wanted = text.strip().lower()
        for choice in choices:
            if choice.lower() == wanted:
                return choice
        raise ValueError(f"expected one of {', '.join(repr(c) for c in choices)}")

    return parse


def _duration_parser(key: str, min_value: timedelta | None) -> Callable[[str], timedelta]:
    def parse(text: str) -> timedelta:
        value = parse_duration(text)
        if min_value is not None and value < min_value:
            raise ValueError(
                f"{format_duration(value)} is below the minimum of "
                f"{format_duration(min_value)} for {key}"
            )
        return value

    return parse


# --------------------------------------------------------------------------
# Builders


def duration_option(
    key: str,
    default: timedelta,
    description: str,
    *,
    min_value: timedelta | None = None,
) -> ConfigOption[timedelta]:
    return ConfigOption(
        key,
        default,
        description,
        "Duration",
        _duration_parser(key, min_value),
        format_duration,
    )


def int_option(
    key: str,
    default: int,
    description: str,
    min_value: int | None = None,
    max_value: int | None = None,
) -> ConfigOption[int]:
    return ConfigOption(
        key, default, description, "Integer", _int_parser(key, min_value, max_value), str
    )


def port_option(key: str, default: int, description: str) -> ConfigOption[int]:
    """A TCP port, 0 to 65535 (0 asks the system for any free port)."""
    return ConfigOption(key, default, description, "Integer", _port_parser, str)


def choice_option(
    key: str, default: str, description: str, choices: tuple[str, ...]
) -> ConfigOption[str]:
    """One of ``choices`` (matched case-insensitively, read back as declared)."""
    if default not in choices:
        raise ValueError(f"default {default!r} of {key} is not one of {choices}")
    return ConfigOption(key, default, description, "Enum", _choice_parser(choices), _identity)


def string_option(key: str, default: str, description: str) -> ConfigOption[str]:
    return ConfigOption(key, default, description, "String", _identity, _identity)


def bool_option(key: str, default: bool, description: str) -> ConfigOption[bool]:
    return ConfigOption(key, default, description, "Boolean", parse_bool, _format_bool)


def memory_option(key: str, default: int, description: str) -> ConfigOption[int]:
    """A memory size in bytes, written in Flink's forms (``64 mb``, ``1g``)."""
    return ConfigOption(key, default, description, "MemorySize", parse_memory, format_memory)


def list_option(
    key: str, default: tuple[str, ...], description: str
) -> ConfigOption[tuple[str, ...]]:
    return ConfigOption(key, default, description, "List<String>", parse_list, _format_list)


def path_option(key: str, default: str, description: str) -> ConfigOption[Path]:
    """A path; ``~`` is expanded, but docs show the default as written."""
    return ConfigOption(
        key,
        _parse_path(default),
        description,
        "Path",
        _parse_path,
        str,
        default_text=default,
    )


# --------------------------------------------------------------------------
# Configuration


class Configuration:
    """Immutable ``str -> str`` options; typed reads go through :meth:`get`.

    Not a ``Mapping`` subclass on purpose: its ``get`` takes an option, not
    a key.
    """

    __slots__ = ("_data",)

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        data = dict(values or {})
        for key, value in data.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError(
                    f"configuration keys and values must be strings, got {key!r}: {value!r}"
                )
        self._data: dict[str, str] = data

    def get(self, option: ConfigOption[T]) -> T:
        """The parsed value, or the option's default when the key is absent."""
        raw = self._data.get(option.key)
        if raw is None:
            return option.default
        try:
            return option.parse(raw)
        except ValueError as exc:
            raise ConfigurationError(
                f"Invalid value {raw!r} for option '{option.key}' ({option.type_name}): {exc}"
            ) from exc

    def get_raw(self, key: str) -> str | None:
        return self._data.get(key)

    def with_(self, overrides: Mapping[str, str]) -> Configuration:
        """A new configuration where ``overrides`` win."""
        return Configuration({**self._data, **overrides})

    def with_value(self, option: ConfigOption[T], value: T) -> Configuration:
        """A new configuration with a typed value, stored in its string form."""
        return self.with_({option.key: option.format(value)})

    def subset(self, prefix: str) -> Configuration:
        """Keys under ``prefix``, prefix removed: how Flink hands an endpoint its options."""
        return Configuration(
            {k[len(prefix) :]: v for k, v in self._data.items() if k.startswith(prefix)}
        )

    def to_dict(self) -> dict[str, str]:
        return dict(self._data)

    def keys(self) -> list[str]:
        return list(self._data)

    def items(self) -> list[tuple[str, str]]:
        return list(self._data.items())

    def __contains__(self, key: object) -> bool:
        if isinstance(key, ConfigOption):
            key = key.key
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._data))

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Configuration):
            return NotImplemented
        return self._data == other._data

    def __repr__(self) -> str:
        return f"Configuration({self._data!r})"
