"""Flink's ALTER TABLE forms: which are Flink's, and what each does to a definition."""

from __future__ import annotations

import pytest

from sparkgate.api.errors import SqlParseError
from sparkgate.service.streaming.alter import apply_alteration, parse_alter_table
from sparkgate.service.streaming.ddl import parse_connector_table

TABLE = parse_connector_table(
    "CREATE TABLE t (a INT, b STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts, "
    "PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'datagen')"
)


@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE t ADD COLUMNS (c INT)",
        "ALTER TABLE t ADD COLUMN c INT",
        "ALTER TABLE t ADD IF NOT EXISTS PARTITION (p = 1)",
        "ALTER TABLE t DROP COLUMN c",
        "ALTER TABLE t DROP IF EXISTS PARTITION (p = 1)",
        "ALTER TABLE t SET TBLPROPERTIES ('k' = 'v')",
        "ALTER TABLE t UNSET TBLPROPERTIES ('k')",
        "ALTER TABLE t RENAME COLUMN a TO b",
        "ALTER TABLE t ALTER COLUMN a TYPE BIGINT",
        "ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0)",
        "ALTER TABLE t SET LOCATION '/x'",
    ],
)
def test_sparks_forms_are_left_to_spark(statement: str) -> None:
    assert parse_alter_table(statement) is None


def columns(statement: str) -> list[str]:
    assert TABLE is not None
    change = parse_alter_table(statement)
    assert change is not None
    return [c.name for c in apply_alteration(TABLE, change).columns]


def test_columns_are_added_and_moved_where_asked() -> None:
    assert columns("ALTER TABLE t ADD c INT FIRST") == ["c", "a", "b", "ts"]
    assert columns("ALTER TABLE t ADD (c INT AFTER a, d AS a + 1)") == ["a", "c", "b", "ts", "d"]
    assert columns("ALTER TABLE t MODIFY b BIGINT FIRST") == ["b", "a", "ts"]
    assert columns("ALTER TABLE t DROP (b)") == ["a", "ts"]
    assert columns("ALTER TABLE t RENAME b TO c") == ["a", "c", "ts"]


@pytest.mark.parametrize(
    ("statement", "error"),
    [
        ("ALTER TABLE t ADD a INT", "already exists"),
        ("ALTER TABLE t MODIFY z INT", "does not exist"),
        ("ALTER TABLE t DROP ts", "used by the watermark"),
        ("ALTER TABLE t DROP a", "in the primary key"),
        ("ALTER TABLE t ADD WATERMARK FOR ts AS ts", "already has a watermark"),
        ("ALTER TABLE t ADD PRIMARY KEY (b) NOT ENFORCED", "already has a primary key"),
        ("ALTER TABLE t RESET ('connector')", "cannot RESET the 'connector'"),
        ("ALTER TABLE t ADD c INT AFTER z", "does not exist"),
    ],
)
def test_what_does_not_fit_is_refused(statement: str, error: str) -> None:
    assert TABLE is not None
    change = parse_alter_table(statement)
    assert change is not None
    with pytest.raises(SqlParseError, match=error):
        apply_alteration(TABLE, change)


def test_options_keys_and_watermark() -> None:
    assert TABLE is not None
    change = parse_alter_table("ALTER TABLE IF EXISTS db.t SET ('number-of-rows' = '3')")
    assert change is not None and change.if_exists and change.name == ("db", "t")
    assert apply_alteration(TABLE, change).options["number-of-rows"] == "3"
    dropped = parse_alter_table("ALTER TABLE t DROP CONSTRAINT pk")
    assert dropped is not None and apply_alteration(TABLE, dropped).primary_key == ()
    marked = parse_alter_table("ALTER TABLE t MODIFY WATERMARK FOR ts AS ts - INTERVAL '2' SECOND")
    assert marked is not None
    altered = apply_alteration(TABLE, marked)
    assert altered.watermark is not None and altered.watermark.delay == "2 seconds"
    renamed = parse_alter_table("ALTER TABLE t RENAME TO c.d.u")
    assert renamed is not None and renamed.rename_to == ("c", "d", "u")
