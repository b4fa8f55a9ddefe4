"""INSERT OVERWRITE is atomic to a real crash (statements/overwrite.py).

A real gateway process runs two slow INSERT OVERWRITEs (reflect() sleeps a
row), of a parquet table and of a static partition of a partitioned one,
both with DECIMAL and TIMESTAMP rows. Once their rows are being written into
the staging directories beside the ones they replace, another session still
reads the old rows; then the gateway and its Spark JVM are SIGKILLed. A new
gateway on the same data directory gives back exactly the old rows and
partitions, leaves no staged or set-aside directory in the warehouse, and
lists both jobs FAILED with the restart as their cause. An overwrite that
completes replaces the rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.processes import Rest, gateway, kill_with_spark, log_tail, spark_options, wait_for

pytestmark = pytest.mark.timeout(900)

# Two task slots sleep (the two overwrites): two more for the readers.
OPTIONS = tuple(spark_options("local[4]"))
ASYNC = {"table.dml-sync": "false"}
# Rows for minutes on one task (reflect() sleeps 20 ms a row): cut off in the middle.
SLOW = (
    "SELECT id, CAST(id AS DECIMAL(10, 2)) AS amount, TIMESTAMP '2030-01-01 00:00:00' AS at "
    "FROM range(0, 100000, 1, 1) "
    "WHERE reflect('java.lang.Thread', 'sleep', CAST(20 AS BIGINT)) IS NOT NULL"
)
OLD_ORDERS = [
    [1, "9.99", "2026-01-02 03:04:05.678"],
    [2, "120.50", "2026-02-03 04:05:06"],
    [3, "-42.00", "2026-03-04 05:06:07"],
]
OLD_PARTS = [
    [10, "1.25", "2026-01-01 00:00:01", "2026-01-01"],
    [11, "99999999.99", "2026-01-01 23:59:59.999", "2026-01-01"],
    [20, "0.01", "2026-01-02 12:00:00", "2026-01-02"],
]
OLD_PARTITIONS = [["day=2026-01-01"], ["day=2026-01-02"]]


def orders(rest: Rest) -> list[list[Any]]:
    return rest.rows(
        "SELECT id, CAST(amount AS STRING), CAST(at AS STRING) FROM orders ORDER BY id"
    )


def parts(rest: Rest) -> list[list[Any]]:
    return rest.rows(
        "SELECT id, CAST(amount AS STRING), CAST(at AS STRING), day FROM parts ORDER BY id"
    )


def location(rest: Rest, table: str) -> Path:
    """The table's directory, from DESCRIBE TABLE EXTENDED."""
    rows = rest.rows(f"DESCRIBE TABLE EXTENDED {table}")
    [where] = [str(row[1]) for row in rows if row[0] == "Location"]
    return Path(where.removeprefix("file:"))


def staged(warehouse: Path) -> list[str]:
    """The gateway's staged or set-aside directories anywhere in the warehouse."""
    return sorted(str(p) for p in warehouse.rglob("*") if ".sparkgate-" in p.name)


def written(beside: Path) -> list[Path]:
    """Data files an overwrite has begun to write into its staging directory beside ``beside``."""
    return [
        f
        for d in beside.parent.glob(f".{beside.name}.sparkgate-staging-*")
        for f in d.rglob("part-*")
    ]


def jobs(rest: Rest) -> dict[str, dict[str, Any]]:
    columns, rows = rest.run("SHOW JOBS")
    listed = [dict(zip(columns, row, strict=True)) for row in rows]
    return {str(job["job name"]): job for job in listed}


