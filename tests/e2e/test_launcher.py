"""The real ``sparkgate`` command in a subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SPARKGATE = [sys.executable, "-m", "sparkgate.cli"]


def test_start_foreground_serves_until_sigterm(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            *SPARKGATE,
            "gateway",
            "start-foreground",
            f"-Dsql-gateway.data-dir={tmp_path}",
            "-Dspark.master=local[1]",
            "-Dspark.ui.enabled=false",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "SPARKGATE_CONF_DIR": ""},
    )
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 180
    try:
        for line in proc.stdout:
            lines.append(line)
            if "is running on Spark" in line:
                break
            assert time.monotonic() < deadline, "".join(lines)
        else:
            raise AssertionError("gateway exited early:\n" + "".join(lines))
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    output = "".join(lines) + rest
    assert proc.returncode == 0, output
    assert "Gateway service stopped" in output
    assert "log4j" not in output.lower(), "Spark's console noise leaked into the terminal"
    assert (tmp_path / "log" / "sparkgate.log").exists()


def test_bad_option_is_a_clear_startup_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [*SPARKGATE, "gateway", "start-foreground", "-Dsql-gateway.session.idle-timout=5 min"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        env={**os.environ, "SPARKGATE_CONF_DIR": ""},
    )
    assert result.returncode == 2
    assert "sql-gateway.session.idle-timout" in result.stderr
    assert "sql-gateway.session.idle-timeout" in result.stderr  # the suggestion
