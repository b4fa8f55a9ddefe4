"""Per-statement options over REST: ``executionConfig`` reaches the gateway's own
options (runtime mode, job name), for that one statement only."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from .conftest import rows, run, walk

__all__: list[str] = []


def _name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def _run_with(
    client: httpx.Client, session: str, statement: str, config: dict[str, str]
) -> list[list[Any]]:
    response = client.post(
        f"/v4/sessions/{session}/statements",
        json={"statement": statement, "executionConfig": config},
    )
    assert response.status_code == 200, response.text
    op = response.json()["operationHandle"]
    return rows(walk(client, f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON"))


def _describe(client: httpx.Client, session: str, job_id: str) -> dict[str, Any]:
    bodies = run(client, session, f"DESCRIBE JOB '{job_id}'")
    names = [c["name"] for c in bodies[0]["results"]["columns"]]
    [values] = rows(bodies)
    return dict(zip(names, values, strict=True))


def test_execution_config_runtime_mode_and_job_name_for_one_statement(
    client: httpx.Client, session: str
) -> None:
    src, sink = _name("src"), _name("hole")
    run(client, session, f"CREATE TABLE {src} (a INT) WITH ('connector' = 'datagen')")
    run(client, session, f"CREATE TABLE {sink} (a INT) WITH ('connector' = 'blackhole')")
    [[job_id]] = _run_with(
        client,
        session,
        f"INSERT INTO {sink} SELECT a FROM {src}",
        {"execution.runtime-mode": "streaming", "pipeline.name": "per-statement job"},
    )
    try:
        described = _describe(client, session, job_id)
        # A streaming job (it has a checkpoint) that runs on: the unbounded source.
        assert described["job name"] == "per-statement job"
        assert described["status"] == "RUNNING"
        assert described["checkpoint"]
    finally:
        run(client, session, f"STOP JOB '{job_id}'")
    # The session itself stays in batch mode.
    [[_, mode]] = rows(run(client, session, "SET 'execution.runtime-mode'"))
    assert mode != "streaming"
    [[batch_job]] = rows(run(client, session, f"INSERT INTO {sink} VALUES (1)"))
    described = _describe(client, session, batch_job)
    assert described["job name"] == f"INSERT INTO {sink} VALUES (1)"
    assert described["status"] == "FINISHED"
    assert described["checkpoint"] is None
