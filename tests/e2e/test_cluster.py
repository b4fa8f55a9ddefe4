"""The gateway on a real Spark cluster: executors in other JVMs than the driver.

A Spark standalone cluster (a master and two workers on loopback, started from
the pyspark package's own classes by ``sparkgate.server.cluster``) and Spark's
``local-cluster[2,1,1024]`` (two executor JVMs launched by the driver) each
serve a real gateway process, REST and HiveServer2. On each: a result read in
bounded pages from partitions computed on both executors, with DECIMAL and
TIMESTAMP values; a statement cancelled while its tasks run on the
executors; a CTAS; a streaming INSERT into files with its checkpoints; a
continuous materialized table; PyHive over HiveServer2 and the SQL client.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkgate.server.cluster import LocalCluster
from tests.hiveserver2.conftest import pyhive_python, run_client
from tests.processes import ENV, Rest, free_port, gateway, wait_for

pytestmark = pytest.mark.timeout(1200)

__all__ = ["pyhive_python"]  # the client venv fixture, shared with the HiveServer2 tests

WIDE = (
    "SELECT id, CAST(id AS DECIMAL(12, 2)) / 4 AS amount, "
    "timestamp_seconds(1700000000 + id) AS at, spark_partition_id() AS part "
    "FROM range(0, 300000, 1, 6)"
)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with LocalCluster(2, cores=1, memory="1g", directory=tmp_path_factory.mktemp("cluster")) as c:
        yield c


@pytest.fixture(scope="module", params=["standalone", "local-cluster"])
def on_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, int, Path, LocalCluster | None]]:
    """A gateway process on the cluster: its REST URL, HiveServer2 port, data dir."""
    cluster: LocalCluster | None = None
    if request.param == "standalone":
        cluster = request.getfixturevalue("standalone")
        master = cluster.master_url
    else:
        master = "local-cluster[2,1,1024]"
    root = tmp_path_factory.mktemp(request.param)
    hs2_port = free_port()
    options = (
        f"-Dspark.master={master}",
        "-Dspark.executor.memory=768m",
        f"-Dspark.pyspark.python={sys.executable}",
        "-Dsql-gateway.endpoint.type=rest,hiveserver2",
        f"-Dsql-gateway.endpoint.hiveserver2.port={hs2_port}",
        "-Dsql-gateway.endpoint.hiveserver2.http.port=0",
        # Results relayed by the executors' tasks, not collected: the cluster path.
        "-Dsql-gateway.result.direct-size=0",
        "-Dspark.sql.session.timeZone=UTC",
    )
    with gateway(root / "run", root / "data", *options) as (url, _process):
        yield url, hs2_port, root / "data", cluster


def test_a_wide_result_comes_in_pages_from_both_executors(on_cluster: Any) -> None:
    url, _, _, cluster = on_cluster
    with Rest(url) as rest:
        columns, rows = rest.run(WIDE)
        assert columns == ["id", "amount", "at", "part"]
        assert len(rows) == 300_000
        assert [r[0] for r in rows[:3]] == [0, 1, 2]
        assert rows[5][1] == 1.25 or str(rows[5][1]) == "1.250000"
        assert str(rows[0][2]).startswith("2023-11-14")
        assert {r[3] for r in rows} == set(range(6))
        if cluster is not None:
            state = json.loads(urllib.request.urlopen(f"{cluster.webui_url}/json/").read())
            [app] = state["activeapps"]
            assert app["cores"] == 2  # one core on each worker


def test_a_statement_is_cancelled_on_the_executors(on_cluster: Any) -> None:
    url, _, _, _ = on_cluster
    with Rest(url) as rest:
        operation = rest.submit("SELECT count(*) FROM range(0, 100000000000, 1, 200)")
        time.sleep(3)
        base = f"/v4/sessions/{rest.session}/operations/{operation}"
        # Its tasks run on the executors: no row yet.
        page = rest.http.get(f"{base}/result/0").json()
        assert page["resultType"] != "EOS" and not (page.get("results") or {}).get("data")
        assert rest.http.post(f"{base}/cancel").json()["status"] == "CANCELED"
        # The cores are free again: the next statement runs at once.
        started = time.monotonic()
        assert rest.rows("SELECT count(*) FROM range(0, 1000, 1, 4)") == [[1000]]
        assert time.monotonic() - started < 60


def test_ctas_streaming_and_a_materialized_table_on_the_cluster(
    on_cluster: Any, tmp_path: Path
) -> None:
    url, _, _, _ = on_cluster
    name = f"t{os.getpid()}_{int(time.time() * 1000) % 100000}"
    with Rest(url) as rest:
        rest.run(f"CREATE TABLE {name}_orders AS SELECT id, id % 3 AS k FROM range(0, 1000, 1, 4)")
        assert rest.rows(f"SELECT count(*), sum(id) FROM {name}_orders") == [[1000, 499500]]
        rest.run(
            f"CREATE TABLE {name}_gen (id BIGINT) WITH ('connector' = 'datagen', "
            "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '200', "
            "'rows-per-second' = '100')"
        )
        rest.run(
            f"CREATE TABLE {name}_files (id BIGINT) WITH ('connector' = 'filesystem', "
            f"'path' = '{tmp_path / 'files'}', 'format' = 'json')"
        )
        streaming = {"execution.runtime-mode": "streaming"}
        [[job]] = rest.rows(f"INSERT INTO {name}_files SELECT id FROM {name}_gen", streaming)

        def written() -> list[list[Any]]:
            return rest.rows(f"SELECT count(*), count(DISTINCT id) FROM {name}_files")

        wait_for(lambda: written() == [[200, 200]], 180, lambda: f"{written()} {job}")
        rest.run(
            f"CREATE MATERIALIZED TABLE {name}_counts (PRIMARY KEY (k) NOT ENFORCED) "
            f"FRESHNESS = INTERVAL '1' SECOND AS SELECT k, count(*) AS n FROM {name}_orders "
            "GROUP BY k"
        )
        wait_for(
            lambda: (
                sorted(rest.rows(f"SELECT k, n FROM {name}_counts"))
                == [
                    [0, 334],
                    [1, 333],
                    [2, 333],
                ]
            ),
            180,
            lambda: str(rest.rows(f"SELECT * FROM {name}_counts")),
        )
        rest.run(f"DROP MATERIALIZED TABLE {name}_counts")


def test_pyhive_and_the_sql_client_on_the_cluster(
    on_cluster: Any, pyhive_python: Path, tmp_path: Path
) -> None:
    url, hs2_port, _, _ = on_cluster
    script = (
        "import json, sys\n"
        "from pyhive import hive\n"
        "conn = hive.connect(host='127.0.0.1', port=int(sys.argv[1]), username='ann')\n"
        "cur = conn.cursor()\n"
        "cur.execute('SELECT count(*), max(at) FROM (" + WIDE.replace("'", "\\'") + ")')\n"
        "print(json.dumps([str(v) for v in cur.fetchall()[0]]))\n"
    )
    assert run_client(pyhive_python, script, str(hs2_port)) == ["300000", "2023-11-18 09:33:19"]
    port = url.rsplit(":", 1)[1]
    script_file = tmp_path / "q.sql"
    script_file.write_text(
        "SELECT CAST(sum(id) AS DECIMAL(20, 2)) AS total, "
        "max(timestamp_seconds(id)) AS last FROM range(0, 100000, 1, 4);\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sparkgate.cli",
            "sql",
            "gateway",
            "-e",
            f"127.0.0.1:{port}",
            "-f",
            str(script_file),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=ENV,
    )
    assert result.returncode == 0, result.stderr
    assert "4999950000.00" in result.stdout and "1970-01-02 03:46:39" in result.stdout
