"""Tests for typed options, Configuration and configuration loading."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from sparkgate.api.config import (
    ConfigOption,
    Configuration,
    bool_option,
    duration_option,
    format_duration,
    format_memory,
    int_option,
    list_option,
    memory_option,
    parse_duration,
    parse_memory,
    path_option,
    string_option,
)
from sparkgate.api.errors import ConfigurationError
from sparkgate.server.config import (
    default_conf_dir,
    load_configuration,
    parse_dynamic_options,
)
from sparkgate.service.options import (
    DATA_DIR,
    OPERATION_LOG_ENABLED,
    SERVICE_OPTIONS,
    SESSION_IDLE_TIMEOUT,
    SESSION_MAX_NUM,
    WORKER_KEEPALIVE_TIME,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------
# Durations


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5 min", timedelta(minutes=5)),
        ("5min", timedelta(minutes=5)),
        ("5 minutes", timedelta(minutes=5)),
        ("1 m", timedelta(minutes=1)),
        ("30 s", timedelta(seconds=30)),
        ("30s", timedelta(seconds=30)),
        ("30 sec", timedelta(seconds=30)),
        ("30 seconds", timedelta(seconds=30)),
        ("100 ms", timedelta(milliseconds=100)),
        ("100 milliseconds", timedelta(milliseconds=100)),
        ("2 h", timedelta(hours=2)),
        ("2 hours", timedelta(hours=2)),
        ("1 d", timedelta(days=1)),
        ("3 days", timedelta(days=3)),
        ("500", timedelta(milliseconds=500)),
        ("0", timedelta(0)),
        ("-1 min", timedelta(minutes=-1)),
        ("7 us", timedelta(microseconds=7)),
        ("7 µs", timedelta(microseconds=7)),
        ("3000 ns", timedelta(microseconds=3)),
        ("  10 MIN  ", timedelta(minutes=10)),
    ],
)
def test_parse_duration(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "min",
        "5 fortnights",
        "five min",
        "1.5 h",
        "5 min 3 s",
        "1 ns",
        "--5 s",
        "9999999999 d",
    ],
)
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match=r"duration|resolution|unit|range"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (timedelta(minutes=5), "5 min"),
        (timedelta(minutes=1), "1 min"),
        (timedelta(seconds=30), "30 s"),
        (timedelta(seconds=90), "90 s"),
        (timedelta(milliseconds=100), "100 ms"),
        (timedelta(hours=2), "2 h"),
        (timedelta(days=1), "1 d"),
        (timedelta(hours=25), "25 h"),
        (timedelta(microseconds=7), "7 µs"),
        (timedelta(0), "0 ms"),
        (timedelta(minutes=-5), "-5 min"),
    ],
)
def test_format_duration_round_trips(value: timedelta, expected: str) -> None:
    assert format_duration(value) == expected
    assert parse_duration(expected) == value


# --------------------------------------------------------------------------
# Memory sizes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("64 mb", 64 << 20),
        ("64mb", 64 << 20),
        ("512m", 512 << 20),
        ("1g", 1 << 30),
        ("2 GB", 2 << 30),
        ("1024", 1024),
        ("1024 bytes", 1024),
        ("16 k", 16 << 10),
        ("1 tb", 1 << 40),
        ("3 mebibytes", 3 << 20),
    ],
)
def test_parse_memory(text: str, expected: int) -> None:
    assert parse_memory(text) == expected


@pytest.mark.parametrize("text", ["", "mb", "-1 mb", "1.5g", "4 pb"])
def test_parse_memory_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="memory"):
        parse_memory(text)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(64 << 20, "64 mb"), (1 << 30, "1 gb"), (1000, "1000 bytes"), (0, "0 bytes")],
)
def test_format_memory_round_trips(value: int, expected: str) -> None:
    assert format_memory(value) == expected
    assert parse_memory(expected) == value


# --------------------------------------------------------------------------
# Options and Configuration

_INT = int_option("test.int", 3, "An integer.", min_value=1)
_BOOL = bool_option("test.bool", False, "A flag.")
_LIST = list_option("test.list", ("a",), "A list.")
_MEM = memory_option("test.mem", 1 << 20, "Memory.")
_STR = string_option("test.str", "x", "A string.")
_DUR = duration_option("test.dur", timedelta(seconds=1), "A duration.")


@pytest.mark.parametrize(
    ("option", "raw", "expected"),
    [
        (_INT, "42", 42),
        (_INT, " 7 ", 7),
        (_BOOL, "true", True),
        (_BOOL, "FALSE", False),
        (_LIST, "a;b;c", ("a", "b", "c")),
        (_LIST, "a, b", ("a", "b")),
        (_LIST, "", ()),
        (_MEM, "2g", 2 << 30),
        (_STR, "hello world", "hello world"),
        (_DUR, "10s", timedelta(seconds=10)),
        (SESSION_IDLE_TIMEOUT, "0", timedelta(0)),
        (SESSION_IDLE_TIMEOUT, "-1 s", timedelta(seconds=-1)),
    ],
)
def test_get_parses_raw_value(option: ConfigOption[object], raw: str, expected: object) -> None:
    assert Configuration({option.key: raw}).get(option) == expected


@pytest.mark.parametrize("option", [_INT, _BOOL, _LIST, _MEM, _STR, _DUR, *SERVICE_OPTIONS])
def test_get_absent_gives_default_and_default_round_trips(
    option: ConfigOption[object],
) -> None:
    assert Configuration().get(option) == option.default
    assert option.parse(option.format(option.default)) == option.default


@pytest.mark.parametrize(
    ("option", "raw", "form"),
    [
        (_INT, "many", "integer"),
        (_INT, "0", "minimum"),
        (_BOOL, "yes", "'true' or 'false'"),
        (_MEM, "lots", "memory size"),
        (SESSION_IDLE_TIMEOUT, "5 parsecs", "duration"),
        (WORKER_KEEPALIVE_TIME, "-1 s", "minimum"),
        (SESSION_MAX_NUM, "1e6", "integer"),
    ],
)
def test_get_bad_value_names_key_value_and_form(
    option: ConfigOption[object], raw: str, form: str
) -> None:
    conf = Configuration({option.key: raw})
    with pytest.raises(ConfigurationError) as info:
        conf.get(option)
    message = str(info.value)
    assert option.key in message
    assert repr(raw) in message
    assert form in message


def test_path_option_expands_home_but_displays_as_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    option = path_option("test.path", "~/data", "A path.")
    assert option.default == tmp_path / "data"
    assert option.default_display == "~/data"
    assert Configuration({"test.path": "~/other"}).get(option) == tmp_path / "other"
    assert DATA_DIR.default_display == "~/.sparkgate"


def test_configuration_is_immutable_and_copies() -> None:
    source = {"a.b": "1", "a.c": "2", "other": "3"}
    conf = Configuration(source)
    source["a.b"] = "changed"
    assert conf.get_raw("a.b") == "1"

    updated = conf.with_({"a.b": "9", "new": "x"})
    assert conf.get_raw("a.b") == "1"
    assert "new" not in conf
    assert updated.to_dict() == {"a.b": "9", "a.c": "2", "other": "3", "new": "x"}

    exported = conf.to_dict()
    exported["a.b"] = "mutated"
    assert conf.get_raw("a.b") == "1"
    assert conf.get_raw("missing") is None


def test_configuration_mapping_behaviour() -> None:
    conf = Configuration({"x": "1", SESSION_IDLE_TIMEOUT.key: "1 min"})
    assert sorted(conf) == sorted(["x", SESSION_IDLE_TIMEOUT.key])
    assert len(conf) == 2
    assert "x" in conf
    assert SESSION_IDLE_TIMEOUT in conf
    assert SESSION_MAX_NUM not in conf
    assert conf == Configuration({"x": "1", SESSION_IDLE_TIMEOUT.key: "1 min"})
    assert conf != Configuration({"x": "1"})


def test_with_value_stores_string_form() -> None:
    conf = Configuration().with_value(SESSION_IDLE_TIMEOUT, timedelta(seconds=30))
    assert conf.get_raw(SESSION_IDLE_TIMEOUT.key) == "30 s"
    assert conf.get(SESSION_IDLE_TIMEOUT) == timedelta(seconds=30)


def test_subset_strips_prefix() -> None:
    conf = Configuration(
        {
            "sql-gateway.endpoint.rest.address": "0.0.0.0",
            "sql-gateway.endpoint.rest.port": "8083",
            "sql-gateway.endpoint.hiveserver2.port": "10000",
            "spark.master": "local[*]",
        }
    )
    assert conf.subset("sql-gateway.endpoint.rest.").to_dict() == {
        "address": "0.0.0.0",
        "port": "8083",
    }
    assert conf.subset("nothing.").to_dict() == {}


def test_configuration_rejects_non_string_values() -> None:
    with pytest.raises(TypeError):
        Configuration({"a": 1})  # type: ignore[dict-item]


# --------------------------------------------------------------------------
# Loading


def _write(conf_dir: Path, text: str) -> Path:
    conf_dir.mkdir(parents=True, exist_ok=True)
    path = conf_dir / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_flat_keys(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "sql-gateway.session.idle-timeout: 10 min\n"
        "sql-gateway.session.max-num: 20\n"
        "sql-gateway.operation.log.enabled: false\n",
    )
    conf = load_configuration(tmp_path, {}, SERVICE_OPTIONS)
    assert conf.get(SESSION_IDLE_TIMEOUT) == timedelta(minutes=10)
    assert conf.get(SESSION_MAX_NUM) == 20
    assert conf.get(OPERATION_LOG_ENABLED) is False
    assert conf.get_raw(OPERATION_LOG_ENABLED.key) == "false"


def test_load_flattens_nested_mappings_and_stringifies(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "sql-gateway:\n"
        "  session:\n"
        "    idle-timeout: 30 s\n"
        "    max-num: 7\n"
        "  operation.log.enabled: true\n"
        "spark:\n"
        "  master: local[2]\n"
        "  jars: [a.jar, b.jar]\n"
        "  sql.ansi.enabled: yes\n"
        "  # memory: commented out\n"
        "  ui: \n",
    )
    conf = load_configuration(tmp_path, {}, SERVICE_OPTIONS)
    assert conf.to_dict() == {
        "sql-gateway.session.idle-timeout": "30 s",
        "sql-gateway.session.max-num": "7",
        "sql-gateway.operation.log.enabled": "true",
        "spark.master": "local[2]",
        "spark.jars": "a.jar;b.jar",
        "spark.sql.ansi.enabled": "true",
    }


def test_same_key_flat_and_nested_is_an_error(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "sql-gateway.session.max-num: 1\nsql-gateway:\n  session:\n    max-num: 2\n",
    )
    with pytest.raises(ConfigurationError, match=r"sql-gateway\.session\.max-num.*twice"):
        load_configuration(tmp_path, {}, SERVICE_OPTIONS)


def test_overrides_win_over_file(tmp_path: Path) -> None:
    _write(tmp_path, "sql-gateway.session.idle-timeout: 10 min\nspark.master: local[1]\n")
    overrides = parse_dynamic_options(
        ["-Dsql-gateway.session.idle-timeout=1 h", "-D", "spark.master=local[4]"]
    )
    conf = load_configuration(tmp_path, overrides, SERVICE_OPTIONS)
    assert conf.get(SESSION_IDLE_TIMEOUT) == timedelta(hours=1)
    assert conf.get_raw("spark.master") == "local[4]"


def test_unknown_gateway_key_suggests_closest(tmp_path: Path) -> None:
    _write(tmp_path, "sql-gateway.session.idle-timout: 1 min\n")
    with pytest.raises(ConfigurationError) as info:
        load_configuration(tmp_path, {}, SERVICE_OPTIONS)
    message = str(info.value)
    assert "Unknown option 'sql-gateway.session.idle-timout'" in message
    assert "Did you mean 'sql-gateway.session.idle-timeout'?" in message
    assert "config.yaml" in message


def test_unknown_override_key_is_reported_as_from_command_line() -> None:
    with pytest.raises(ConfigurationError, match=r"'sql-gateway\.nope'.*-Dsql-gateway\.nope"):
        load_configuration(None, {"sql-gateway.nope": "1"}, SERVICE_OPTIONS)


def test_all_problems_reported_together() -> None:
    overrides = {
        "sql-gateway.session.max-num": "lots",
        "sql-gateway.worker.thread.max": "2",
    }
    with pytest.raises(ConfigurationError) as info:
        load_configuration(None, overrides, SERVICE_OPTIONS)
    message = str(info.value)
    assert "'lots'" in message and "sql-gateway.session.max-num" in message
    assert "Did you mean 'sql-gateway.worker.threads.max'?" in message


def test_bad_value_names_key_value_and_form(tmp_path: Path) -> None:
    _write(tmp_path, "sql-gateway.session.idle-timeout: soon\n")
    with pytest.raises(ConfigurationError) as info:
        load_configuration(tmp_path, {}, SERVICE_OPTIONS)
    message = str(info.value)
    assert "sql-gateway.session.idle-timeout" in message
    assert "'soon'" in message
    assert "5 min" in message  # the expected form is shown


def test_spark_and_other_keys_pass_through_untouched() -> None:
    overrides = {
        "spark.sql.shuffle.partitions": "8",
        "spark.whatever.made.up": "x",
        "pipeline.name": "anything",
    }
    conf = load_configuration(None, overrides, SERVICE_OPTIONS)
    assert conf.to_dict() == overrides


@pytest.mark.parametrize(
    ("key", "accepted"),
    [
        ("sql-gateway.endpoint.rest.port", True),
        ("sql-gateway.endpoint.hiveserver2.port", True),
        ("sql-gateway.endpoint.type", False),
        ("sql-gateway.endpointx.rest.port", False),
    ],
)
def test_known_prefixes_are_left_to_their_owner(key: str, accepted: bool) -> None:
    prefixes = ("sql-gateway.endpoint.rest.", "sql-gateway.endpoint.hiveserver2.")
    if accepted:
        conf = load_configuration(None, {key: "not-validated"}, SERVICE_OPTIONS, prefixes)
        assert conf.get_raw(key) == "not-validated"
    else:
        with pytest.raises(ConfigurationError, match="Unknown option"):
            load_configuration(None, {key: "1"}, SERVICE_OPTIONS, prefixes)


def test_missing_file_in_existing_dir_is_empty(tmp_path: Path) -> None:
    assert load_configuration(tmp_path, {}, SERVICE_OPTIONS).to_dict() == {}


def test_missing_conf_dir_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_configuration(tmp_path / "absent", {}, SERVICE_OPTIONS)


@pytest.mark.parametrize(
    "text",
    ["sql-gateway: [unclosed\n", "- just\n- a list\n", "key: value\n  bad indent: x\n"],
)
def test_invalid_yaml_names_the_file(tmp_path: Path, text: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigurationError) as info:
        load_configuration(tmp_path, {}, SERVICE_OPTIONS)
    assert str(path) in str(info.value)


def test_empty_and_comment_only_file_is_empty(tmp_path: Path) -> None:
    _write(tmp_path, "# nothing here\n")
    assert load_configuration(tmp_path, {}, SERVICE_OPTIONS).to_dict() == {}


def test_shipped_example_config_holds_the_defaults() -> None:
    conf = load_configuration(
        REPO_ROOT / "conf",
        {},
        SERVICE_OPTIONS,
        known_prefixes=("sql-gateway.endpoint.",),
    )
    for option in SERVICE_OPTIONS:
        assert option in conf, option.key
        assert conf.get(option) == option.default, option.key


# --------------------------------------------------------------------------
# -D options and the conf dir


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], {}),
        (["-Da=1"], {"a": "1"}),
        (["-D", "a=1"], {"a": "1"}),
        (["-Da=x=y"], {"a": "x=y"}),
        (["-Da="], {"a": ""}),
        (["-Da=1", "-Da=2"], {"a": "2"}),
        (["b=2"], {"b": "2"}),
        (
            ["-Dspark.master=local[*]", "-D", "k = v"],
            {"spark.master": "local[*]", "k": " v"},
        ),
    ],
)
def test_parse_dynamic_options(args: list[str], expected: dict[str, str]) -> None:
    assert parse_dynamic_options(args) == expected


@pytest.mark.parametrize("args", [["-Dnoequals"], ["-D"], ["-D", "x"], ["-D=1"], ["--other"]])
def test_parse_dynamic_options_rejects(args: list[str]) -> None:
    with pytest.raises(ConfigurationError):
        parse_dynamic_options(args)


def test_default_conf_dir_prefers_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPARKGATE_CONF_DIR", str(tmp_path / "elsewhere"))
    assert default_conf_dir() == tmp_path / "elsewhere"

    monkeypatch.delenv("SPARKGATE_CONF_DIR")
    assert default_conf_dir() == tmp_path / "conf"

    (tmp_path / "conf").rmdir()
    assert default_conf_dir() is None
