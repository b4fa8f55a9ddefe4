"""``sparkgate sql`` as a user runs it: no session time zone, no data dir, no options.

The real command runs a script in embedded mode (Spark in the client, a fresh
``HOME``) and in gateway mode against the default gateway. TIMESTAMP values
print in the zone Spark uses (the machine's, as nobody set one) and the client
never stops on a value.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.defaults.conftest import DefaultGateway, default_env

SCRIPT = """\
SELECT current_timestamp();
SELECT TIMESTAMP '2024-02-29 12:34:56.789' AS ltz,
  CAST(TIMESTAMP '2024-02-29 12:34:56.789' AS STRING) AS spark_text,
  TIMESTAMP_NTZ '2024-02-29 12:34:56' AS ntz, DATE '2024-02-29' AS d,
  CAST(1.50 AS DECIMAL(10, 2)) AS dec;
SELECT array(TIMESTAMP '2024-01-01 00:00:00') AS arr,
  named_struct('t', TIMESTAMP '2024-01-01 00:00:00', 'm', map('k', CAST(0 AS DECIMAL(5, 2)))) AS st;
SELECT 'still here' AS s;
"""
_NOW = re.compile(r"^\| (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}) \|$", re.M)


def run_sql(args: list[str], home: Path, tmp_path: Path) -> str:
    script = tmp_path / "script.sql"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "sparkgate.cli", "sql", *args, "-f", str(script)],
        capture_output=True,
        text=True,
        env=default_env(home),
        cwd=home,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr == ""
    return done.stdout


def check_values(out: str) -> None:
    assert _NOW.search(out), out  # current_timestamp() printed, not a crash
    lines = re.findall(r"^\| (.+) \|$", out.split("AS dec;")[1], re.M)
    assert len(lines) >= 2, out  # the header, then the row
    ltz, spark_text, ntz, d, dec = (cell.strip() for cell in lines[1].split(" | "))
    # The same wall clock Spark's CAST prints: the zone Spark uses, whatever it is.
    assert ltz.startswith(spark_text), out
    assert (ntz, d, dec) == ("2024-02-29 12:34:56", "2024-02-29", "1.50"), out
    # Nested values, the same zone; a literal typed by its digits, as in Flink.
    assert "[2024-01-01 00:00:00]" in out, out
    assert "(2024-01-01 00:00:00, {k=0.00})" in out, out
    assert "still here" in out, out
    assert "[WARNING]" not in out, out  # Spark's default zone is one the client knows


def test_embedded_client_prints_timestamps_with_the_default_zone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    out = run_sql([], home, tmp_path)
    check_values(out)
    # The embedded client's files live in the default data dir.
    assert (home / ".sparkgate" / "log" / "sql-client.log").exists()


def test_gateway_client_prints_timestamps_with_the_default_zone(
    default_gateway: DefaultGateway, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    out = run_sql(["gateway", "-e", f"127.0.0.1:{default_gateway.port}"], home, tmp_path)
    check_values(out)


def test_gateway_mode_client_files_go_to_the_users_state_dir(
    default_gateway: DefaultGateway, tmp_path: Path
) -> None:
    """History and log of a gateway-mode client: ``~/.local/state/sparkgate`` by default."""
    import pexpect

    home = tmp_path / "home"
    home.mkdir()
    env = {**default_env(home), "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
    env.pop("XDG_STATE_HOME", None)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "sparkgate.cli", "sql", "gateway", "-e", f"127.0.0.1:{default_gateway.port}"],
        cwd=str(home),
        env=env,
        encoding="utf-8",
        timeout=120,
        dimensions=(40, 160),
    )
    try:
        child.expect_exact("Spark SQL> ")
        child.send("SELECT 'kept in history' AS h;\r")
        child.expect("1 row in set")
        child.expect_exact("Spark SQL> ")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.terminate(force=True)
    state = home / ".local" / "state" / "sparkgate"
    assert "kept in history" in (state / "sql-history").read_text(encoding="utf-8")
    assert (state / "log" / "sql-client.log").exists()
    assert not (home / ".sparkgate").exists()  # not a gateway data dir of its own


def test_gateway_mode_client_files_follow_an_explicit_data_dir(
    default_gateway: DefaultGateway, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    mine = tmp_path / "client-data"
    script = tmp_path / "set.sql"
    script.write_text("SET;\n", encoding="utf-8")
    done = subprocess.run(
        [
            *(sys.executable, "-m", "sparkgate.cli", "sql", "gateway"),
            *("-e", f"127.0.0.1:{default_gateway.port}", f"-Dsql-gateway.data-dir={mine}"),
            *("-f", str(script)),
        ],
        capture_output=True,
        text=True,
        env=default_env(home),
        cwd=home,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (mine / "log" / "sql-client.log").exists()
    assert str(mine) not in done.stdout  # the client's option, not a session property
    assert not (home / ".sparkgate").exists()
    assert not (home / ".local" / "state" / "sparkgate").exists()
