"""Real third-party clients against the HiveServer2 endpoint.

PyHive (SASL PLAIN with a password file, NOSASL, HTTP) runs from its own
virtual environment against an in-process endpoint; impyla (binary and HTTP),
SQLAlchemy's ``hive://`` dialect, beeline (from the pyspark package) and
dbt-spark (``method: thrift``) run against the real gateway process started
with ``python -m sparkgate.cli gateway start-foreground``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hiveserver2.conftest import (
    DBT_REQUIREMENTS,
    IMPYLA_REQUIREMENTS,
    PASSWORD,
    USER,
    Running,
    client_venv,
    run_client,
    wait_for,
)
from tests.processes import free_port, read_until_running, spark_options

PYHIVE_SCRIPT = r"""
import json, sys
from pyhive import hive
port, auth, user, password, scheme = sys.argv[1:6]
kw = {"username": user}
if scheme == "http":
    kw.update(scheme="http", password=password or None)
else:
    kw["auth"] = auth
    if auth in ("LDAP", "CUSTOM"):
        kw["password"] = password
try:
    conn = hive.connect("127.0.0.1", port=int(port), **kw)
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
    sys.exit(0)
cur = conn.cursor()
cur.execute("SELECT id, CAST(id AS STRING) AS s FROM range(3)")
rows = cur.fetchall()
desc = [d[:2] for d in cur.description]
try:
    cur.execute("SELECT * FROM hs2_no_such_table")
    error = None
except Exception as exc:
    error = str(exc)
conn.close()
print(json.dumps({"rows": rows, "desc": desc, "error": error}))
"""


@pytest.mark.parametrize(
    ("fixture", "auth", "scheme"),
    [
        ("hs2_plain", "CUSTOM", "binary"),  # SASL PLAIN, checked against the password file
        ("hs2", "NOSASL", "binary"),
        ("hs2", "NONE", "binary"),  # SASL PLAIN, any user
        ("hs2_plain", "NONE", "http"),  # Basic auth
    ],
)
def test_pyhive(
    request: pytest.FixtureRequest, pyhive_python: Path, fixture: str, auth: str, scheme: str
) -> None:
    target: Running = request.getfixturevalue(fixture)
    port = target.http_port if scheme == "http" else target.port
    out = run_client(pyhive_python, PYHIVE_SCRIPT, str(port), auth, USER, PASSWORD, scheme)
    assert out["rows"] == [[0, "0"], [1, "1"], [2, "2"]]
    assert out["desc"] == [["id", "BIGINT_TYPE"], ["s", "STRING_TYPE"]]
    assert "TABLE_OR_VIEW_NOT_FOUND" in out["error"]


@pytest.mark.parametrize("scheme", ["binary", "http"])
def test_pyhive_wrong_password_is_refused(
    hs2_plain: Running, pyhive_python: Path, scheme: str
) -> None:
    port = hs2_plain.http_port if scheme == "http" else hs2_plain.port
    out = run_client(pyhive_python, PYHIVE_SCRIPT, str(port), "CUSTOM", USER, "wrong", scheme)
    assert "rows" not in out
    if scheme == "binary":
        assert "authentication failed for user 'alice'" in out["error"]


def test_pyhive_nosasl_refused_when_plain_is_required(
    hs2_plain: Running, pyhive_python: Path
) -> None:
    out = run_client(
        pyhive_python, PYHIVE_SCRIPT, str(hs2_plain.port), "NOSASL", USER, "", "binary"
    )
    assert "error" in out and "rows" not in out


CANCEL_SCRIPT = r"""
import json, sys, threading, time
from pyhive import hive
conn = hive.connect("127.0.0.1", port=int(sys.argv[1]), auth="NOSASL", username="canceller")
cur = conn.cursor()
cur.execute("SELECT count(*) FROM range(100000000000)", async_=True)
time.sleep(float(sys.argv[2]))
cur.cancel()
state = cur.poll().operationState
conn.close()
print(json.dumps({"state": state}))
"""


def test_pyhive_cancel_stops_the_spark_job(hs2: Running, pyhive_python: Path) -> None:
    tracker = hs2.service.spark.sparkContext.statusTracker()
    out = run_client(pyhive_python, CANCEL_SCRIPT, str(hs2.port), "4")
    assert out["state"] == 3  # CANCELED_STATE
    assert wait_for(lambda: not tracker.getActiveJobsIds(), timeout=60)


SQLALCHEMY_SCRIPT = r"""
import json, sys
from sqlalchemy import create_engine, inspect, text
engine = create_engine(f"hive://sqla@127.0.0.1:{sys.argv[1]}/default")
with engine.connect() as conn:
    conn.execute(text("CREATE DATABASE IF NOT EXISTS hs2_sqla"))
    conn.execute(text(
        "CREATE TABLE IF NOT EXISTS hs2_sqla.pets (name STRING, age INT) USING parquet"
    ))
    conn.execute(text("INSERT INTO hs2_sqla.pets VALUES ('rex', 3), ('tom', 5)"))
    rows = conn.execute(text("SELECT name, age FROM hs2_sqla.pets ORDER BY age")).fetchall()
