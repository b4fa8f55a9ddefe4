"""The benchmark harness runs end to end on its in-process target (no servers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_quick_select1_in_process_writes_the_expected_json(tmp_path: Path) -> None:
    output = tmp_path / "result.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--quick",
            "--targets",
            "inprocess",
            "--only",
            "select1",
            "--output",
            str(output),
            "--no-docs",
            "--driver-memory",
            "1g",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "SELECT 1 round trip" in result.stdout

    doc = json.loads(output.read_text(encoding="utf-8"))
    assert {
        "schema",
        "mode",
        "machine",
        "settings",
        "targets",
        "workloads",
        "ratios",
        "goals",
    } <= doc.keys()
    assert doc["mode"] == "quick"
    assert doc["machine"]["cores"] >= 1
    assert doc["machine"]["spark"]
    assert doc["targets"]["inprocess"]["available"] is True
    assert doc["targets"]["thrift"]["available"] is False  # never started
    assert list(doc["workloads"]) == ["select1"]
    select1 = doc["workloads"]["select1"]["inprocess"]
    assert select1["n"] >= 1
    assert 0 < select1["median"] <= select1["max"]
    assert doc["ratios"]["select1"]["inprocess"]["vs_inprocess"] == 1.0
    assert {g["goal"] for g in doc["goals"]} >= {"select1_vs_inprocess", "fetch_json"}
