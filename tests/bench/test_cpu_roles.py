"""CPU by process role, as the large fetch reports it under its table."""

from __future__ import annotations

import subprocess
import sys
import time

from bench.memory import role_cpu
from bench.report import _fetch_notes

_BURN = (
    "import time\nt = time.process_time()\n"
    "while time.process_time() - t < 0.5: pass\ntime.sleep(60)"
)


def test_a_servers_own_cpu_is_its_roots() -> None:
    server = subprocess.Popen([sys.executable, "-c", _BURN])
    try:
        deadline = time.monotonic() + 30
        cpu = role_cpu(server.pid)
        while cpu["root"] < 0.5 and time.monotonic() < deadline:
            time.sleep(0.1)
            cpu = role_cpu(server.pid)
        assert cpu["root"] >= 0.5
        assert cpu["engine"] == cpu["workers"] == 0.0  # no JVM under it
    finally:
        server.kill()
        server.wait()


def test_the_fetch_notes_print_cpu_per_row_by_role() -> None:
    section = {
        "rest/json": {
            "target": "rest",
            "median": 19.1,
            "cpu_us_per_row": {
                "client": 0.87,
                "root": 0.69,
                "engine": 1.01,
                "workers": 0.24,
                "cores_busy": 1.76,
            },
        }
    }
    [note] = _fetch_notes({"targets": {"rest": {"label": "sparkgate REST"}}}, section)
    assert "sparkgate REST (json) 0.87 / 0.69 / 1.01 / 0.24 = 2.81 us, 1.76 cores" in note