inspector = inspect(engine)
schemas = inspector.get_schema_names()
columns = [(c["name"], str(c["type"])) for c in inspector.get_columns("pets", schema="hs2_sqla")]
print(json.dumps({"rows": [list(r) for r in rows], "schemas": schemas, "columns": columns}))
"""


# -- against the real gateway process -------------------------------------------------


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, int]]:
    data_dir = tmp_path_factory.mktemp("hs2-gateway")
    ports = {"binary": free_port(), "http": free_port()}
    prefix = "-Dsql-gateway.endpoint.hiveserver2."
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sparkgate.cli",
            "gateway",
            "start-foreground",
            "-Dsql-gateway.endpoint.type=hiveserver2",
            f"{prefix}port={ports['binary']}",
            f"{prefix}transport-mode=all",
            f"{prefix}http.port={ports['http']}",
            f"-Dsql-gateway.data-dir={data_dir}",
            *spark_options(),
            "-Dspark.ui.enabled=false",
            "-Dspark.sql.shuffle.partitions=2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=data_dir,
        env={**os.environ, "SPARKGATE_CONF_DIR": ""},
    )
    try:
        read_until_running(proc, 240)
        yield ports
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_sqlalchemy_query_and_inspect(gateway: dict[str, int], pyhive_python: Path) -> None:
    out = run_client(pyhive_python, SQLALCHEMY_SCRIPT, str(gateway["binary"]))
    assert out["rows"] == [["rex", 3], ["tom", 5]]
    assert "hs2_sqla" in out["schemas"]
    assert [name for name, _ in out["columns"]] == ["name", "age"]
    assert out["columns"][1][1] == "INTEGER"


IMPYLA_SCRIPT = r"""
import json, sys
from impala.dbapi import connect
port, transport = int(sys.argv[1]), sys.argv[2]
kw = dict(host="127.0.0.1", port=port, auth_mechanism="PLAIN", user="imp", password="x")
if transport == "http":
    kw.update(use_http_transport=True, http_path="cliservice")
conn = connect(**kw)
cur = conn.cursor()
cur.execute("SELECT id, id * 1.5D AS d, IF(id = 1, NULL, 'v') AS v, "
            "CAST('2024-01-02' AS DATE) AS dt FROM range(3)")
rows = [[str(x) if x is not None else None for x in row] for row in cur.fetchall()]
names = [d[0] for d in cur.description]
try:
    cur.execute("SELECT * FROM hs2_no_such_table")
    error = None
except Exception as exc:
    error = str(exc)
