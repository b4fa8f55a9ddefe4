"""A closed or expired session gives back everything it held.

A real gateway runs 1,000 sessions through open, use (a temporary view, a
query of it, a SET) and close over REST, then lets 200 more expire. Each
gateway session has a Spark session of its own in the engine's JVM; once
they are gone, the JVM's count of live Spark sessions (``jmap -histo:live``,
which runs a full GC first) must be back at its baseline within seconds.
Every tenth query shuffles: Spark's stage threads are where the JVM held
closed sessions of its own accord.

Neither process may grow with the number of sessions. JVM heaps and Python's
arenas do not shrink, and the first sessions warm caches, heaps and thread
arenas up, so the bounds are on growth: the second 500 sessions must grow the
JVM's live heap (after a full GC) and the gateway's RSS much less than the
first 500 did, the JVM's RSS (whose heap G1 sizes as it likes) less, and all
of them each process's RSS by less than ``MAX_GROWTH_MB``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil
import pytest

from tests.processes import foreground_gateway, free_port

ENV = {**os.environ, "SPARKGATE_CONF_DIR": ""}
SPARK_SESSION = "org.apache.spark.sql.classic.SparkSession"
CYCLES = 1_000
EXPIRING = 200
CLIENTS = 2  # two keep-alive connections at once: both CPUs busy, as in real use
SHUFFLE_EVERY = 10
IDLE_TIMEOUT_S = 10
# Spark sessions beyond the baseline a quiet gateway may still hold (one closing
# while the last collection ran, one a thread is still letting go of).
SLACK_SESSIONS = 3
# RSS growth allowed over all the sessions, per process.
MAX_GROWTH_MB = 300
# The second half may grow a measure by at most this share of what the first half
# grew it, or by the floor (arenas, JIT-compiled code, Spark's bounded job history).
# The JVM's RSS also follows G1's heap sizing and the JIT (20 to 40 MB per 500
# sessions here, with a flat live heap): it must only grow less than proportionally.
SECOND_HALF_SHARE = {"live heap": 0.5, "gateway RSS": 0.5, "JVM RSS": 1.0}
# G1 commits heap in steps of tens of MB as it sizes the heap: the JVM's RSS moved
# 65 MB in a second half whose live heap grew 3 MB. The live heap and the session
# count are what find a leak; the JVM's RSS only catches gross growth.
SECOND_HALF_FLOOR_MB = {"live heap": 16, "gateway RSS": 48, "JVM RSS": 96}
_SETTLE_S = 60  # closed sessions are gone within seconds; a guard, not a timing claim


@contextmanager
def gateway(tmp_path: Path) -> Iterator[tuple[str, psutil.Process, psutil.Process]]:
    port = free_port()
    options = [
        f"-Dsql-gateway.data-dir={tmp_path / 'data'}",
        f"-Dsql-gateway.endpoint.rest.port={port}",
        "-Dsql-gateway.endpoint.type=rest",
        "-Dspark.master=local[2]",
        "-Dspark.ui.enabled=false",
        f"-Dsql-gateway.session.idle-timeout={IDLE_TIMEOUT_S} s",
        "-Dsql-gateway.session.check-interval=1 s",
    ]
    with foreground_gateway(options, port=port, cwd=tmp_path, env=ENV, timeout=300) as (url, proc):
        python = psutil.Process(proc.pid)
        jvms = [p for p in python.children(recursive=True) if p.name() == "java"]
        assert len(jvms) == 1, jvms
        yield url, python, jvms[0]


def jmap_for(jvm: psutil.Process) -> Path:
    """The jmap of the JDK the engine runs on; skips when that Java has none (a JRE)."""
    jmap = Path(jvm.exe()).resolve().parent / "jmap"
    if not jmap.exists():
        found = shutil.which("jmap")
        if found is None:
            pytest.skip(f"no jmap next to {jvm.exe()} nor on PATH")
        jmap = Path(found)
    return jmap


def live_instances(jmap: Path, jvm: psutil.Process) -> tuple[dict[str, int], int]:
    """Live instances per class and the live heap's bytes: ``jmap -histo:live``
    collects the heap first."""
    histogram = subprocess.run(
        [str(jmap), "-histo:live", str(jvm.pid)], capture_output=True, text=True, check=True
    ).stdout
    counts, total = {}, 0
    for line in histogram.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0].endswith(":"):
            counts[parts[3]] = int(parts[1])
        elif len(parts) == 3 and parts[0] == "Total":
            total = int(parts[2])
    return counts, total


def run(http: httpx.Client, session: str, statement: str) -> None:
    submitted = http.post(f"/v1/sessions/{session}/statements", json={"statement": statement})
    assert submitted.status_code == 200, (statement, submitted.text)
    uri: str | None = (
        f"/v1/sessions/{session}/operations/{submitted.json()['operationHandle']}/result/0"
    )
    while uri is not None:
        page = http.get(uri)
        assert page.status_code == 200, (statement, page.text)
        uri = page.json().get("nextResultUri")


def use(http: httpx.Client, *, shuffle: bool = False) -> str:
    """A new session that made a temporary view, read it and set a property."""
    opened = http.post("/v1/sessions", json={})
    assert opened.status_code == 200, opened.text
    session: str = opened.json()["sessionHandle"]
    run(http, session, "CREATE TEMPORARY VIEW v AS SELECT * FROM VALUES (1, 2), (1, 3) AS t(a, b)")
    run(http, session, "SELECT a, sum(b) FROM v GROUP BY a" if shuffle else "SELECT * FROM v")
    run(http, session, "SET 'spark.sql.shuffle.partitions' = '3'")
    return session


def cycles(url: str, count: int) -> None:
    """``count`` sessions opened, used and closed, by ``CLIENTS`` clients at once."""

    def client(first: int) -> None:
        with httpx.Client(base_url=url, timeout=120) as http:
            for number in range(first, count, CLIENTS):
                session = use(http, shuffle=number % SHUFFLE_EVERY == 0)
                closed = http.delete(f"/v1/sessions/{session}")
                assert closed.status_code == 200, closed.text

    with ThreadPoolExecutor(CLIENTS) as clients:
        for done in [clients.submit(client, first) for first in range(CLIENTS)]:
            done.result()


def lowest(read: Callable[[], int]) -> int:
    """``read()`` once it stops falling (what was just closed is gone)."""
    deadline = time.monotonic() + _SETTLE_S
    value = read()
    while time.monotonic() < deadline:
        time.sleep(3)
        again = read()
        if again >= value:
            return value
        value = again
    return value


def settled(read: Callable[[], int], bound: int) -> int:
    """``read()`` once it is at most ``bound``, or its last value after the guard."""
    deadline = time.monotonic() + _SETTLE_S
    value = read()
    while value > bound and time.monotonic() < deadline:
        time.sleep(2)
        value = read()
    return value


# A hang guard: about 4 minutes on 2 idle CPUs, several times that on a busy machine.
@pytest.mark.timeout(1800)
def test_closed_and_expired_sessions_release_their_spark_sessions(tmp_path: Path) -> None:
    with gateway(tmp_path) as (url, python, jvm):
        jmap = jmap_for(jvm)
        heap = [0]

        def spark_sessions() -> int:
            counts, heap[0] = live_instances(jmap, jvm)
            return counts.get(SPARK_SESSION, 0)

        counts: dict[str, int] = {}
        sizes: dict[str, dict[str, int]] = {}

        def measure(moment: str, settle: Callable[[Callable[[], int]], int]) -> None:
            counts[moment] = settle(spark_sessions)
            sizes[moment] = {
                "live heap": heap[0] >> 20,
                "gateway RSS": python.memory_info().rss >> 20,
                "JVM RSS": jvm.memory_info().rss >> 20,
            }
            report = f"live {SPARK_SESSION}: {counts}; sizes in MB: {sizes}"
            assert counts[moment] <= counts["baseline"] + SLACK_SESSIONS, report

        # Warm up (classes, JIT, threads, py4j connections), then the baseline.
        cycles(url, 40)
        measure("baseline", lowest)

        def at_baseline(read: Callable[[], int]) -> int:
            return settled(read, counts["baseline"] + SLACK_SESSIONS)

        cycles(url, CYCLES // 2)
        measure("half", at_baseline)
        cycles(url, CYCLES - CYCLES // 2)
        measure("all", at_baseline)

        with httpx.Client(base_url=url, timeout=120) as http:
            expiring = [use(http) for _ in range(EXPIRING)]
            # Asking about a session would keep it alive: the log says when it expired.
            log = tmp_path / "data" / "log" / "sparkgate.log"
            deadline = time.monotonic() + IDLE_TIMEOUT_S + _SETTLE_S
            while f"Session {expiring[-1]} expired" not in log.read_text():  # the last to go
                assert time.monotonic() < deadline, "idle sessions did not expire"
                time.sleep(1)
            assert all(http.get(f"/v1/sessions/{s}").status_code == 404 for s in expiring)
        measure("expired", at_baseline)

        report = f"sizes in MB: {sizes}"
        for size in ("live heap", "gateway RSS", "JVM RSS"):
            first = sizes["half"][size] - sizes["baseline"][size]
            second = sizes["all"][size] - sizes["half"][size]
            limit = max(first * SECOND_HALF_SHARE[size], SECOND_HALF_FLOOR_MB[size])
            assert second < limit, (size, report)
        for size in ("gateway RSS", "JVM RSS"):
            assert sizes["expired"][size] - sizes["baseline"][size] < MAX_GROWTH_MB, report
