"""A real gateway process restarted (SIGTERM, or SIGKILL of it and Spark's JVM)
on the same data directory: what was running, what comes back, what a client sees.

Before the end: tables with DECIMAL and TIMESTAMP rows, a view, a connector
table, a catalog, a materialized table, a finished and a running batch job, a
streaming INSERT and a streaming statement set writing files, and a session
(``sql-gateway.session.persistent``) with properties, a current database and a
statement still running.

After the restart: the catalog objects are there; the batch job that was cut
off is FAILED ("gateway restarted"); the streaming jobs are RUNNING again
from their checkpoints and finish with every row written exactly once; the
session answers under its old handle with its properties and database, and
its running statement ends in an error saying why. SIGTERM stops after a
savepoint; a second SIGTERM does not wait.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.processes import Rest, gateway, kill_with_spark, log_tail, spark_options, wait_for

pytestmark = pytest.mark.timeout(900)

ROWS = 600  # per streaming source: 30 s at 20 rows a second
OPTIONS = (
    # Two task slots sleep (the batch job, the running statement): two more for the rest.
    *spark_options("local[4]"),
    "-Dsql-gateway.session.persistent=true",
    "-Dsql-gateway.shutdown.timeout=3 s",
    "-Dexecution.checkpointing.interval=500 ms",
)
# A batch job that runs for minutes on one core (one task; reflect() sleeps 20 ms a
# row), leaving the other to the streaming jobs.
ENDLESS = (
    "INSERT INTO slow SELECT id FROM range(0, 10000, 1, 1) "
    "WHERE reflect('java.lang.Thread', 'sleep', CAST(20 AS BIGINT)) IS NOT NULL"
)


def sequence(name: str, start: int) -> str:
    return (
        f"CREATE TABLE {name} (id BIGINT) WITH ('connector' = 'datagen', "
        f"'fields.id.kind' = 'sequence', 'fields.id.start' = '{start}', "
        f"'fields.id.end' = '{start + ROWS - 1}', 'rows-per-second' = '20')"
    )


def files(name: str, path: Path) -> str:
    return (
        f"CREATE TABLE {name} (id BIGINT) WITH ('connector' = 'filesystem', "
        f"'path' = '{path}', 'format' = 'json')"
    )


def jobs(rest: Rest) -> dict[str, dict[str, Any]]:
    columns, rows = rest.run("SHOW JOBS")
    listed = [dict(zip(columns, row, strict=True)) for row in rows]
    return {str(job["job name"]): job for job in listed}


def described(rest: Rest, job_id: str) -> dict[str, Any]:
    return rest.record(f"DESCRIBE JOB '{job_id}'")


def counts(rest: Rest, table: str) -> tuple[int, int]:
    [[rows, ids]] = rest.rows(f"SELECT count(*), count(DISTINCT id) FROM {table}")
    return int(rows), int(ids)


def result_errors(rest: Rest, operation: str) -> str:
    page = rest.http.get(f"/v4/sessions/{rest.session}/operations/{operation}/result/0")
    return "\n".join(str(e) for e in page.json().get("errors", []))


def before_the_end(url: str, tmp_path: Path) -> tuple[Rest, str]:
    """Makes every kind of object and work; the kept session and its running operation."""
    kept = Rest(url)
    kept.run("CREATE DATABASE shop")
    kept.run("USE shop")
    kept.run("SET 'shop.owner' = 'ann'")
    kept.run("CREATE TABLE orders (id BIGINT, amount DECIMAL(10, 2), at TIMESTAMP) USING parquet")
    kept.run(
        "INSERT INTO orders VALUES (1, 9.99, TIMESTAMP '2026-01-02 03:04:05.678'), "
        "(2, 120.50, TIMESTAMP '2026-02-03 04:05:06'), (3, 42.00, TIMESTAMP '2026-03-04 05:06:07')",
        {"pipeline.name": "fill orders"},
    )
    kept.run("CREATE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount > 10")
    kept.run("CREATE TABLE slow (id BIGINT) USING parquet")
    kept.run(files("archive", tmp_path / "archive"))
    kept.run("CREATE CATALOG scratch WITH ('type' = 'generic_in_memory')")
    kept.run(
        "CREATE MATERIALIZED TABLE totals FRESHNESS = INTERVAL '1' HOUR "
        "AS SELECT count(*) AS n, sum(amount) AS total FROM orders"
    )
    for name, start in (("one", 1), ("two", 1001), ("three", 2001)):
        kept.run(sequence(f"seq_{name}", start))
        kept.run(files(f"out_{name}", tmp_path / f"out_{name}"))
    streaming = {"execution.runtime-mode": "streaming"}
    kept.run("INSERT INTO out_one SELECT id FROM seq_one", {**streaming, "pipeline.name": "one"})
    kept.run(
        "EXECUTE STATEMENT SET BEGIN INSERT INTO out_two SELECT id FROM seq_two; "
        "INSERT INTO out_three SELECT id FROM seq_three; END",
        {**streaming, "pipeline.name": "set"},
    )
    kept.run(ENDLESS, {"table.dml-sync": "false", "pipeline.name": "endless"})
    running = kept.submit("SELECT reflect('java.lang.Thread', 'sleep', CAST(600000 AS BIGINT))")
    # Some rows are written, not all: the jobs are cut off in the middle.
    wait_for(
        lambda: min(counts(kept, f"out_{n}")[0] for n in ("one", "two", "three")) >= 30,
        120,
        lambda: str({n: counts(kept, f"out_{n}") for n in ("one", "two", "three")}),
    )
    listed = jobs(kept)
    assert {listed[n]["status"] for n in ("one", "set", "endless")} == {"RUNNING"}
    assert min(counts(kept, f"out_{n}")[0] for n in ("one", "two", "three")) < ROWS
    return kept, running


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_restarted_gateway_gives_back_what_was_made_and_resumes_what_ran(
    tmp_path: Path, how: str
) -> None:
    data_dir = tmp_path / "data"
    with gateway(tmp_path / "first", data_dir, *OPTIONS) as (url, process):
        kept, running = before_the_end(url, tmp_path)
        if how == "SIGKILL":
            kill_with_spark(process)
        else:
            process.send_signal(signal.SIGTERM)
            assert process.wait(120) == 0, log_tail(data_dir, tmp_path / "first")
    kept.http.close()
    log = (data_dir / "log" / "sparkgate.log").read_text()
    if how == "SIGTERM":
        assert "the next start resumes it" in log
    with gateway(tmp_path / "second", data_dir, *OPTIONS) as (url, _process):
        explain = lambda: log_tail(data_dir, tmp_path / "second")  # noqa: E731
        rest = Rest(url, kept.session)  # the same handle, after the restart
        assert rest.rows("SET 'shop.owner'") == [["shop.owner", "ann"]]
        assert rest.rows("SELECT current_database()") == [["shop"]]
        assert "gateway restarted while this statement was running" in result_errors(rest, running)
        # The catalog's objects, with their rows.
        assert {"orders", "big_orders", "slow", "archive", "totals"} <= rest.tables()
        assert rest.rows(
            "SELECT id, CAST(amount AS STRING), CAST(at AS STRING) FROM orders ORDER BY id"
        ) == [
            [1, "9.99", "2026-01-02 03:04:05.678"],
            [2, "120.50", "2026-02-03 04:05:06"],
            [3, "42.00", "2026-03-04 05:06:07"],
        ]
        assert sorted(rest.rows("SELECT id FROM big_orders")) == [[2], [3]]
        assert ["scratch"] in rest.rows("SHOW CATALOGS")
        assert rest.rows("SELECT count(*) FROM archive") == [[0]]
        assert ["totals"] in rest.rows("SHOW MATERIALIZED TABLES")
        assert (
            "FRESHNESS = INTERVAL '1' HOUR"
            in rest.rows("SHOW CREATE MATERIALIZED TABLE totals")[0][0]
        )
        # Jobs: history kept, the cut-off batch job FAILED, the streams running again.
        listed = jobs(rest)
        assert listed["fill orders"]["status"] == "FINISHED"
        endless = described(rest, str(listed["endless"]["job id"]))
        assert endless["status"] == "FAILED", endless
        assert "gateway restarted" in str(endless["cause"])
        for name in ("one", "set"):
            job = described(rest, str(listed[name]["job id"]))
            assert job["status"] in ("RUNNING", "FINISHED"), job
            if how == "SIGTERM":
                assert job["savepoint"], job
        for name in ("one", "two", "three"):
            wait_for(lambda n=name: counts(rest, f"out_{n}")[0] >= ROWS, 180, explain)
            assert counts(rest, f"out_{name}") == (ROWS, ROWS), name
        wait_for(
            lambda: {jobs(rest)[n]["status"] for n in ("one", "set")} == {"FINISHED"},
            60,
            explain,
        )
        rest.http.close()


def test_a_second_sigterm_stops_the_gateway_without_waiting(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    options = ("-Dsql-gateway.shutdown.timeout=10 min",)
    with gateway(tmp_path / "run", data_dir, *options) as (url, process), Rest(url) as rest:
        rest.submit("SELECT reflect('java.lang.Thread', 'sleep', CAST(600000 AS BIGINT))")
        time.sleep(1)
        process.send_signal(signal.SIGTERM)
        # Draining: new work is refused, the probe says so, calls on sessions answer.
        wait_for(
            lambda: httpx.get(f"{url}/health/ready").status_code == 503,
            30,
            lambda: log_tail(data_dir, tmp_path / "run"),
        )
        ready = httpx.get(f"{url}/health/ready").json()
        assert ready["draining"] is True and ready["status"] == "DOWN"
        refused = rest.http.post("/v4/sessions", json={})
        assert refused.status_code == 503, refused.text
        assert "shutting down" in refused.text
        assert rest.http.get(f"/v4/sessions/{rest.session}").status_code == 200
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(3)  # still waiting for the statement
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0
    log = (data_dir / "log" / "sparkgate.log").read_text()
    assert "Shutting down now: 1 statements are cut off" in log


def test_sigterm_lets_a_running_statement_finish_and_its_result_be_read(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with gateway(tmp_path / "run", data_dir) as (url, process), Rest(url) as rest:
        operation = rest.submit(
            "SELECT id FROM range(5) WHERE reflect('java.lang.Thread', 'sleep', 600L) IS NOT NULL"
        )
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        uri: str | None = f"/v4/sessions/{rest.session}/operations/{operation}/result/0"
        rows: list[Any] = []
        while uri:
            page = rest.http.get(f"{uri}?rowFormat=JSON" if "?" not in uri else uri).json()
            assert "errors" not in page, page
            rows += [row["fields"] for row in (page.get("results") or {}).get("data", [])]
            uri = page.get("nextResultUri")
        assert sorted(rows) == [[0], [1], [2], [3], [4]]
        assert process.wait(60) == 0
