"""Loading the gateway's configuration: ``conf/config.yaml`` plus ``-D`` overrides.

As in Flink, the file holds flat dotted keys (nested mappings are flattened
too) and command-line ``-Dkey=value`` options win. Only ``sql-gateway.*``
keys are checked here; ``spark.*`` and other keys are session defaults and
pass through untouched.
"""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from sparkgate.api.config import ConfigOption, Configuration
from sparkgate.api.errors import ConfigurationError

__all__ = [
    "CONFIG_FILE_NAME",
    "CONF_DIR_ENV",
    "GATEWAY_PREFIX",
    "default_conf_dir",
    "load_configuration",
    "parse_dynamic_options",
]

logger = logging.getLogger(__name__)

CONFIG_FILE_NAME = "config.yaml"
CONF_DIR_ENV = "SPARKGATE_CONF_DIR"
GATEWAY_PREFIX = "sql-gateway."


def default_conf_dir() -> Path | None:
    """``$SPARKGATE_CONF_DIR``, else ``./conf`` if it exists, else ``None``."""
    from_env = os.environ.get(CONF_DIR_ENV, "").strip()
    if from_env:
        return Path(from_env).expanduser()
    local = Path.cwd() / "conf"
    return local if local.is_dir() else None


def parse_dynamic_options(args: Sequence[str]) -> dict[str, str]:
    """Parse ``-Dkey=value`` and ``-D key=value`` arguments; later ones win.

    Bare ``key=value`` items are accepted too, which is what an argparse
    ``-D`` option with ``action="append"`` collects.
    """
    result: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "-D":
            if index + 1 >= len(args):
                raise ConfigurationError("'-D' must be followed by key=value")
            index += 1
            item = args[index]
        elif arg.startswith("-D"):
            item = arg[2:]
        elif arg.startswith("-"):
            raise ConfigurationError(f"Unexpected argument {arg!r}; expected -Dkey=value")
        else:
            item = arg
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigurationError(
                f"Dynamic option {item!r} is not of the form key=value (e.g. "
                "-Dsql-gateway.session.idle-timeout=10min)"
            )
        result[key] = value
        index += 1
    return result


def load_configuration(
    conf_dir: Path | None,
    overrides: Mapping[str, str],
    known_options: Iterable[ConfigOption[Any]],
    known_prefixes: Iterable[str] = (),
) -> Configuration:
    """Read ``<conf_dir>/config.yaml``, apply ``overrides`` and validate.

    A missing file in an existing ``conf_dir`` means an empty configuration;
    a missing ``conf_dir`` itself is an error because it was asked for.
    Keys under ``known_prefixes`` are left for their owner (an endpoint) to
    validate. All problems are reported together.
    """
    values: dict[str, str] = {}
    sources: dict[str, str] = {}
    if conf_dir is not None:
        config_file = conf_dir / CONFIG_FILE_NAME
        for key, value in _read_config_file(conf_dir, config_file).items():
            values[key] = value
            sources[key] = str(config_file)
    for key, value in overrides.items():
        values[key] = value
        sources[key] = f"-D{key}"

    _validate(values, sources, list(known_options), tuple(known_prefixes))
    logger.debug("Loaded %d configuration entries", len(values))
    return Configuration(values)


def _read_config_file(conf_dir: Path, config_file: Path) -> dict[str, str]:
    if not conf_dir.is_dir():
        raise ConfigurationError(f"Configuration directory {conf_dir} does not exist")
    if not config_file.exists():
        logger.info("No %s in %s; using defaults", CONFIG_FILE_NAME, conf_dir)
        return {}
    try:
        text = config_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"Cannot read configuration file {config_file}: {exc}") from exc
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigurationError(
            f"Invalid YAML in configuration file {config_file}: {exc}"
        ) from exc
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ConfigurationError(
            f"Configuration file {config_file} must hold a mapping of keys to values, "
            f"not a {type(document).__name__}"
        )
    flat: dict[str, str] = {}
    _flatten(document, "", flat, config_file)
    return flat


def _flatten(node: dict[Any, Any], prefix: str, out: dict[str, str], source: Path) -> None:
    for raw_key, value in node.items():
        if isinstance(raw_key, (dict, list)) or raw_key is None:
            raise ConfigurationError(f"Invalid key {raw_key!r} in {source}")
        key = prefix + _scalar_text(raw_key)
        if isinstance(value, dict):
            _flatten(value, key + ".", out, source)
            continue
        if value is None:
            # Usually a nested section whose entries are all commented out.
            logger.warning("Ignoring '%s' in %s: it has no value", key, source)
            continue
        if key in out:
            raise ConfigurationError(f"Option '{key}' is given twice in {source}")
        if isinstance(value, list):
            if any(isinstance(item, (dict, list)) or item is None for item in value):
                raise ConfigurationError(
                    f"Option '{key}' in {source}: list items must be plain values"
                )
            out[key] = ";".join(_scalar_text(item) for item in value)
        else:
            out[key] = _scalar_text(value)


def _scalar_text(value: object) -> str:
    # YAML booleans must read back as Flink's "true"/"false", not Python's.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _validate(
    values: Mapping[str, str],
    sources: Mapping[str, str],
    known_options: Sequence[ConfigOption[Any]],
    known_prefixes: tuple[str, ...],
) -> None:
    by_key = {option.key: option for option in known_options}
    problems: list[str] = []
    for key, raw in values.items():
        option = by_key.get(key)
        if option is not None:
            try:
                option.parse(raw)
            except ValueError as exc:
                problems.append(
                    f"Invalid value {raw!r} for option '{key}' ({option.type_name}, "
                    f"from {sources[key]}): {exc}"
                )
            continue
        if not key.startswith(GATEWAY_PREFIX) or key.startswith(known_prefixes):
            continue
        message = f"Unknown option '{key}' (from {sources[key]})."
        close = difflib.get_close_matches(key, list(by_key), n=1, cutoff=0.6)
        if close:
            message += f" Did you mean '{close[0]}'?"
        problems.append(message)
    if problems:
        raise ConfigurationError("\n".join(problems))
