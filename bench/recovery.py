"""The ``recovery`` workload: how long a restart takes, and what keeping results costs.

Restart: a gateway of its own (persistent sessions on) is started on an
empty data directory (cold start), given a persistent session and a streaming
job (datagen into blackhole), then stopped with SIGTERM and started again,
then killed with SIGKILL (with its Spark JVM) and started again. Timed: the
stop, the start until a new session's ``SELECT 1`` answers, and until the
streaming job is RUNNING again and the old session answers under its handle.

Spooling: the fetch of ``fetch_query(N)`` as ARROW on two gateways started
alike, with ``sql-gateway.result.spool`` off and on, interleaved run by run
(the order alternating): rows/s of each and their ratio.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import statistics
import time
from typing import TYPE_CHECKING, Any

import psutil

from bench.targets.base import BenchError, launched
from bench.targets.rest import API, RestClient, RestTarget

if TYPE_CHECKING:
    from bench.workloads import Context

__all__ = ["rows_of", "run_recovery"]

log = logging.getLogger(__name__)

Result = dict[str, Any]

_STREAM = (
    "CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100')",
    "CREATE TABLE hole (id BIGINT) WITH ('connector' = 'blackhole')",
)
_INSERT = "INSERT INTO hole SELECT id FROM gen"


def rows_of(
    client: RestClient,
    session: str,
    statement: str,
    config: dict[str, str] | None = None,
) -> list[list[Any]]:
    """Every row of ``statement`` in ``session``, as JSON fields."""
    body: dict[str, Any] = {"statement": statement}
    if config:
        body["executionConfig"] = config
    operation = client.json("POST", f"{API}/sessions/{session}/statements", body)["operationHandle"]
    uri: str | None = f"{API}/sessions/{session}/operations/{operation}/result/0?rowFormat=JSON"
    rows: list[list[Any]] = []
    deadline = time.monotonic() + 120
    while uri:
        if time.monotonic() > deadline:
            raise BenchError(f"no end of result: {statement}")
        page = client.json("GET", uri)
        if page.get("resultType") == "NOT_READY":
            time.sleep(0.01)
            continue
        rows += [row["fields"] for row in (page.get("results") or {}).get("data", [])]
        nxt = page.get("nextResultUri")
        uri = None if not nxt or page.get("resultType") == "EOS" else "/" + nxt.lstrip("/")
    client.json("DELETE", f"{API}/sessions/{session}/operations/{operation}/close")
    return rows


def _job_running(client: RestClient, session: str, job_id: str) -> bool:
    return any(
        str(r[0]) == job_id and r[2] == "RUNNING" for r in rows_of(client, session, "SHOW JOBS")
    )


def _kill_tree(target: RestTarget) -> None:
    """SIGKILL the gateway and every process under it, as a crash would end them."""
    roots = [psutil.Process(pid) for pid in target.server_pids()]
    tree = [p for root in roots for p in (root, *root.children(recursive=True))]
    for proc in tree:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.send_signal(signal.SIGKILL)
    psutil.wait_procs(tree, timeout=60)


def _restart(target: RestTarget, session: str, job_id: str) -> Result:
    """Start ``target`` again; seconds to the first answer and to the job RUNNING."""
    began = time.monotonic()
    target.launch()
    target.wait_ready()
    ready = time.monotonic() - began
    client = target.acquire()
    try:
        deadline = time.monotonic() + 120
        while not _job_running(client, session, job_id):  # the old session answers
            if time.monotonic() > deadline:
                raise BenchError(f"job {job_id} is not RUNNING after the restart")
            time.sleep(0.05)
        jobs = time.monotonic() - began
    finally:
        target.release(client)
    return {"first_answer_s": ready, "jobs_running_s": jobs}


def _restarts(ctx: Context, rest: RestTarget) -> Result:
    target = rest.sibling(
        "gateway-restart",
        f"{rest.label}, persistent sessions",
        options={"sql-gateway.session.persistent": "true"},
    )
    result: Result = {}
    began = time.monotonic()
    target.launch()
    target.wait_ready()
    result["cold_start"] = {"first_answer_s": time.monotonic() - began}
    try:
        client = target.acquire()
        session = str(
            client.json("POST", f"{API}/sessions", {"sessionName": "recovery"})["sessionHandle"]
        )
        for statement in _STREAM:
            rows_of(client, session, statement)
        [[job_id]] = rows_of(client, session, _INSERT, {"execution.runtime-mode": "streaming"})
        target.release(client)
        time.sleep(2)  # a few micro-batches in its checkpoints
        stopping = time.monotonic()
        target.stop()
        stop_s = time.monotonic() - stopping
        result["sigterm"] = {"stop_s": stop_s, **_restart(target, session, str(job_id))}
        time.sleep(2)
        _kill_tree(target)
        target.stop()
        result["sigkill"] = _restart(target, session, str(job_id))
    finally:
        target.stop()
    return result


def _fetch_rate(target: RestTarget, rows: int) -> float:
    from bench.workloads import fetch_query

    session = target.open_session("arrow")
    try:
        began = time.monotonic()
        got = session.execute(fetch_query(rows))
        seconds = time.monotonic() - began
    finally:
        session.close()
    if got != rows:
        raise BenchError(f"{target.label}: {got} rows, not {rows}")
    return rows / seconds


def _spooling(ctx: Context, rest: RestTarget) -> Result:
    """Two gateways started alike, spooling off and on (the run's own gateway has
    served other workloads: its figures are not comparable)."""
    s = ctx.settings
    gateways = {
        flag: rest.sibling(
            f"gateway-spool-{flag}",
            f"{rest.label}, result spool {flag}",
            options={"sql-gateway.result.spool": "true" if flag == "on" else "false"},
        )
        for flag in ("off", "on")
    }
    rates: dict[str, list[float]] = {"off": [], "on": []}
    with launched(gateways["off"]), launched(gateways["on"]):
        for target in gateways.values():  # warm-up: the same query, compiled once each
            _fetch_rate(target, s.recovery_fetch_rows)
        for run in range(s.recovery_fetch_repeats):
            order = ("off", "on") if run % 2 == 0 else ("on", "off")
            for flag in order:
                rates[flag].append(_fetch_rate(gateways[flag], s.recovery_fetch_rows))
    off, on = statistics.median(rates["off"]), statistics.median(rates["on"])
    return {
        "rows": s.recovery_fetch_rows,
        "off_rows_per_s": off,
        "on_rows_per_s": on,
        "on_vs_off": on / off if off else None,
        "runs": len(rates["on"]),
    }


def run_recovery(ctx: Context) -> Result:
    rest = next((t for t in ctx.targets if isinstance(t, RestTarget)), None)
    if rest is None:
        return {"skipped": "needs the REST target"}
    result: Result = {}
    for name, part in (("restart", _restarts), ("spool", _spooling)):
        try:
            result[name] = part(ctx, rest)
        except Exception as exc:
            log.error("recovery/%s failed: %s", name, exc)
            result[name] = {"error": f"{type(exc).__name__}: {exc}"}
    return result
