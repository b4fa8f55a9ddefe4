"""Materialized tables across a gateway crash (``sparkgate gateway start-foreground``,
SIGKILL of the gateway and of Spark's JVM).

Before the crash: a CONTINUOUS table with a primary key over a directory
receiving files, an active FULL table and a suspended FULL table. After the
restart on the same data directory each is in the state it was, the active
schedule fires again, the suspended one does not, and the continuous job
goes on from its last checkpoint without losing or doubling a row.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from tests.processes import Rest, gateway, kill_with_spark, log_tail, wait_for

AGGREGATE = "SELECT k, count(*) AS n, sum(v) AS total FROM events GROUP BY k"


def drop_file(directory: Path, rows: list[dict[str, Any]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    staged = directory.parent / f".{uuid.uuid4().hex}.json"
    staged.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.replace(staged, directory / f"part-{uuid.uuid4().hex}.json")


def described(rest: Rest, table: str) -> dict[str, Any]:
    return {str(row[0]): row[1] for row in rest.rows(f"DESCRIBE {table}")}


def refresh_jobs(rest: Rest, table: str) -> list[list[Any]]:
    return [row for row in rest.rows("SHOW JOBS") if str(row[1]) == f"{table} refresh"]


def test_materialized_tables_come_back_after_a_crash(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    inbox = tmp_path / "inbox"
    drop_file(inbox, [{"k": "a", "v": 1}, {"k": "b", "v": 2}, {"k": "a", "v": 3}])
    first, second = tmp_path / "first", tmp_path / "second"
    with gateway(first, data_dir) as (url, process), Rest(url) as rest:
        rest.rows(
            "CREATE TABLE events (k STRING, v INT) WITH ('connector' = 'filesystem', "
            f"'path' = '{inbox}', 'format' = 'json')"
        )
        rest.rows("CREATE TABLE src (id INT) USING parquet")
        rest.rows("INSERT INTO src VALUES (1), (2)", {"table.dml-sync": "true"})
        rest.rows(
            "CREATE MATERIALIZED TABLE cont (PRIMARY KEY (k) NOT ENFORCED) "
            f"FRESHNESS = INTERVAL '1' SECOND AS {AGGREGATE}"
        )
        for table in ("active", "paused"):
            rest.rows(
                f"CREATE MATERIALIZED TABLE {table} FRESHNESS = INTERVAL '2' SECOND "
                "REFRESH_MODE = FULL AS SELECT count(*) AS c FROM src"
            )
        rest.rows("ALTER MATERIALIZED TABLE paused SUSPEND")
        [old_job] = [
            row[0] for row in rest.rows("SHOW JOBS") if row[1] == "spark_catalog.default.cont"
        ]

        def ready() -> bool:
            return sorted(rest.rows("SELECT * FROM cont")) == sorted(
                rest.rows(AGGREGATE)
            ) and rest.rows("SELECT c FROM active") == [[2]]

        wait_for(ready, 180, lambda: log_tail(data_dir, first))
        kill_with_spark(process)

    drop_file(inbox, [{"k": "b", "v": 10}, {"k": "c", "v": 5}])  # arrives while down
    with gateway(second, data_dir) as (url, _), Rest(url) as rest:
        assert described(rest, "cont")["refresh status"] == "ACTIVATED"
        assert described(rest, "active")["refresh status"] == "ACTIVATED"
        assert described(rest, "paused")["refresh status"] == "SUSPENDED"
        jobs = {str(row[0]): row for row in rest.rows("SHOW JOBS")}
        assert jobs[old_job][2] == "FAILED"
        running = [
            row
            for row in jobs.values()
            if row[1] == "spark_catalog.default.cont" and row[2] == "RUNNING"
        ]
        assert len(running) == 1, jobs
        handler = str(described(rest, "cont")["refresh handler"])
        assert f"jobId: {running[0][0]}" in handler and old_job in handler  # restored from it
        # The continuous job goes on from its checkpoint: every file counted once.
        expected = [["a", 2, 4], ["b", 2, 12], ["c", 1, 5]]
        wait_for(
            lambda: sorted(rest.rows("SELECT k, n, total FROM cont")) == expected,
            180,
            lambda: f"{rest.rows('SELECT * FROM cont')}\n{log_tail(data_dir, second)}",
        )
        time.sleep(3)
        assert sorted(rest.rows("SELECT k, n, total FROM cont")) == expected
        # The active schedule fires again; the suspended one stays quiet.
        paused_before = len(refresh_jobs(rest, "spark_catalog.default.paused"))
        rest.rows("INSERT INTO src VALUES (3)", {"table.dml-sync": "true"})
        wait_for(
            lambda: rest.rows("SELECT c FROM active") == [[3]],
            120,
            lambda: log_tail(data_dir, second),
        )
        assert len(refresh_jobs(rest, "spark_catalog.default.paused")) == paused_before
        assert rest.rows("SELECT c FROM paused") in ([], [[2]])  # a fire before SUSPEND, if any
        rest.rows("ALTER MATERIALIZED TABLE paused RESUME")
        wait_for(
            lambda: rest.rows("SELECT c FROM paused") == [[3]],
            120,
            lambda: log_tail(data_dir, second),
        )
        for table in ("cont", "active", "paused"):
            rest.rows(f"DROP MATERIALIZED TABLE {table}")
        assert not (data_dir / "warehouse" / "cont").exists()
