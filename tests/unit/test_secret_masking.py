"""Secret values masked in free text and in every log record (sql/secrets.py,
sql/secret_logs.py)."""

from __future__ import annotations

import io
import json
import logging
import pickle
from collections.abc import Iterator

import pytest

from sparkgate.api.errors import ConfigurationError
from sparkgate.sql import secrets
from sparkgate.sql.secret_logs import (
    MaskingLogRecord,
    SecretMaskingFilter,
    install_secret_masking,
    masked_exception,
)
from sparkgate.sql.secrets import (
    HIDDEN,
    configure_redaction,
    forget_secret_values,
    is_sensitive,
    mask_secrets,
    masked_options,
    masked_statement,
    remember_secret,
    remember_secrets,
)


@pytest.fixture(autouse=True)
def no_remembered_values() -> Iterator[None]:
    """None remembered during the test; those of the process (a service test's) after it."""
    saved = (dict(secrets._recent), set(secrets._pinned))
    forget_secret_values()
    yield
    configure_redaction({})  # Spark's default pattern again
    forget_secret_values()
    for value in saved[1]:
        remember_secret(value, pinned=True)
    for value in saved[0]:
        remember_secret(value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "SET 'spark.hadoop.fs.s3a.secret.key' = 'wJalr/K7MDENG+bPx=='",
            "SET 'spark.hadoop.fs.s3a.secret.key' = '******'",
        ),
        ("SET spark.hadoop.fs.s3a.access.key=AKIA123", "SET spark.hadoop.fs.s3a.access.key=******"),
        (
            "CREATE CATALOG c WITH ('type'='jdbc', 'password' = 'p''w', 'username'='u')",
            "CREATE CATALOG c WITH ('type'='jdbc', 'password' = '******', 'username'='u')",
        ),
        (
            "CREATE TABLE t USING jdbc OPTIONS (url 'jdbc:x', password 'pw', user 'u')",
            "CREATE TABLE t USING jdbc OPTIONS (url 'jdbc:x', password '******', user 'u')",
        ),
        (
            "'url' = 'jdbc:postgresql://h/db?user=u&password=pw&ssl=true'",
            "'url' = 'jdbc:postgresql://h/db?user=u&password=******&ssl=true'",
        ),
        (
            "jdbc:sqlserver://h;user=sa;password=pw;db=x",
            "jdbc:sqlserver://h;user=sa;password=******;db=x",
        ),
        ("jdbc:postgresql://sa:pw@h:5432/db", "jdbc:postgresql://sa:******@h:5432/db"),
        ("Map(url -> jdbc:x, password -> pw)", "Map(url -> jdbc:x, password -> ******)"),
        ('{"password": "pw", "user": "u"}', '{"password": "******", "user": "u"}'),
        ("{user=u, auth.token=t}", "{user=u, auth.token=******}"),
        # Nothing secret: untouched.
        ("Invalid fetch token 5: tokens start at 0.", "Invalid fetch token 5: tokens start at 0."),
        ("http://127.0.0.1:8083/v1/sessions", "http://127.0.0.1:8083/v1/sessions"),
        ("SET 'spark.ui.enabled' = 'false'", "SET 'spark.ui.enabled' = 'false'"),
        ("", ""),
    ],
)
def test_mask_secrets(text: str, expected: str) -> None:
    assert mask_secrets(text) == expected


def test_sparks_default_redaction_regex_decides_when_none_is_configured() -> None:
    configure_redaction({"sql-gateway.endpoint.type": "rest"})
    for key in (
        "spark.hadoop.fs.s3a.secret.key",
        "spark.hadoop.fs.s3a.access.key",
        "fs.s3a.AccessKey",
        "spark.hadoop.google.cloud.auth.credential.file",  # 'credential': Spark 4's default
        "my.password",
    ):
        assert is_sensitive(key), key
    assert not is_sensitive("spark.mykey.value")
    assert mask_secrets("SET spark.hadoop.fs.s3a.secret.key=wJalr-default") == (
        f"SET spark.hadoop.fs.s3a.secret.key={HIDDEN}"
    )


def test_a_configured_redaction_regex_decides_which_keys_are_secret() -> None:
    configure_redaction({"spark.redaction.regex": "(?i)secret|password|mykey"})
    assert is_sensitive("spark.hadoop.fs.s3a.secret.key")
    assert is_sensitive("spark.app.MyKey")
    # It replaces Spark's default, as in Spark; Flink's sensitive keys stay secret.
    assert not is_sensitive("spark.hadoop.fs.s3a.access.key")
    assert is_sensitive("my.api.token") and is_sensitive("my.apikey")
    assert masked_options({"spark.app.mykey": "value-of-mykey", "color": "blue"}) == {
        "spark.app.mykey": HIDDEN,
        "color": "blue",
    }
    assert mask_secrets("value-of-mykey") == HIDDEN  # remembered under its key
    assert masked_statement("SET 'spark.app.mykey' = 'in-a-statement'") == (
        f"SET 'spark.app.mykey' = '{HIDDEN}'"
    )
    # Free text with a key only the configured pattern makes secret (no Flink word).
    assert mask_secrets("Map(app.mykey -> k-in-text, x -> y)") == (
        f"Map(app.mykey -> {HIDDEN}, x -> y)"
    )
    remember_secrets({"spark.gateway.mykey": "pinned-mykey"}, pinned=True)
    assert mask_secrets("echo pinned-mykey") == f"echo {HIDDEN}"
    configure_redaction({})
    assert not is_sensitive("spark.app.mykey")
    assert mask_secrets("SET spark.app.mykey=shown") == "SET spark.app.mykey=shown"


