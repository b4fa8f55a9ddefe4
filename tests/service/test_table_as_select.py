"""CREATE TABLE AS / REPLACE TABLE AS as jobs with their hook (FLIP-218) and
both atomicity levels (FLIP-303), checked in the catalog and on disk: a
failed, canceled or interrupted job leaves no table, no staging table and no
files; a failed REPLACE leaves the old table byte for byte."""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from sparkgate.api.handles import SessionHandle
from sparkgate.api.jobs import JobStatus
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from sparkgate.service.statements.table_as import TableAsSelectHook

from .conftest import error_text, run, service_on, unique_name

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ATOMIC = "table.rtas-ctas.atomicity-enabled"
# Fails on one row of the last of four partitions, after the others were written.
FAILING = (
    "SELECT id, CASE WHEN id = 3999 THEN raise_error('boom at 3999') ELSE id * 2 END AS v "
    "FROM range(0, 4000, 1, 4)"
)
ALLOW_REFLECTION = "sql-gateway.security.allowed-host-statements"
# Runs until stopped: 2,000 tasks of 0.2 s each.
ENDLESS = (
    "SELECT id, reflect('java.lang.Thread', 'sleep', CAST(20 AS BIGINT)) AS slept "
    "FROM range(0, 20000, 1, 2000)"
)


@pytest.fixture
def database(
    service: SparkGatewayService, session: SessionHandle, tmp_path: Path
) -> Iterator[tuple[str, Path]]:
    """A database of its own, in a directory the test can look into."""
    name = unique_name("ctas")
    location = tmp_path / "db"
    run(service, session, f"CREATE DATABASE {name} LOCATION '{location}'")
    run(service, session, f"USE {name}")
    yield name, location
    run(service, session, "USE default")
    run(service, session, f"DROP DATABASE {name} CASCADE")


def _tables(service: SparkGatewayService, session: SessionHandle) -> set[str]:
    return {row[0] for row in run(service, session, "SHOW TABLES")}


def _files(location: Path) -> list[str]:
    return (
        sorted(str(p.relative_to(location)) for p in location.rglob("*"))
        if location.exists()
        else []
    )


def _checksums(location: Path) -> dict[str, str]:
    return {
        str(p.relative_to(location)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(location.rglob("*"))
        if p.is_file()
    }


def _wait_running_spark_job(service: SparkGatewayService, job_id: str) -> None:
    """Until the job runs and Spark works on its rows."""
    sc = service.spark.sparkContext
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        running = service.describe_job(job_id).status is JobStatus.RUNNING
        if running and sc.statusTracker().getActiveJobsIds():
            return
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} has no running Spark job")


@pytest.mark.parametrize("atomic", ["false", "true"])
def test_ctas_creates_and_writes_the_table(
    service: SparkGatewayService,
    session: SessionHandle,
    database: tuple[str, Path],
    atomic: str,
) -> None:
    config = {ATOMIC: atomic}
    flink = run(
        service,
        session,
        "CREATE TABLE doubled COMMENT 'twice' AS SELECT id, id * 2 AS twice FROM range(5)",
        config=config,
    )
    job_id = flink[0][0]
    assert service.describe_job(job_id).status is JobStatus.FINISHED
    assert sorted(run(service, session, "SELECT * FROM doubled")) == [(i, i * 2) for i in range(5)]
    run(
        service,
        session,
        "CREATE TABLE parted USING parquet PARTITIONED BY (p) "
        "AS SELECT id, CAST(id % 2 AS INT) AS p, 'x' AS s FROM range(6)",
        config=config,
    )
    assert sorted(run(service, session, "SELECT id, p, s FROM parted")) == [
        (i, i % 2, "x") for i in range(6)
    ]
    assert _tables(service, session) == {"doubled", "parted"}
    assert (
        "IF NOT EXISTS",
        run(service, session, "CREATE TABLE IF NOT EXISTS doubled AS SELECT 1 AS one"),
    ) == ("IF NOT EXISTS", [("OK",)])
    message = error_text(service, session, "CREATE TABLE doubled AS SELECT 1 AS one")
    assert "already exists" in message
    assert sorted(run(service, session, "SELECT * FROM doubled")) == [(i, i * 2) for i in range(5)]


