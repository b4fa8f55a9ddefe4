"""The README's curl session, run as written against a default gateway.

The shell block under "Example session" is taken from README.md and run with
bash; only its ``localhost:8083`` becomes the test gateway's address. The rows
it prints must be the whole result (every page up to EOS), as a full walk of
the same statement over the REST API finds it, and as the README shows them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.defaults.conftest import DefaultGateway
from tests.locks import exclusive

README = Path(__file__).resolve().parents[2] / "README.md"
README_ADDRESS = "localhost:8083"


def _example_block() -> str:
    """The first ``sh`` block of the README's "Example session" section."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Example session\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert match, "no sh block in the README's Example session"
    return match.group(1)


@pytest.fixture(scope="module")
def shell_tools() -> None:
    """curl and jq, as the README assumes; installed with apt-get where they are missing."""
    missing = [tool for tool in ("curl", "jq") if shutil.which(tool) is None]
    if not missing:
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.fail(f"The README's example needs {' and '.join(missing)}; install them.")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with exclusive("apt-get"):
        if any(shutil.which(tool) is None for tool in missing):
            subprocess.run(["apt-get", "update"], check=True, env=env, capture_output=True)
            subprocess.run(["apt-get", "install", "-y", *missing], check=True, env=env)


def _pages(gateway: DefaultGateway, statement: str) -> list[dict[str, Any]]:
    """Every body of ``statement``'s result, following nextResultUri to EOS."""
    with httpx.Client(base_url=gateway.url, timeout=120) as http:
        session = http.post("/v4/sessions", json={}).json()["sessionHandle"]
        try:
            op = http.post(
                f"/v4/sessions/{session}/statements", json={"statement": statement}
            ).json()["operationHandle"]
            uri: str | None = f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON"
            bodies: list[dict[str, Any]] = []
            while uri is not None:
                response = http.get(uri)
                assert response.status_code == 200, response.text
                bodies.append(response.json())
                uri = bodies[-1].get("nextResultUri")
            return bodies
        finally:
            http.delete(f"/v4/sessions/{session}")


def _rows(bodies: list[dict[str, Any]]) -> list[Any]:
    return [row["fields"] for body in bodies for row in body.get("results", {}).get("data", [])]


def test_readme_curl_example_prints_the_whole_result(
    default_gateway: DefaultGateway, shell_tools: None
) -> None:
    block = _example_block()
    assert README_ADDRESS in block
    script = block.replace(README_ADDRESS, f"127.0.0.1:{default_gateway.port}")
    done = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        env=default_gateway.env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    printed = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
    sent = re.search(r"-d '(\{\"statement\".*?\})'", block)
    assert sent, "no statement in the README's example"
    statement = json.loads(sent.group(1))
    assert printed == _rows(_pages(default_gateway, statement["statement"]))
    # The README shows the output under the loop, one "#  [...]" line per row.
    shown = [json.loads(line[1:]) for line in block.splitlines() if line.startswith("#  [")]
    assert printed == shown


def test_slow_query_answers_empty_pages_then_its_rows(default_gateway: DefaultGateway) -> None:
    """What the README says a slow query's fetches answer.

    ``NOT_READY`` only before the first page (while the statement is prepared),
    then ``PAYLOAD`` pages, empty while the query runs (it scans six billion rows,
    well past the 3 s fetch timeout), then the rows, then ``EOS``.
    """
    statement = "SELECT count(*) AS n FROM range(0, 6000000000, 1, 2) WHERE id % 7 = 3"
    bodies = _pages(default_gateway, statement)
    kinds = [body["resultType"] for body in bodies]
    first_page = kinds.index("PAYLOAD")
    assert set(kinds[:first_page]) <= {"NOT_READY"}
    assert "NOT_READY" not in kinds[first_page:]
    assert kinds[-1] == "EOS"
    assert bodies[first_page]["results"]["data"] == []
    assert "nextResultUri" in bodies[first_page]
    assert [row[0] for row in _rows(bodies)] == [6_000_000_000 // 7]
