"""The README's and docs/hiveserver2.md's HiveServer2 commands, run as written.

Each documented command line goes to ``bash -c`` unchanged, in a user's
environment (a fresh ``HOME``, the virtual environment not activated); only
the ports are moved to free ones, because 8083 and 10000 may be taken on a
test machine. An unquoted ``;`` in the start command would make the shell
start the gateway without HiveServer2, and beeline would find no server.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from tests.defaults.conftest import default_env
from tests.processes import free_port, read_until_running

REPO = Path(__file__).resolve().parents[2]


def sh_lines(doc: Path) -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", doc.read_text(), flags=re.DOTALL)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]


def documented(doc: Path, needle: str) -> str:
    [line] = [line for line in sh_lines(doc) if needle in line and "hive" in line]
    return line


def user_env(home: Path, *, venv_on_path: bool) -> dict[str, str]:
    env = default_env(home)
    venv_bin = str(REPO / ".venv" / "bin")
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin]
    env["PATH"] = os.pathsep.join([venv_bin, *path] if venv_on_path else path)
    env.pop("VIRTUAL_ENV", None)
    return env


@pytest.mark.parametrize(
    ("doc", "venv_on_path"),
    [("README.md", False), ("docs/hiveserver2.md", True)],
    ids=["README", "hiveserver2.md"],
)
def test_documented_hiveserver2_commands_work_as_written(
    tmp_path: Path, doc: str, venv_on_path: bool
) -> None:
    start = documented(REPO / doc, "gateway start-foreground")
    client = documented(REPO / doc, "beeline -u")
    assert (REPO / ".venv" / "bin" / "sparkgate").exists() or venv_on_path
    rest_port, hs2_port = free_port(), free_port()
    env = user_env(tmp_path, venv_on_path=venv_on_path)
    gateway = subprocess.Popen(
        [
            "bash",
            "-c",
            f"{start} -Dsql-gateway.endpoint.rest.port={rest_port} "
            f"-Dsql-gateway.endpoint.hiveserver2.port={hs2_port}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPO,
        env=env,
        start_new_session=True,
    )
    try:
        banner = read_until_running(gateway, 240)[-1]
        assert f"thrift://127.0.0.1:{hs2_port}" in banner, banner
        done = subprocess.run(
            ["bash", "-c", client.replace(":10000/", f":{hs2_port}/") + " -e 'SELECT 1 AS one'"],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
            timeout=240,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert re.search(r"\|\s*one\s*\|", done.stdout), done.stdout
        assert "SPARK_HOME" not in done.stdout + done.stderr
    finally:
        os.killpg(gateway.pid, signal.SIGTERM)
        try:
            gateway.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(gateway.pid, signal.SIGKILL)