def test_ctas_without_dml_sync_answers_the_job_id_at_once(
    service: SparkGatewayService, session: SessionHandle, database: tuple[str, Path]
) -> None:
    rows = run(
        service,
        session,
        "CREATE TABLE later AS SELECT id FROM range(100)",
        config={"table.dml-sync": "false"},
    )
    info = service.jobs.wait(rows[0][0], timeout=120)
    assert info.status is JobStatus.FINISHED
    assert run(service, session, "SELECT count(*) FROM later") == [(100,)]


@pytest.mark.parametrize("atomic", ["false", "true"])
def test_a_failing_ctas_leaves_no_table_and_no_files(
    service: SparkGatewayService,
    session: SessionHandle,
    database: tuple[str, Path],
    atomic: str,
) -> None:
    _, location = database
    message = error_text(
        service, session, f"CREATE TABLE half AS {FAILING}", config={ATOMIC: atomic}
    )
    assert "boom at 3999" in message
    assert _tables(service, session) == set()
    assert _files(location) == []
    failed = [j for j in service.list_jobs() if j.statement == f"CREATE TABLE half AS {FAILING}"]
    assert failed and failed[-1].status is JobStatus.FAILED
    # The name is not poisoned: the same CTAS works now.
    run(service, session, "CREATE TABLE half AS SELECT 1 AS one", config={ATOMIC: atomic})
    assert run(service, session, "SELECT one FROM half") == [(1,)]


@pytest.mark.parametrize("atomic", ["false", "true"])
def test_a_canceled_ctas_leaves_no_table_and_no_files(
    service: SparkGatewayService,
    session: SessionHandle,
    database: tuple[str, Path],
    atomic: str,
) -> None:
    _, location = database
    job_id = run(
        service,
        session,
        f"CREATE TABLE slow AS {ENDLESS}",
        config={ATOMIC: atomic, "table.dml-sync": "false"},
    )[0][0]
    _wait_running_spark_job(service, job_id)
    # The table is there while the job runs (not atomic), or only its staging table.
    listed = _tables(service, session)
    assert listed == ({"slow"} if atomic == "false" else {n for n in listed if "staging" in n})
    assert len(listed) == 1
    run(service, session, f"STOP JOB '{job_id}'")
    assert service.jobs.wait(job_id, timeout=120).status is JobStatus.CANCELED
    assert _tables(service, session) == set()
    assert _files(location) == []


def test_hooks_clean_up_after_the_submitting_session_closed(
    service: SparkGatewayService, database: tuple[str, Path]
) -> None:
    name, location = database
    other = service.open_session(SessionEnvironment(session_name="gone"))
    job_id = run(
        service,
        other,
        f"CREATE TABLE {name}.orphan AS {ENDLESS}",
        config={"table.dml-sync": "false"},
    )[0][0]
    _wait_running_spark_job(service, job_id)
    service.close_session(other)
    assert service.describe_job(job_id).status is JobStatus.RUNNING
    service.stop_job(job_id)
    assert service.jobs.wait(job_id, timeout=120).status is JobStatus.CANCELED
    assert _files(location) == []


def test_a_failing_replace_keeps_the_old_table_byte_for_byte(
    service: SparkGatewayService, session: SessionHandle, database: tuple[str, Path]
) -> None:
    _, location = database
    run(
        service,
        session,
        "CREATE TABLE kept USING parquet AS SELECT id, 'old' AS tag FROM range(50)",
    )
    before = _checksums(location)
    assert before
    for statement in (
        f"REPLACE TABLE kept AS {FAILING}",
        f"CREATE OR REPLACE TABLE kept AS {FAILING}",
    ):
        assert "boom at 3999" in error_text(service, session, statement)
        assert _checksums(location) == before
        assert _tables(service, session) == {"kept"}
    assert run(service, session, "SELECT count(*), min(tag) FROM kept") == [(50, "old")]
    # A REPLACE that works swaps contents and columns.
    run(service, session, "REPLACE TABLE kept AS SELECT 'new' AS tag")
    assert run(service, session, "SELECT * FROM kept") == [("new",)]
    assert _tables(service, session) == {"kept"}
    message = error_text(service, session, "REPLACE TABLE missing AS SELECT 1 AS one")
    assert "does not exist" in message
    assert _tables(service, session) == {"kept"}


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("CREATE TABLE bad AS SELECT no_such_column FROM range(3)", "no_such_column"),
        ("CREATE TABLE bad AS SELECT * FROM no_such_table", "no_such_table"),
        ("CREATE TABLE no_such_db.bad AS SELECT 1 AS one", "no_such_db"),
        ("CREATE TABLE bad WITH ('connector' = 'datagen') AS SELECT 1 AS one", "datagen"),
        (
            "CREATE TABLE bad (x INT, PRIMARY KEY (x) NOT ENFORCED) AS SELECT 1 AS x",
            "need a connector table",
        ),
        ("CREATE TABLE bad (y, z) AS SELECT 1 AS x", "must name each of the query's columns"),
        ("CREATE TABLE bad (x AS 1) WITH ('connector' = 'print') AS SELECT 1 AS x", "computed"),
    ],
)
def test_bad_ctas_is_refused_and_nothing_is_made(
    service: SparkGatewayService,
    session: SessionHandle,
    database: tuple[str, Path],
    statement: str,
    expected: str,
) -> None:
    _, location = database
    jobs_before = len(service.list_jobs())
    assert expected in error_text(service, session, statement)
    assert _tables(service, session) == set()
    assert _files(location) == []
    assert len(service.list_jobs()) == jobs_before


