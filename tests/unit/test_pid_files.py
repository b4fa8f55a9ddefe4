"""A pid file is trusted only while its process lives and is a gateway."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sparkgate.server.pidfiles import pid_file, running_gateways, write_pid_file


def test_a_pid_file_of_a_killed_gateway_is_not_a_live_gateway(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # its pid is now free: a gateway killed without cleaning up
    stale = write_pid_file(tmp_path, child.pid, ["http://127.0.0.1:8083"])
    assert running_gateways(tmp_path) == []
    assert not stale.exists(), "the stale file is removed"


def test_a_reused_pid_of_another_program_is_not_a_gateway(tmp_path: Path) -> None:
    other = subprocess.Popen(["sleep", "30"])
    try:
        write_pid_file(tmp_path, other.pid, ["http://127.0.0.1:8083"])
        assert running_gateways(tmp_path) == []
        assert not pid_file(tmp_path, other.pid).exists()
    finally:
        other.kill()
        other.wait()


def test_the_live_gateway_is_found(tmp_path: Path) -> None:
    import os

    write_pid_file(tmp_path, os.getpid(), ["http://127.0.0.1:8083"])
    assert [g.pid for g in running_gateways(tmp_path)] == [os.getpid()]
