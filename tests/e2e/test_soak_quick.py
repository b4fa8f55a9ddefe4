"""The soak's quick mode (``python -m bench.soak --quick``) passes, with every client kind.

The harness starts its own gateway (default options, both endpoints), so this
is the soak in CI: REST JSON and Arrow readers with verified results,
HiveServer2 clients, a streaming job, sessions that expire, the host
statements refused, and a big SELECT read to the end (5 M rows here instead of
50 M: on a busy two-core machine 50 M rows take minutes, during which they hold
a task slot). Two minutes in, the soak SIGKILLs the gateway's Spark JVM: the
gateway heals itself (one engine restart), clients see only the documented
answers of a restarting engine while it does, and the streaming job commits
again on the new engine. Three minutes of clients, about five with start-up
and stop; ``make soak`` is the 30-minute run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_KINDS = ("rest-json", "rest-arrow", "hs2", "streaming", "sessions", "hostile", "big-select")
_HOST_KINDS = ("transform", "reflection", "insert-directory", "add-file")


@pytest.mark.timeout(1200)  # start-up, three minutes of clients, the drain, the stop
def test_a_short_soak_passes_with_every_client_kind(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    env = {**os.environ, "PYTHONPATH": str(REPO), "SPARKGATE_CONF_DIR": ""}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.soak",
            "--quick",
            "--big-rows",
            "5000000",
            "--out",
            str(out),
            "--work-dir",
            str(tmp_path / "work"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1100,
        env=env,
    )
    assert run.returncode == 0, f"{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    assert "PASSED" in run.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    served = report["statements"]["served"]
    assert all(served.get(kind, 0) > 0 for kind in _KINDS), served
    assert report["results"]["lost"] == 0
    errors = report["errors"]
    assert not errors["unexpected_5xx"], errors
    assert not errors["unexpected_hs2"], errors
    assert not errors["unexpected_other"], errors
    # Every error was a documented answer of the restarting engine, and clients met some.
    assert sum(errors["expected_during_restart"].values()) == sum(errors["by_kind"].values()) > 0
    events = report["events"]
    assert all(events.get(f"refused: {kind}", 0) > 0 for kind in _HOST_KINDS), events
    assert events.get("sessions expired", 0) > 0, events
    assert events.get("streaming job RUNNING", 0) > 0, events
    assert [r["rows"] for r in report["big_select"]] == [5_000_000]
    # One engine restart, the soak's kill: the gateway healed, on a new JVM.
    engine = report["engine"]
    assert engine["restarts"] == 1, engine
    [kill] = engine["planned_kills"]
    assert kill["back_after_s"] is not None and kill["new_pid"] not in (None, kill["pid"]), kill
    assert events.get("streaming job committed on the new engine") == 1, events
    # The figures the 30-minute run reports are there, for both processes.
    for series in ("gateway", "engine"):
        assert report["rss_mb"][series]["max"] > 0
    assert len(report["samples"]) >= 20  # one every 5 s
