"""Session properties of the gateway's typed options are checked: at open and at SET."""

from __future__ import annotations

import httpx
import pytest

from .conftest import run, submit


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("execution.runtime-mode", "sideways"),
        ("sql-gateway.session.idle-timeout", "banana"),
        ("table.dml-sync", "perhaps"),
        ("sql-gateway.result.buffer-size", "lots"),
    ],
)
def test_an_invalid_value_is_refused_at_open_with_400(
    client: httpx.Client, key: str, value: str
) -> None:
    response = client.post("/v1/sessions", json={"properties": {key: value}})
    assert response.status_code == 400, response.text
    assert key in response.text and value in response.text


def test_an_invalid_value_is_refused_at_set(client: httpx.Client, session: str) -> None:
    op = submit(client, session, "SET 'execution.runtime-mode' = 'sideways'")
    uri = f"/v4/sessions/{session}/operations/{op}/result/0"
    response = client.get(uri)
    while response.status_code == 200 and response.json()["resultType"] == "NOT_READY":
        response = client.get(uri)
    assert response.status_code == 500, response.text
    assert "runtime mode 'sideways'" in response.text.replace("\\'", "'")
    # The session keeps its valid value, and valid values still go in.
    config = client.get(f"/v4/sessions/{session}").json()["properties"]
    assert config.get("execution.runtime-mode") != "sideways"
    run(client, session, "SET 'execution.runtime-mode' = 'streaming'")
    config = client.get(f"/v4/sessions/{session}").json()["properties"]
    assert config["execution.runtime-mode"] == "streaming"