def test_ctas_into_connector_sinks(
    service: SparkGatewayService, session: SessionHandle, database: tuple[str, Path], tmp_path: Path
) -> None:
    path = tmp_path / "out"
    run(
        service,
        session,
        f"CREATE TABLE files WITH ('connector' = 'filesystem', 'path' = '{path}', "
        "'format' = 'json') AS SELECT id, concat('n', CAST(id AS STRING)) AS name FROM range(3)",
    )
    written = [json.loads(line) for f in path.glob("*.json") for line in f.read_text().splitlines()]
    assert sorted((r["id"], r["name"]) for r in written) == [(0, "n0"), (1, "n1"), (2, "n2")]
    assert sorted(run(service, session, "SELECT id, name FROM files")) == [
        (0, "n0"),
        (1, "n1"),
        (2, "n2"),
    ]
    run(service, session, "CREATE TABLE nothing WITH ('connector' = 'blackhole') AS SELECT 1 AS a")
    assert {"files", "nothing"} <= _tables(service, session)


def test_a_ctas_the_gateway_died_under_is_cleaned_up_at_start(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The job store keeps the CTAS's hook: a restart that finds the job unfinished
    marks it FAILED and drops what it had made (here: its half-written table)."""
    data_dir = tmp_path / "data"
    name = unique_name("crash")
    location = tmp_path / "db"
    # ENDLESS sleeps in its tasks with reflect(), off by default.
    with service_on(spark, data_dir, **{ALLOW_REFLECTION: "reflection"}) as service:
        handle = service.open_session(SessionEnvironment(session_name="crash"))
        run(service, handle, f"CREATE DATABASE {name} LOCATION '{location}'")
        job_id = run(
            service,
            handle,
            f"CREATE TABLE {name}.half AS {ENDLESS}",
            config={"table.dml-sync": "false"},
        )[0][0]
        _wait_running_spark_job(service, job_id)
        record = data_dir / "jobs" / f"{job_id}.json"
        stored = json.loads(record.read_text())
        assert stored["status"] == "RUNNING"
        assert stored["hooks"][0]["kind"] == "table-as-select"
        assert stored["hooks"][0]["record"]["created"] is True
        service.stop_job(job_id)
        service.jobs.wait(job_id, timeout=120)
    # As the process would have left it: the job RUNNING in the store, the table there.
    record.write_text(json.dumps(stored))
    run_spark = spark.newSession()
    run_spark.sql(f"CREATE TABLE {name}.half (id BIGINT, slept STRING) USING parquet")
    run_spark.sql(f"INSERT INTO {name}.half VALUES (1, 'x')")
    assert _files(location)
    with service_on(spark, data_dir) as restarted:
        info = restarted.describe_job(job_id)
        assert info.status is JobStatus.FAILED
        assert "gateway restarted" in (info.cause or "")
        assert not run_spark.catalog.tableExists(f"{name}.half")
        assert _files(location) == []
        assert json.loads(record.read_text())["interrupted"] is False
    with contextlib.suppress(Exception):
        run_spark.sql(f"DROP DATABASE {name} CASCADE")


def test_a_column_list_adds_retypes_and_reorders_columns(
    service: SparkGatewayService, session: SessionHandle, database: tuple[str, Path]
) -> None:
    """FLIP-463: new columns first, then the query's, in the types the list gives."""
    name, _ = database
    run(
        service,
        session,
        "CREATE TABLE widened (note STRING, id INT) AS SELECT id, id * 2 AS twice FROM range(3)",
    )
    fields = [
        (f.name, f.dataType.simpleString()) for f in service.spark.table(f"{name}.widened").schema
    ]
    assert fields == [("note", "string"), ("id", "int"), ("twice", "bigint")]
    assert sorted(run(service, session, "SELECT * FROM widened")) == [
        (None, i, i * 2) for i in range(3)
    ]
    run(
        service,
        session,
        "CREATE TABLE turned (twice, id) AS SELECT id, id * 2 AS twice FROM range(2)",
    )
    assert sorted(run(service, session, "SELECT * FROM turned")) == [(0, 0), (2, 1)]


def test_a_column_list_on_a_connector_table(
    service: SparkGatewayService, session: SessionHandle, database: tuple[str, Path], tmp_path: Path
) -> None:
    path = tmp_path / "keyed"
    run(
        service,
        session,
        "CREATE TABLE keyed (PRIMARY KEY (id) NOT ENFORCED, next_id AS id + 1) "
        f"COMMENT 'by id' WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json') "
        "AS SELECT CAST(id AS INT) AS id, 'x' AS tag FROM range(2)",
    )
    assert sorted(run(service, session, "SELECT id, tag, next_id FROM keyed")) == [
        (0, "x", 1),
        (1, "x", 2),
    ]
    shown = run(service, session, "SHOW CREATE TABLE keyed")[0][0]
    assert "PRIMARY KEY (`id`) NOT ENFORCED" in shown
    assert "`next_id` AS `id` + 1" in shown  # as Flink prints it back


def test_atomic_ctas_into_a_filesystem_table(
    service: SparkGatewayService, session: SessionHandle, database: tuple[str, Path], tmp_path: Path
) -> None:
    """The files are written beside the path and moved there as the job's last step."""
    config = {ATOMIC: "true"}
    out = tmp_path / "files"
    options = f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'json'"
    message = error_text(
        service, session, f"CREATE TABLE broken WITH ({options}) AS {FAILING}", config=config
    )
    assert "boom at 3999" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db"]  # no path, no staging directory
    assert _tables(service, session) == set()
    run(
        service,
        session,
        f"CREATE TABLE files WITH ({options}) AS SELECT id FROM range(4)",
        config=config,
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db", "files"]
    assert _tables(service, session) == {"files"}
    assert sorted(run(service, session, "SELECT id FROM files")) == [(i,) for i in range(4)]
    # A path that holds files would add them to the table's rows: refused before any job.
    jobs_before = len(service.list_jobs())
    message = error_text(
        service, session, f"CREATE TABLE again WITH ({options}) AS SELECT 1 AS id", config=config
    )
    assert "is not empty" in message
    assert len(service.list_jobs()) == jobs_before
    run(
        service,
        session,
        "CREATE TABLE shown WITH ('connector' = 'print') AS SELECT 1 AS a",
        config=config,
    )
    assert _tables(service, session) == {"files", "shown"}


def _json_rows(path: Path) -> list[tuple[object, ...]]:
    return sorted(
        tuple(json.loads(line).values())
        for f in path.glob("*.json")
        for line in f.read_text().splitlines()
    )


def test_replace_of_a_filesystem_table_in_its_own_directory(
    service: SparkGatewayService, session: SessionHandle, database: tuple[str, Path], tmp_path: Path
) -> None:
    """The new rows replace the old files in the same path; a failing REPLACE keeps
    the old definition and files byte for byte; no staging or backup directory stays."""
    out = tmp_path / "files"
    options = f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'json'"
    run(service, session, f"CREATE TABLE files WITH ({options}) AS SELECT id FROM range(3)")
    before, shown = _checksums(out), run(service, session, "SHOW CREATE TABLE files")
    for statement in (
        f"REPLACE TABLE files WITH ({options}) AS {FAILING}",
        f"CREATE OR REPLACE TABLE files WITH ({options}) AS {FAILING}",
    ):
        assert "boom at 3999" in error_text(service, session, statement)
        assert _checksums(out) == before
        assert run(service, session, "SHOW CREATE TABLE files") == shown
        assert sorted(p.name for p in tmp_path.iterdir()) == ["db", "files"]
        assert _tables(service, session) == {"files"}
    run(
        service,
        session,
        f"REPLACE TABLE files WITH ({options}) AS SELECT id, 'new' AS tag FROM range(10, 12)",
    )
    assert _json_rows(out) == [(10, "new"), (11, "new")]
    assert sorted(run(service, session, "SELECT id, tag FROM files")) == [(10, "new"), (11, "new")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db", "files"]
    assert _tables(service, session) == {"files"}


def test_replace_between_connector_and_catalog_tables(
    service: SparkGatewayService, session: SessionHandle, database: tuple[str, Path], tmp_path: Path
) -> None:
    """A REPLACE may change what the table is: a catalog table, a print table, a
    filesystem table elsewhere (the data of a file table it replaced stays where it
    was, as a dropped file table's does)."""
    first, second = tmp_path / "first", tmp_path / "second"
    files = "'connector' = 'filesystem', 'format' = 'json', 'path' = "
    run(service, session, f"CREATE TABLE t WITH ({files}'{first}') AS SELECT 1 AS a")
    run(service, session, "REPLACE TABLE t WITH ('connector' = 'print') AS SELECT 2 AS b")
    assert "'connector' = 'print'" in run(service, session, "SHOW CREATE TABLE t")[0][0]
    assert _json_rows(first) == [(1,)]  # left where it was
    run(service, session, "CREATE OR REPLACE TABLE t AS SELECT 3 AS c")
    assert run(service, session, "SELECT * FROM t") == [(3,)]
    assert "connector" not in run(service, session, "SHOW CREATE TABLE t")[0][0]
    run(service, session, f"REPLACE TABLE t WITH ({files}'{second}') AS SELECT 4 AS d")
    assert run(service, session, "SELECT * FROM t") == [(4,)]
    assert _json_rows(second) == [(4,)]
    # A path holding another table's files is refused before any job.
    jobs_before = len(service.list_jobs())
    message = error_text(
        service, session, f"REPLACE TABLE t WITH ({files}'{first}') AS SELECT 5 AS e"
    )
    assert "is not empty" in message
    assert len(service.list_jobs()) == jobs_before
    assert run(service, session, "SELECT * FROM t") == [(4,)]
    assert _tables(service, session) == {"t"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db", "first", "second"]


@pytest.mark.parametrize("step", ["set aside", "files moved aside", "new files moved in"])
def test_a_replace_cut_off_while_publishing_is_undone(
    service: SparkGatewayService,
    session: SessionHandle,
    database: tuple[str, Path],
    tmp_path: Path,
    step: str,
) -> None:
    """The gateway died at each step of an atomic REPLACE's publish: the clean-up a
    restart runs (from the job store's record alone) brings the old table back."""
    name, _ = database
    out = tmp_path / "files"
    options = f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'json'"
    run(service, session, f"CREATE TABLE files WITH ({options}) AS SELECT id FROM range(3)")
    before, shown = _checksums(out), run(service, session, "SHOW CREATE TABLE files")
    spark = service.spark
    token = "cutoff" + step.replace(" ", "")[:10]
    target = ("spark_catalog", name, "files")
    staged = tmp_path / f".files.sparkgate-staging-{token}"
    aside = tmp_path / f".files.sparkgate-replaced-{token}"
    record = {
        "token": token,
        "target": list(target),
        "atomic": True,
        "replacing": True,
        "created": True,
        "staging_path": str(staged),
        "target_path": str(out),
        "backup_path": str(aside),
    }
    # What the job had made: its staging table and files.
    run(
        service,
        session,
        f"CREATE TABLE __sparkgate_staging_{token} WITH ('connector' = 'filesystem', "
        f"'path' = '{staged}', 'format' = 'json') AS SELECT 99 AS id",
    )
    run(service, session, f"ALTER TABLE files RENAME TO __sparkgate_replaced_{token}")
    if step != "set aside":
        out.rename(aside)
    if step == "new files moved in":
        staged.rename(out)
    TableAsSelectHook.from_record(spark, record).clean_up()
    assert _tables(service, session) == {"files"}
    assert _checksums(out) == before
    assert run(service, session, "SHOW CREATE TABLE files") == shown
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db", "files"]
