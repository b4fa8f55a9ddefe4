"""A connector package that cannot be had fails the statement clearly, and only it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import ExecutionError
from sparkgate.service.spark.packages import Package, ensure

_NOTHING = Package(
    "nothing",
    ("org.example.sparkgate:nothing_2.13:1.0",),
    "org.example.sparkgate.Nothing",
    "sql-gateway.connector.nothing.jars",
)


def test_an_unreachable_repository_is_a_clear_error_within_seconds(
    spark: SparkSession, tmp_path: Path
) -> None:
    started = time.monotonic()
    with pytest.raises(ExecutionError) as raised:
        ensure(spark, _NOTHING, tmp_path, "http://127.0.0.1:9/maven2/")
    message = str(raised.value)
    assert "Could not resolve org.example.sparkgate:nothing_2.13:1.0" in message
    assert "sql-gateway.connector.nothing.jars" in message  # how to provide it instead
    assert time.monotonic() - started < 60  # a hang guard, not a timing claim
    # Nothing half-made is kept: the next attempt resolves again.
    assert not (tmp_path / "nothing" / "jars.txt").exists()
    assert spark.sql("SELECT 1").collect()[0][0] == 1  # the engine goes on


def test_listed_jars_that_are_not_there_are_named(spark: SparkSession, tmp_path: Path) -> None:
    missing = tmp_path / "nothing-1.0.jar"
    with pytest.raises(ExecutionError, match=f"jars are missing: {missing}.*nothing.jars"):
        ensure(spark, _NOTHING, tmp_path, jars=[str(missing)])
