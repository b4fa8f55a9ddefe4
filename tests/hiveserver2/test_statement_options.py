"""Per-statement options over HiveServer2: ``confOverlay`` reaches the gateway's
own options (``table.dml-sync``, ``pipeline.name``), for that one statement only."""

from __future__ import annotations

import uuid
from typing import Any

from TCLIService import ttypes

from tests.hiveserver2.conftest import RawClient, wait_for

__all__: list[str] = []

OK = ttypes.TStatusCode.SUCCESS_STATUS
ERROR = ttypes.TStatusCode.ERROR_STATUS


def _execute(
    client: RawClient, session: Any, statement: str, overlay: dict[str, str] | None = None
) -> Any:
    return client.ExecuteStatement(
        ttypes.TExecuteStatementReq(sessionHandle=session, statement=statement, confOverlay=overlay)
    )


def _rows(client: RawClient, session: Any, statement: str, **overlay: str) -> list[list[Any]]:
    resp = _execute(client, session, statement, overlay or None)
    assert resp.status.statusCode == OK, resp.status
    fetched = client.FetchResults(
        ttypes.TFetchResultsReq(
            operationHandle=resp.operationHandle,
            orientation=ttypes.TFetchOrientation.FETCH_NEXT,
            maxRows=1000,
        )
    )
    assert fetched.status.statusCode == OK, fetched.status
    columns = [
        next(v for v in c.__dict__.values() if v is not None).values
        for c in fetched.results.columns
    ]
    return [list(row) for row in zip(*columns, strict=True)]


def test_conf_overlay_dml_sync_false_returns_the_job_id_of_a_failing_insert(
    client: RawClient, session: Any
) -> None:
    table = f"overlay_{uuid.uuid4().hex[:8]}"
    _rows(client, session, f"CREATE TABLE {table} (a INT) USING parquet")
    failing = f"INSERT INTO {table} SELECT raise_error('boom')"
    # Synchronous by default: the statement fails with its job.
    resp = _execute(client, session, failing)
    assert resp.status.statusCode == ERROR
    # table.dml-sync = false for this statement: its job id comes back at once,
    # the job fails on its own, under the name pipeline.name gives it.
    [[job_id]] = _rows(
        client, session, failing, **{"table.dml-sync": "false", "pipeline.name": "hs2 async"}
    )

    def status() -> str:
        [[_, name, state, _]] = [
            row for row in _rows(client, session, "SHOW JOBS") if row[0] == job_id
        ]
        assert name == "hs2 async"
        return str(state)

    assert wait_for(lambda: status() == "FAILED", timeout=60)
    # The overlay changed nothing for the session.
    [[_, value]] = _rows(client, session, "SET 'table.dml-sync'")
    assert value != "false"
