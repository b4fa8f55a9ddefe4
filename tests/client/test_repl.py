"""The interactive client in a pseudo-terminal (pexpect), against a real gateway process
(gateway mode) and with Spark in the client's own process (embedded mode).

Gateway-mode sessions start in a second; embedded ones start Spark in the
child, so there is a single embedded test and it does several things.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pexpect
import pytest

from tests.processes import free_port, spark_options

SPARKGATE = [sys.executable, "-m", "sparkgate.cli"]
PROMPT = "Spark SQL> "
LONG_QUERY = "SELECT max(hash(id)) FROM range(0, 5000000000000, 1, 2);"
ENV = {
    **os.environ,
    "SPARKGATE_CONF_DIR": "",
    "PROMPT_TOOLKIT_NO_CPR": "1",
    "TERM": "xterm",
    "COLUMNS": "160",
    "LINES": "40",
}


def engine_options(data_dir: Path) -> list[str]:
    return [
        f"-Dsql-gateway.data-dir={data_dir}",
        *spark_options(),
        "-Dspark.ui.enabled=false",
    ]


@pytest.fixture(scope="module")
def gateway_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``sparkgate gateway start-foreground`` on a free loopback port."""
    data_dir = tmp_path_factory.mktemp("gateway-data")
    port = free_port()
    proc = subprocess.Popen(
        [
            *SPARKGATE,
            "gateway",
            "start-foreground",
            *engine_options(data_dir),
            f"-Dsql-gateway.endpoint.rest.port={port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=data_dir,
        env=ENV,
    )
    try:
        deadline = time.monotonic() + 240
        while True:
            assert proc.poll() is None, f"the gateway exited with {proc.returncode}"
            assert time.monotonic() < deadline, "the gateway did not start"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/api_versions").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        yield f"127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


def spawn(args: list[str], cwd: Path) -> pexpect.spawn:
    child = pexpect.spawn(
        SPARKGATE[0],
        [*SPARKGATE[1:], *args],
        cwd=str(cwd),
        env=ENV,
        encoding="utf-8",
        timeout=120,
        dimensions=(40, 160),
    )
    return child


def strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", text)


def run(child: pexpect.spawn, statement: str, expect: str) -> str:
    """Type ``statement``, press Enter, wait for ``expect`` and the next prompt."""
    child.send(statement + "\r")
    child.expect(expect)
    before = str(child.before) + str(child.after)
    child.expect_exact(PROMPT)
    return strip_ansi(before)


def quit_with_ctrl_d(child: pexpect.spawn) -> None:
    child.sendcontrol("d")
    child.expect("Shutting down the session")
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    assert child.exitstatus == 0


def test_gateway_mode_typing_completion_cancel_and_history(
    gateway_address: str, tmp_path: Path
) -> None:
    history = tmp_path / "history"
    args = ["sql", "gateway", "-e", gateway_address, "--history", str(history)]
    child = spawn(args, tmp_path)
    try:
        child.expect("sparkgate SQL client")
        child.expect_exact(PROMPT)
        # A statement over several lines: Enter before the ';' continues it.
        child.send("SELECT 1 AS one,\r")
        child.expect("> ")
        out = run(child, "  'two' AS two;", r"1 row in set")
        assert re.search(r"\|\s+one \|\s+two \|", out), out
        assert re.search(r"\|\s+1 \|\s+two \|", out), out
        # A ';' inside quotes does not end the statement.
        child.send("SELECT 'a;b' AS s\r")
        child.expect("> ")
        out = run(child, ";", r"1 row in set")
        assert "a;b" in out, out
        # Tab completes names from the gateway's completion API.
        run(child, "CREATE TEMPORARY VIEW pexpect_only_view AS SELECT 7 AS a;", r"succeeded")
        child.send("SELECT a FROM pexpect_only_vi")
        child.send("\t")
        child.expect("ew")  # the terminal is redrawn with just the completed rest
        out = run(child, ";", r"1 row in set|\[ERROR\]")
        assert "[ERROR]" not in out, out
        assert re.search(r"\|\s+7 \|", out), out
        # Ctrl-C cancels a long query and returns to the prompt.
        child.send(LONG_QUERY + "\r")
        child.expect("Ctrl-C cancels", timeout=60)  # the live status line
        child.sendcontrol("c")
        child.expect("Statement cancelled", timeout=60)
        child.expect_exact(PROMPT)
        out = run(child, "SELECT 42 AS answer;", r"1 row in set")
        assert re.search(r"\|\s+42 \|", out), out
        # Errors show the root cause and keep the session.
        out = run(child, "SELECT * FROM no_such_table_anywhere;", r"TABLE_OR_VIEW_NOT_FOUND")
        assert "[ERROR] Could not execute SQL statement. Reason:" in out, out
        quit_with_ctrl_d(child)
    finally:
        child.terminate(force=True)
    assert "SELECT 42 AS answer;" in history.read_text(encoding="utf-8")

    # History survives a restart: Up brings back the last statement.
    child = spawn(args, tmp_path)
    try:
        child.expect_exact(PROMPT)
        child.send("\x1b[A")  # arrow up
        child.expect("no_such_table_anywhere")
        child.sendcontrol("c")  # clears the line
        child.expect_exact(PROMPT)
        child.send("quit\r")  # client commands need no ';'
        child.expect("Shutting down the session")
        child.expect(pexpect.EOF, timeout=60)
    finally:
        child.terminate(force=True)


def test_embedded_mode_runs_spark_in_process_quietly(tmp_path: Path) -> None:
    child = spawn(["sql", *engine_options(tmp_path / "data")], tmp_path)
    try:
        child.expect("sparkgate SQL client", timeout=240)
        child.expect_exact(PROMPT)
        banner = strip_ansi(str(child.before))
        assert "embedded" in banner
        out = run(child, "SELECT id, id * 10 AS tens FROM range(3);", r"3 rows in set")
        assert re.search(r"\|\s+2 \|\s+20 \|", out), out
        child.send(LONG_QUERY + "\r")
        child.expect(r"Stages \d+/\d+", timeout=60)  # Spark progress from the service
        child.sendcontrol("c")
        child.expect("Statement cancelled", timeout=60)
        child.expect_exact(PROMPT)
        transcript = strip_ansi(str(child.before))
        out = run(child, "SELECT 'still here' AS s;", r"1 row in set")
        quit_with_ctrl_d(child)
    finally:
        child.terminate(force=True)
    noise = ("log4j", "WARN ", "INFO ", "Setting default log level")
    for text in (banner, out, transcript):
        assert not any(n in text for n in noise), text
    assert (tmp_path / "data" / "log" / "sql-client.log").exists()


@pytest.mark.parametrize(
    ("script", "status", "shown", "hidden"),
    [
        ("SELECT 1 AS x;\nSELECT 2 AS y;\n", 0, "| y |", "[ERROR]"),
        ("SELECT 1 AS x;\nSELECT nope FROM range(1);\nSELECT 3 AS z;\n", 1, "[ERROR]", "| z |"),
    ],
)
def test_gateway_mode_script_exit_status(
    gateway_address: str, tmp_path: Path, script: str, status: int, shown: str, hidden: str
) -> None:
    path = tmp_path / "script.sql"
    path.write_text(script, encoding="utf-8")
    done = subprocess.run(
        [*SPARKGATE, "sql", "gateway", "-e", gateway_address, "-f", str(path)],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == status, done.stdout + done.stderr
    assert shown in done.stdout
    assert hidden not in done.stdout
    assert done.stderr == ""


def test_gateway_mode_init_file_properties_and_jars(gateway_address: str, tmp_path: Path) -> None:
    import zipfile

    jar = tmp_path / "empty.jar"
    with zipfile.ZipFile(jar, "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    init = tmp_path / "init.sql"
    init.write_text(
        "SET 'sql-client.execution.result-mode' = 'tableau';\n"
        "SET 'sql-client.display.max-column-width' = '1000';\n"
        "CREATE TEMPORARY VIEW from_init AS SELECT 'initialised' AS state;\n",
        encoding="utf-8",
    )
    script = tmp_path / "script.sql"
    script.write_text(
        "SELECT state FROM from_init;\nSET 'pipeline.name';\nSHOW JARS;\n", encoding="utf-8"
    )
    done = subprocess.run(
        [
            *SPARKGATE,
            "sql",
            "gateway",
            "-e",
            gateway_address,
            "-i",
            str(init),
            "-f",
            str(script),
            "-D",
            "pipeline.name=from the command line",
            "-j",
            str(jar),
        ],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "initialised" in done.stdout  # -i ran through configure-session
    assert "from the command line" in done.stdout  # -D became a session property
    assert str(jar) in done.stdout  # -j added the jar to the session