cur.execute("SHOW DATABASES")
dbs = cur.fetchall()
cur.close()
conn.close()
print(json.dumps({"rows": rows, "names": names, "error": error, "dbs": dbs}))
"""


@pytest.mark.parametrize("transport", ["binary", "http"])
def test_impyla(gateway: dict[str, int], transport: str) -> None:
    python = client_venv("impyla", IMPYLA_REQUIREMENTS)
    out = run_client(python, IMPYLA_SCRIPT, str(gateway[transport]), transport)
    assert out["names"] == ["id", "d", "v", "dt"]
    assert out["rows"] == [
        ["0", "0.0", "v", "2024-01-02"],
        ["1", "1.5", None, "2024-01-02"],
        ["2", "3.0", "v", "2024-01-02"],
    ]
    assert "TABLE_OR_VIEW_NOT_FOUND" in out["error"]
    assert ["default"] in out["dbs"]


def beeline_path() -> Path:
    import pyspark

    path = Path(pyspark.__file__).parent / "bin" / "beeline"
    assert path.exists(), f"the pyspark package ships no beeline at {path}"
    return path


def beeline(port: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(beeline_path()), "-u", f"jdbc:hive2://127.0.0.1:{port}/default", *args],
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )


def test_beeline_script_tables_and_failure(gateway: dict[str, int], tmp_path: Path) -> None:
    script = tmp_path / "script.sql"
    script.write_text(
        "CREATE DATABASE IF NOT EXISTS hs2_beeline;\n"
        "CREATE TABLE IF NOT EXISTS hs2_beeline.cities (name STRING, pop INT) USING parquet;\n"
        "INSERT INTO hs2_beeline.cities VALUES ('Lyon', 522), ('Graz', 291);\n"
        "SELECT name, pop FROM hs2_beeline.cities ORDER BY pop DESC;\n"
        "!tables\n",
        encoding="utf-8",
    )
    done = beeline(gateway["binary"], "--outputformat=csv2", "-f", str(script))
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "name,pop\nLyon,522\nGraz,291\n" in done.stdout
    assert "hs2_beeline" in done.stdout and "cities" in done.stdout  # !tables
    failed = beeline(gateway["binary"], "-e", "SELECT * FROM hs2_beeline.no_such_table")
    assert failed.returncode != 0
    assert "TABLE_OR_VIEW_NOT_FOUND" in failed.stdout + failed.stderr


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("SELECT 1/0", "DIVIDE_BY_ZERO"),
        (
            "SELECT id, CASE WHEN id = 3 THEN raise_error('kaboom') ELSE id END FROM range(5)",
            "kaboom",
        ),
    ],
)
def test_beeline_shows_an_error_raised_while_rows_are_fetched(
    gateway: dict[str, int], statement: str, expected: str
) -> None:
    """The message, not a Java stack trace of the driver parsing an empty one."""
    failed = beeline(gateway["binary"], "-e", statement)
    output = failed.stdout + failed.stderr
    assert failed.returncode != 0, output
    assert expected in output
    assert "IndexOutOfBoundsException" not in output


def test_beeline_over_http(gateway: dict[str, int]) -> None:
    done = subprocess.run(
        [
            str(beeline_path()),
            "-u",
            f"jdbc:hive2://127.0.0.1:{gateway['http']}/default;transportMode=http;"
            "httpPath=cliservice",
            "--outputformat=csv2",
            "-e",
            "SELECT 40 + 2 AS answer",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "answer\n42\n" in done.stdout


DBT_PROJECT = """
name: hs2_dbt
version: "1.0"
config-version: 2
profile: hs2_dbt
"""
DBT_PROFILES = """
hs2_dbt:
  target: dev
  outputs:
    dev:
      type: spark
      method: thrift
      host: 127.0.0.1
      port: {port}
      schema: hs2_dbt
      user: dbt
      threads: 1
      connect_retries: 0
"""


def test_dbt_spark_thrift_runs_table_and_view_models(
    gateway: dict[str, int], tmp_path: Path, pyhive_python: Path
) -> None:
    python = client_venv("dbt", DBT_REQUIREMENTS)
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(DBT_PROJECT, encoding="utf-8")
    (project / "profiles.yml").write_text(
        DBT_PROFILES.format(port=gateway["binary"]), encoding="utf-8"
    )
    (project / "models" / "numbers.sql").write_text(
        "{{ config(materialized='table') }}\nselect id, id * 2 as doubled from range(5)\n",
        encoding="utf-8",
    )
    (project / "models" / "big_numbers.sql").write_text(
        "{{ config(materialized='view') }}\nselect * from {{ ref('numbers') }} where id >= 3\n",
        encoding="utf-8",
    )
    dbt = python.parent / "dbt"
    done = subprocess.run(
        [str(dbt), "run", "--project-dir", str(project), "--profiles-dir", str(project)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=project,
        env={**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Completed successfully" in done.stdout
    check = run_client(
        pyhive_python,
        "import json, sys\nfrom pyhive import hive\n"
        "c = hive.connect('127.0.0.1', port=int(sys.argv[1]), auth='NOSASL').cursor()\n"
        "c.execute('SELECT id, doubled FROM hs2_dbt.big_numbers ORDER BY id')\n"
        "rows = c.fetchall()\n"
        "c.execute('SHOW VIEWS IN hs2_dbt')\n"
        "print(json.dumps({'rows': rows, 'views': [r[1] for r in c.fetchall()]}))\n",
        str(gateway["binary"]),
    )
    assert check["rows"] == [[3, 6], [4, 8]]
    assert check["views"] == ["big_numbers"]


def test_results_are_the_same_over_every_transport(hs2: Running, pyhive_python: Path) -> None:
    outs: list[Any] = [
        run_client(pyhive_python, PYHIVE_SCRIPT, str(port), auth, "same", "", scheme)
        for port, auth, scheme in (
            (hs2.port, "NOSASL", "binary"),
            (hs2.port, "NONE", "binary"),
            (hs2.http_port, "NONE", "http"),
        )
    ]
    assert outs[0] == outs[1] == outs[2]


MATERIALIZED_SCRIPT = r"""
import json, sys, uuid
from pyhive import hive
conn = hive.connect("127.0.0.1", port=int(sys.argv[1]), auth="NOSASL", username="mt")
cur = conn.cursor()
src, mt = "mt_src_" + uuid.uuid4().hex[:8], "mt_" + uuid.uuid4().hex[:8]
out = {}
def rows(sql):
    cur.execute(sql)
    return [list(r) for r in cur.fetchall()] if cur.description else []
