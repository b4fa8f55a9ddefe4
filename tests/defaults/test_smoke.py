"""The default gateway answers, and its data lands in the user's ``~/.sparkgate``."""

from __future__ import annotations

from typing import Any

import httpx

from tests.defaults.conftest import DefaultGateway


def test_default_gateway_uses_home_data_dir(default_gateway: DefaultGateway) -> None:
    with httpx.Client(base_url=default_gateway.url, timeout=60) as http:
        session = http.post("/v4/sessions", json={}).json()["sessionHandle"]
        try:
            op = http.post(
                f"/v4/sessions/{session}/statements", json={"statement": "SELECT 1 AS one"}
            ).json()["operationHandle"]
            rows: list[Any] = []
            uri: str | None = f"/v4/sessions/{session}/operations/{op}/result/0?rowFormat=JSON"
            while uri:  # pages until the last, as any Flink client reads them
                body = http.get(uri).json()
                rows.extend(body.get("results", {}).get("data", []))
                uri = body.get("nextResultUri")
            assert rows == [{"kind": "INSERT", "fields": [1]}]
        finally:
            http.delete(f"/v4/sessions/{session}")
    assert (default_gateway.data_dir / "log" / "sparkgate.log").exists()
