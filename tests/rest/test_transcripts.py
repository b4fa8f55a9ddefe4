"""Replays the Flink SQL Client's and JDBC driver's call sequences from real transcripts.

Values differ from Flink's; what must match is what the clients parse: the
keys (in order) and JSON value types of every response, status 200, and the
nextResultUri walk. ``jobID`` is the one optional key ("only when the result
has one").
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
import pytest

from .conftest import DATA

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# Flink-only statements and their Spark equivalents.
SPARK_EQUIVALENTS = {
    "CREATE TABLE t1": "CREATE TEMPORARY VIEW t1 AS SELECT * FROM VALUES (1, 'aaaa'), "
    "(2, 'bbbb'), (3, 'cccc') AS t(id, name)",
}
FREE_FORM = {"properties", "logicalType"}  # maps whose keys depend on config or type
OPTIONAL = {"jobID"}


def load(name: str) -> list[dict[str, Any]]:
    with (DATA / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def json_type(value: Any) -> str:
    return type(value).__name__ if value is not None else "null"


def assert_same_shape(ours: Any, theirs: Any, where: str = "$") -> None:
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), where
        if where.rsplit(".", 1)[-1] in FREE_FORM:
            assert all(isinstance(k, str) for k in ours), where
            return
        mine = [k for k in ours if k not in OPTIONAL or k in theirs]
        assert mine == [k for k in theirs if k not in OPTIONAL or k in ours], where
        for key in mine:
            assert_same_shape(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list), where
        if where.endswith(".fields"):
            return  # row values: types depend on the columns
        if ours and theirs:
            assert_same_shape(ours[0], theirs[0], f"{where}[0]")
    elif where.endswith(".comment"):
        assert ours is None or isinstance(ours, str), where
    else:
        assert json_type(ours) == json_type(theirs), (where, ours, theirs)


class Replay:
    """Sends a transcript's requests with our handles, checking each response's shape."""

    def __init__(self, client: httpx.Client, transcript: list[dict[str, Any]]) -> None:
        self.client = client
        self.transcript = transcript
        self.handles: dict[str, str] = {}
        self.examples: dict[tuple[str, str], dict[str, Any]] = {}
        for exchange in transcript:  # one example body per (operation, resultType)
            if "/result/" in exchange["path"]:
                body = json.loads(exchange["resp"])
                op = re.findall(UUID, exchange["path"])[1]
                self.examples.setdefault((op, body["resultType"]), body)
                self.examples.setdefault(("*", body["resultType"]), body)

    def ours(self, text: str) -> str:
        return re.sub(UUID, lambda m: self.handles.get(m.group(0), m.group(0)), text)

    def fetch_walk(self, theirs_op: str, uri: str) -> list[dict[str, Any]]:
        bodies = []
        deadline = time.monotonic() + 120
        next_uri: str | None = uri
        while next_uri is not None:
            assert time.monotonic() < deadline
            response = self.client.get(next_uri)
            assert response.status_code == 200, response.text
            body = response.json()
            example = (
                self.examples.get((theirs_op, body["resultType"]))
                or self.examples[("*", body["resultType"])]
            )
            assert_same_shape(body, example)
            bodies.append(body)
            next_uri = body.get("nextResultUri")
            if body["resultType"] != "EOS":
                assert next_uri is not None and next_uri.split("?")[1] == uri.split("?")[1]
        return bodies

    def run(self) -> list[list[dict[str, Any]]]:
        results = []
        walked: set[str] = set()
        for exchange in self.transcript:
            path, method = exchange["path"], exchange["method"]
            if "/result/" in path:
                theirs_op = re.findall(UUID, path)[1]
                if theirs_op not in walked:  # walk once, as the client does, to EOS
                    walked.add(theirs_op)
                    results.append(self.fetch_walk(theirs_op, self.ours(path)))
                continue
            request = json.loads(exchange["req"] or "{}")
            statement = request.get("statement", "")
            for prefix, replacement in SPARK_EQUIVALENTS.items():
                if statement.startswith(prefix):
                    request["statement"] = replacement
            response = self.client.request(method, self.ours(path), json=request)
            assert response.status_code == exchange["status"] == 200, (path, response.text)
            body, theirs = response.json(), json.loads(exchange["resp"])
            assert_same_shape(body, theirs)
            for key in ("sessionHandle", "operationHandle"):
                if key in theirs:
                    self.handles[theirs[key]] = body[key]
        return results


@pytest.mark.parametrize("name", ["sqlclient-2.1.0-gateway-mode.jsonl", "jdbc-driver-2.1.0.jsonl"])
def test_replay_transcript(client: httpx.Client, name: str) -> None:
    transcript = load(name)
    results = Replay(client, transcript).run()
    assert results and all(walk[-1]["resultType"] == "EOS" for walk in results)
    data = [
        [row["fields"] for b in walk if "results" in b for row in b["results"]["data"]]
        for walk in results
    ]
    if name.startswith("sqlclient"):
        # SET, SET, CREATE (view), SHOW TABLES, SELECT id FROM t1, SELECT VALUES
        assert data[0] == [["OK"]] and data[2] == [["OK"]]
        assert data[4] == [["1"], ["2"], ["3"]]
        assert data[5] == [["1", "Hello"], ["2", "Hi"]]
        assert {b["results"]["rowFormat"] for w in results for b in w if "results" in b} == {
            "PLAIN_TEXT"
        }
    else:
        # The JDBC driver's JSON values equal Flink's for this query.
        assert data[1] == [[1, "Hello", 1.5, "2024-01-02"], [2, "Hi", None, None]]
