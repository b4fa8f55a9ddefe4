"""Results of any size leave the default engine in bounded memory.

Before the relay, ``SELECT id, id*2 AS d FROM range(50000000)`` on two cores
collected two 25 M-row partitions on the driver and the engine's JVM died of
``OutOfMemoryError`` at the first fetch. These run against the gateway a user
starts, with nothing set, and watch the engine JVM's resident memory.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import psutil
import pyarrow as pa

from tests.defaults.conftest import DefaultGateway

FIFTY_MILLION = 50_000_000
QUERY = f"SELECT id, id * 2 AS d FROM range({FIFTY_MILLION})"
#: docs/operations.md: what one result may add to the engine's resident memory with
#: the default 2 GiB driver: half its heap (mostly the heap growing under the
#: allocation rate, 560-790 MiB from run to run; collecting the same result took
#: more than the whole heap).
RSS_GROWTH_BOUND = 1 << 30


def engine_jvm(gateway: DefaultGateway) -> psutil.Process:
    children = psutil.Process(gateway.process.pid).children(recursive=True)
    jvms = [p for p in children if p.name() == "java"]
    assert len(jvms) == 1, f"expected one engine JVM under the gateway, found {children}"
    return jvms[0]


class PeakRss:
    """The peak resident set of a process, sampled every 100 ms."""

    def __init__(self, process: psutil.Process) -> None:
        self.process = process
        self.start = process.memory_info().rss
        self.peak = self.start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, self.process.memory_info().rss)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return int(self.peak - self.start)


@contextmanager
def session_of(gateway: DefaultGateway) -> Iterator[tuple[httpx.Client, str]]:
    with httpx.Client(base_url=gateway.url, timeout=120) as http:
        response = http.post("/v4/sessions", json={})
        assert response.status_code == 200, response.text
        handle: str = response.json()["sessionHandle"]
        try:
            yield http, handle
        finally:
            http.delete(f"/v4/sessions/{handle}")


def submit(http: httpx.Client, session: str, statement: str) -> str:
    response = http.post(f"/v4/sessions/{session}/statements", json={"statement": statement})
    assert response.status_code == 200, response.text
    handle: str = response.json()["operationHandle"]
    return handle


def test_fifty_million_rows_read_to_the_end_as_arrow(default_gateway: DefaultGateway) -> None:
    jvm = engine_jvm(default_gateway)
    with session_of(default_gateway) as (http, session):
        op = submit(http, session, QUERY)
        memory = PeakRss(jvm)
        rows = 0
        checksum = 0
        uri: str | None = f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=ARROW"
        while uri:
            response = http.get(uri)
            assert response.status_code == 200, response.text
            uri = response.headers.get("x-sparkgate-next-result-uri")
            if response.headers["x-sparkgate-result-type"] == "NOT_READY":
                continue
            table = pa.ipc.open_stream(response.content).read_all()
            if table.num_rows:
                assert table.column_names == ["id", "d"]
                rows += table.num_rows
                checksum += sum(table.column("d").to_numpy())
        growth = memory.stop()
    assert rows == FIFTY_MILLION
    assert checksum == FIFTY_MILLION * (FIFTY_MILLION - 1)
    assert jvm.is_running()
    assert growth < RSS_GROWTH_BOUND, f"engine RSS grew by {growth >> 20} MiB"


def test_a_slow_json_reader_that_cancels_holds_the_engine_in_bounds(
    default_gateway: DefaultGateway,
) -> None:
    jvm = engine_jvm(default_gateway)
    with session_of(default_gateway) as (http, session):
        op = submit(http, session, QUERY)
        memory = PeakRss(jvm)
        uri: str | None = f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON"
        pages = 0
        seen: list[int] = []
        while uri and pages < 40:
            body = http.get(uri).json()
            uri = body.get("nextResultUri")
            data = body.get("results", {}).get("data", [])
            if data:
                pages += 1
                seen.extend(row["fields"][0] for row in data)
                time.sleep(0.25)  # a reader slower than Spark
        response = http.delete(f"/v4/sessions/{session}/operations/{op}/close")
        assert response.status_code == 200, response.text
        growth = memory.stop()
        # The session goes on: the next statement is served.
        again = submit(http, session, "SELECT 42 AS answer")
        answer: list[object] = []
        next_uri: str | None = f"/v4/sessions/{session}/operations/{again}/result/0"
        while next_uri:
            body = http.get(next_uri).json()
            answer.extend(row["fields"][0] for row in body.get("results", {}).get("data", []))
            next_uri = body.get("nextResultUri")
    assert seen == list(range(len(seen))) and len(seen) >= 40
    assert answer == [42]
    assert jvm.is_running()
    assert growth < RSS_GROWTH_BOUND, f"engine RSS grew by {growth >> 20} MiB"
