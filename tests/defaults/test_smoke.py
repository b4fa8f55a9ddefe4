"""The default gateway answers, and its data lands in the user's ``~/.sparkgate``."""

from __future__ import annotations

import httpx

from tests.defaults.conftest import DefaultGateway


def test_default_gateway_uses_home_data_dir(default_gateway: DefaultGateway) -> None:
    base = f"{default_gateway.url}/v4"
    session = httpx.post(f"{base}/sessions", json={}).json()["sessionHandle"]
    try:
        op = httpx.post(
            f"{base}/sessions/{session}/statements", json={"statement": "SELECT 1 AS one"}
        ).json()["operationHandle"]
        body = httpx.get(
            f"{base}/sessions/{session}/operations/{op}/result/0",
            params={"rowFormat": "JSON"},
            timeout=60,
        ).json()
        assert body["results"]["data"] == [{"kind": "INSERT", "fields": [1]}]
    finally:
        httpx.delete(f"{base}/sessions/{session}")
    assert (default_gateway.data_dir / "log" / "sparkgate.log").exists()