def test_a_sigkill_mid_overwrite_leaves_the_old_rows(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with gateway(tmp_path / "first", data_dir, *OPTIONS) as (url, process), Rest(url) as rest:
        explain = lambda: log_tail(data_dir, tmp_path / "first")  # noqa: E731
        rest.run("CREATE DATABASE shop")
        rest.run("USE shop")
        rest.run(
            "CREATE TABLE orders (id BIGINT, amount DECIMAL(10, 2), at TIMESTAMP) USING parquet"
        )
        rest.run(
            "INSERT INTO orders VALUES (1, 9.99, TIMESTAMP '2026-01-02 03:04:05.678'), "
            "(2, 120.50, TIMESTAMP '2026-02-03 04:05:06'), "
            "(3, -42.00, TIMESTAMP '2026-03-04 05:06:07')"
        )
        rest.run(
            "CREATE TABLE parts (id BIGINT, amount DECIMAL(10, 2), at TIMESTAMP, day STRING) "
            "USING parquet PARTITIONED BY (day)"
        )
        rest.run(
            "INSERT INTO parts VALUES "
            "(10, 1.25, TIMESTAMP '2026-01-01 00:00:01', '2026-01-01'), "
            "(11, 99999999.99, TIMESTAMP '2026-01-01 23:59:59.999', '2026-01-01'), "
            "(20, 0.01, TIMESTAMP '2026-01-02 12:00:00', '2026-01-02')"
        )
        assert orders(rest) == OLD_ORDERS and parts(rest) == OLD_PARTS
        orders_dir, parts_dir = location(rest, "orders"), location(rest, "parts")
        warehouse = orders_dir.parent
        assert parts_dir.parent == warehouse and staged(warehouse) == []
        rest.run(
            f"INSERT OVERWRITE TABLE orders {SLOW}", {**ASYNC, "pipeline.name": "overwrite orders"}
        )
        rest.run(
            f"INSERT OVERWRITE TABLE parts PARTITION (day = '2026-01-01') SELECT * FROM ({SLOW}) s",
            {**ASYNC, "pipeline.name": "overwrite a day"},
        )
        # Both have begun to write their new rows into the directories they stage.
        partition_dir = parts_dir / "day=2026-01-01"
        wait_for(lambda: bool(written(orders_dir)) and bool(written(partition_dir)), 180, explain)
        listed = jobs(rest)
        assert {listed[n]["status"] for n in ("overwrite orders", "overwrite a day")} == {"RUNNING"}
        # Meanwhile another session reads the old rows and partitions.
        with Rest(url) as reader:
            reader.run("USE shop")
            assert orders(reader) == OLD_ORDERS
            assert parts(reader) == OLD_PARTS
            assert reader.rows("SHOW PARTITIONS parts") == OLD_PARTITIONS
        kill_with_spark(process)
    # The crash left the staged files behind: the next start must deal with them.
    assert staged(warehouse), sorted(map(str, warehouse.rglob("*")))

    with gateway(tmp_path / "second", data_dir, *OPTIONS) as (url, _), Rest(url) as rest:
        explain = lambda: log_tail(data_dir, tmp_path / "second")  # noqa: E731
        rest.run("USE shop")
        assert orders(rest) == OLD_ORDERS
        assert parts(rest) == OLD_PARTS
        assert rest.rows("SHOW PARTITIONS parts") == OLD_PARTITIONS
        wait_for(lambda: staged(warehouse) == [], 60, lambda: f"{staged(warehouse)}\n{explain()}")
        listed = jobs(rest)
        for name in ("overwrite orders", "overwrite a day"):
            job = rest.record(f"DESCRIBE JOB '{listed[name]['job id']}'")
            assert job["status"] == "FAILED", job
            assert "gateway restarted" in str(job["cause"]), job

        # An overwrite that completes replaces the rows: the table's, then one partition's.
        rest.run(
            "INSERT OVERWRITE TABLE orders VALUES "
            "(7, 7.70, TIMESTAMP '2027-07-07 07:07:07.007'), (8, -0.08, TIMESTAMP '2027-08-08')"
        )
        assert orders(rest) == [
            [7, "7.70", "2027-07-07 07:07:07.007"],
            [8, "-0.08", "2027-08-08 00:00:00"],
        ]
        rest.run(
            "INSERT OVERWRITE TABLE parts PARTITION (day = '2026-01-01') "
            "VALUES (12, 12.12, TIMESTAMP '2026-01-01 12:12:12')"
        )
        assert parts(rest) == [
            [12, "12.12", "2026-01-01 12:12:12", "2026-01-01"],
            [20, "0.01", "2026-01-02 12:00:00", "2026-01-02"],
        ]
        assert rest.rows("SHOW PARTITIONS parts") == OLD_PARTITIONS
        assert staged(warehouse) == []