rows(f"CREATE TABLE {src} (id INT, amount DECIMAL(10, 2)) USING parquet")
rows(f"INSERT INTO {src} VALUES (1, 1.50), (2, 2.50)")
out["create"] = rows(
    f"CREATE MATERIALIZED TABLE {mt} FRESHNESS = INTERVAL '1' DAY "
    f"AS SELECT count(*) AS n, sum(amount) AS total FROM {src}"
)
out["show"] = rows("SHOW MATERIALIZED TABLES")
out["show_columns"] = [d[0] for d in cur.description]
out["refresh"] = rows(f"ALTER MATERIALIZED TABLE {mt} REFRESH")
out["select"] = rows(f"SELECT n, CAST(total AS STRING) FROM {mt}")
out["describe"] = rows(f"DESCRIBE {mt}")
out["show_create"] = rows(f"SHOW CREATE MATERIALIZED TABLE {mt}")
out["suspend"] = rows(f"ALTER MATERIALIZED TABLE {mt} SUSPEND")
out["status"] = [r for r in rows(f"DESCRIBE {mt}") if r[0] == "refresh status"]
try:
    rows(f"DROP TABLE {mt}")
except Exception as exc:
    out["drop_table"] = str(exc)
out["drop"] = rows(f"DROP MATERIALIZED TABLE {mt}")
out["mt"] = mt
conn.close()
print(json.dumps(out))
"""


def test_materialized_tables_over_hiveserver2(hs2: Running, pyhive_python: Path) -> None:
    out = run_client(pyhive_python, MATERIALIZED_SCRIPT, str(hs2.port))
    mt = out["mt"]
    assert out["create"] == [["OK"]]
    assert [mt] in out["show"] and out["show_columns"] == ["tableName"]
    assert len(out["refresh"][0][0]) == 32  # the refresh job's id (dml-sync: it ended)
    assert out["select"] == [[2, "4.00"]]
    described = {row[0]: row[1] for row in out["describe"]}
    assert described["n"] == "bigint" and described["refresh mode"] == "FULL"
    assert described["freshness"] == "INTERVAL '1' DAY"
    assert "REFRESH_MODE = FULL" in out["show_create"][0][0]
    assert out["status"][0][1] == "SUSPENDED"
    assert "DROP MATERIALIZED TABLE" in out["drop_table"]
    assert out["drop"] == [["OK"]]


STATE_TTL_SCRIPT = r"""
import json, sys, uuid
from pyhive import hive
conn = hive.connect("127.0.0.1", port=int(sys.argv[1]), auth="NOSASL", username="ttl")
cur = conn.cursor()
a, b = "ttl_a_" + uuid.uuid4().hex[:8], "ttl_b_" + uuid.uuid4().hex[:8]
def rows(sql):
    cur.execute(sql)
    return sorted([list(r) for r in cur.fetchall()]) if cur.description else []
rows(f"CREATE TABLE {a} (k STRING, v INT) USING parquet")
rows(f"CREATE TABLE {b} (k STRING, w INT) USING parquet")
rows(f"INSERT INTO {a} VALUES ('x', 1), ('y', 2), ('x', 3)")
rows(f"INSERT INTO {b} VALUES ('x', 10), ('z', 30)")
query = f"SELECT {a}.k, v, w FROM {a} JOIN {b} ON {a}.k = {b}.k"
out = {"batch": rows(query)}
rows("SET execution.runtime-mode = streaming")
rows("SET table.exec.state.ttl = 1 h")
out["streaming"] = rows(query)
conn.close()
print(json.dumps(out))
"""


def test_a_state_ttl_query_over_hiveserver2(hs2: Running, pyhive_python: Path) -> None:
    """A streaming join on the state-TTL operators, read with PyHive: Spark's rows."""
    out = run_client(pyhive_python, STATE_TTL_SCRIPT, str(hs2.port))
    assert out["batch"] == [["x", 1, 10], ["x", 3, 10]]
    assert out["streaming"] == out["batch"]