def test_an_anchored_redaction_regex_is_found_within_a_text() -> None:
    # Spark matches the pattern against the key: '^' is the key's start, not the text's.
    configure_redaction({"spark.redaction.regex": r"^internal\."})
    assert is_sensitive("internal.signing") and not is_sensitive("spark.internal.signing")
    assert mask_secrets("failed: SET internal.signing=abc, spark.internal.signing=def") == (
        f"failed: SET internal.signing={HIDDEN}, spark.internal.signing=def"
    )


def test_a_redaction_regex_that_does_not_compile_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"spark\.redaction\.regex"):
        configure_redaction({"spark.redaction.regex": "(?i)secret|("})
    assert is_sensitive("spark.hadoop.fs.s3a.access.key")  # the one in force is kept


def test_values_seen_under_a_secret_key_are_masked_without_it() -> None:
    masked_statement("CREATE TABLE t WITH ('secret' = 'from-a-statement')")
    masked_options({"api-key": "from-options", "color": "blue-and-green"})
    remember_secrets({"spark.hadoop.fs.s3a.secret.key": "AKIA-at-start", "x": "not-secret"})
    text = "from-a-statement / from-options / AKIA-at-start / blue-and-green / not-secret"
    assert mask_secrets(text) == f"{HIDDEN} / {HIDDEN} / {HIDDEN} / blue-and-green / not-secret"


def test_free_text_masks_a_value_again_within_itself_only() -> None:
    text = "Syntax error at or near 'hunter2-quoted': SET 'my.password' = 'hunter2-quoted'"
    assert mask_secrets(text) == (
        f"Syntax error at or near '{HIDDEN}': SET 'my.password' = '{HIDDEN}'"
    )
    # Free text may pair a secret word with an ordinary one: nothing is remembered.
    assert mask_secrets("Invalid password: expected 8 characters") == (
        f"Invalid password: {HIDDEN} 8 characters"
    )
    assert mask_secrets("expected 'hunter2-quoted'") == "expected 'hunter2-quoted'"


@pytest.mark.parametrize("value", ["true", "false", "12345678", "100 ms", "short", HIDDEN])
def test_plain_or_short_values_are_not_remembered(value: str) -> None:
    remember_secret(value)
    assert mask_secrets(f"x {value} y") == f"x {value} y"


def test_remembered_values_are_bounded_but_pinned_ones_stay() -> None:
    remember_secret("pinned-at-start", pinned=True)
    for i in range(200):
        remember_secret(f"session-value-{i:04d}")
    assert mask_secrets("pinned-at-start") == HIDDEN
    assert mask_secrets("session-value-0199") == HIDDEN
    assert mask_secrets("session-value-0000") == "session-value-0000"
    assert len(secrets._values) <= secrets._MAX_VALUES + 1


def test_the_longest_value_is_masked_whole() -> None:
    remember_secret("abcdef")
    remember_secret("abcdef-ghijkl")
    assert mask_secrets("x abcdef-ghijkl y") == f"x {HIDDEN} y"


def _logger(name: str, formatter: logging.Formatter) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    logger = logging.getLogger(name)
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    return logger, stream


class _JsonFormatter(logging.Formatter):
    """Like PySpark's: the exception's ``str`` straight from ``exc_info``."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {"msg": record.getMessage()}
        if record.exc_info and record.exc_info[1] is not None:
            entry["exception"] = str(record.exc_info[1])
        return json.dumps(entry)


def test_every_record_is_masked_whatever_its_formatter() -> None:
    previous = logging.getLogRecordFactory()
    install_secret_masking()
    install_secret_masking()  # idempotent
    try:
        plain, plain_out = _logger("secrets.plain", logging.Formatter("%(message)s"))
        structured, json_out = _logger("secrets.json", _JsonFormatter())
        statement = "SET 'a.password' = 'hunter2-log'"
        masked_statement(statement)  # as the statement's job description is
        for logger in (plain, structured):
            logger.info("Running %s", statement)
            try:
                try:
                    raise KeyError("token=inner-secret")
                except KeyError as exc:
                    raise RuntimeError("The value 'hunter2-log' cannot be cast") from exc
            except RuntimeError:
                logger.exception("failed")
        for text in (plain_out.getvalue(), json_out.getvalue()):
            assert "hunter2-log" not in text and "inner-secret" not in text, text
            assert "a.password" in text and "cannot be cast" in text
        assert "RuntimeError: The value '******' cannot be cast" in plain_out.getvalue()
        assert "KeyError: 'token=******'" in plain_out.getvalue()
        record = logging.getLogRecordFactory()("n", 20, "p", 1, "%s", ("password=x",), None)
        assert isinstance(record, MaskingLogRecord)
        assert record.getMessage() == "password=******"
        assert pickle.loads(pickle.dumps(record)).getMessage() == "password=******"
    finally:
        logging.setLogRecordFactory(previous)


def test_a_filter_masks_records_made_without_the_factory() -> None:
    record = logging.makeLogRecord({"msg": "url %s", "args": ("jdbc:x://u:pw-made@h",)})
    assert SecretMaskingFilter().filter(record)
    assert record.getMessage() == "url jdbc:x://u:******@h"


def test_an_exception_without_secrets_is_itself() -> None:
    error = ValueError("plain")
    assert masked_exception(error) is error
    shown = masked_exception(ValueError("password=pw"))
    assert type(shown).__name__ == "ValueError" and str(shown) == "password=******"
