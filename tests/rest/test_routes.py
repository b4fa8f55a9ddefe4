"""Every route of every version, against Flink's API snapshots, on the real endpoint.

Which routes exist in which version, unknown routes and the routes answering
501 are protocol facts, tested without a JVM in tests/protocol/test_rest_routes.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from sparkgate.api.endpoint import EndpointFactory
from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import EndpointVersion
from sparkgate.endpoints.rest import openapi
from sparkgate.endpoints.rest.routes import LATEST, ROUTES, RestApiVersion, routes_for
from sparkgate.service.gateway import SparkGatewayService

from .conftest import DATA, submit, walk

VERSIONS = [v.name for v in RestApiVersion]
REPO_ROOT = Path(__file__).resolve().parents[2]


def snapshot_routes(version: str) -> set[tuple[str, str]]:
    path = DATA / f"sql_gateway_rest_api_{version.lower()}.snapshot"
    calls = json.loads(path.read_text(encoding="utf-8"))["calls"]
    return {(call["method"], call["url"]) for call in calls}


@pytest.mark.parametrize("version", VERSIONS)
def test_route_table_is_exactly_the_snapshot(version: str) -> None:
    ours = {(r.method, r.path) for r in routes_for(RestApiVersion[version]) if not r.extension}
    assert ours == snapshot_routes(version)


@pytest.mark.parametrize("prefix", ["/v1", "/v2", "/v3", "/v4", ""])
def test_api_versions_and_info(client: httpx.Client, prefix: str) -> None:
    assert client.get(prefix + "/api_versions").json() == {"versions": VERSIONS}
    response = client.get(prefix + "/info")
    assert response.headers["content-type"] == "application/json; charset=UTF-8"
    info = response.json()
    assert list(info)[:2] == ["productName", "version"]
    assert info["productName"] == "sparkgate"
    assert info["sparkVersion"].startswith("4.")


@pytest.mark.parametrize(
    ("prefix", "version"),
    [("/v1", "V1"), ("/v2", "V2"), ("/v3", "V3"), ("/v4", "V4"), ("", LATEST.name)],
)
def test_session_lifecycle_records_the_url_version(
    client: httpx.Client, rest_service: SparkGatewayService, prefix: str, version: str
) -> None:
    response = client.post(
        prefix + "/sessions", json={"sessionName": "s", "properties": {"my.key": "v1"}}
    )
    assert response.status_code == 200
    handle = response.json()["sessionHandle"]
    assert list(response.json()) == ["sessionHandle"]
    assert rest_service.get_session_endpoint_version(
        SessionHandle.parse(handle)
    ) == EndpointVersion("rest", version)
    config = client.get(f"{prefix}/sessions/{handle}").json()
    assert list(config) == ["properties"] and config["properties"]["my.key"] == "v1"
    assert client.post(f"{prefix}/sessions/{handle}/heartbeat").json() == {}
    assert client.delete(f"{prefix}/sessions/{handle}").json() == {"status": "CLOSED"}
    assert client.get(f"{prefix}/sessions/{handle}").status_code == 404
    assert client.delete(f"{prefix}/sessions/{handle}").status_code == 404


def test_open_session_without_body(client: httpx.Client) -> None:
    response = client.post("/v4/sessions")
    assert response.status_code == 200
    client.delete(f"/v4/sessions/{response.json()['sessionHandle']}")


def test_configure_session_and_complete_statement(client: httpx.Client, session: str) -> None:
    base = f"/v2/sessions/{session}"
    response = client.post(
        base + "/configure-session",
        json={"statement": "CREATE TEMPORARY VIEW cfg_v AS SELECT 7 AS seven;"},
    )
    assert response.status_code == 200 and response.json() == {}
    response = client.post(
        base + "/configure-session",
        json={"statement": "SET 'my.flag' = 'on'", "executionTimeout": 0},
    )
    assert response.status_code == 200
    assert client.get(base).json()["properties"]["my.flag"] == "on"
    assert (
        walk(
            client,
            f"{base}/operations/{submit(client, session, 'SELECT seven FROM cfg_v')}"
            "/result/0?rowFormat=JSON",
        )[-1]["resultType"]
        == "EOS"
    )
    response = client.request(
        "GET", base + "/complete-statement", json={"statement": "SELE", "position": 4}
    )
    assert response.status_code == 200
    assert list(response.json()) == ["candidates"] and "SELECT" in response.json()["candidates"]
    by_query = client.get(base + "/complete-statement", params={"statement": "SELE", "position": 4})
    assert by_query.json() == response.json()


def test_operation_status_cancel_close(client: httpx.Client, session: str) -> None:
    op = submit(client, session, "SELECT id FROM range(1000000000) WHERE id < 0")
    base = f"/v4/sessions/{session}/operations/{op}"
    status = client.get(base + "/status").json()
    assert list(status) == ["status"]
    assert status["status"] in {"PENDING", "RUNNING", "FINISHED"}
    assert client.post(base + "/cancel").json() == {"status": "CANCELED"}
    assert client.get(base + "/status").json() == {"status": "CANCELED"}
    assert client.delete(base + "/close").json() == {"status": "CLOSED"}
    for method, path in (("GET", "/status"), ("POST", "/cancel"), ("DELETE", "/close")):
        response = client.request(method, base + path)
        assert response.status_code == 404, (method, path)
        assert "does not exist" in response.json()["errors"][0]


def test_finished_operation_status(client: httpx.Client, session: str) -> None:
    op = submit(client, session, "SELECT 1")
    base = f"/v1/sessions/{session}/operations/{op}"
    walk(client, base + "/result/0")
    assert client.get(base + "/status").json() == {"status": "FINISHED"}


def test_openapi_is_served_and_committed() -> None:
    committed = (REPO_ROOT / openapi.DOCS_PATH).read_text(encoding="utf-8")
    assert committed == openapi.render_openapi(), (
        "docs/rest-openapi.json is stale; regenerate with: "
        "python -m sparkgate.endpoints.rest.openapi"
    )


def test_openapi_covers_every_route(client: httpx.Client) -> None:
    document: dict[str, Any] = client.get("/openapi.json").json()
    assert document == openapi.build_openapi()
    documented = {
        (method.upper(), path, tuple(op["x-versions"]))
        for path, ops in document["paths"].items()
        for method, op in ops.items()
    }
    served: dict[tuple[str, str], set[str]] = {}
    for r in ROUTES:  # a route of Flink's versions and of ours is documented once
        served.setdefault((r.method, r.template), set()).update(v.name for v in r.versions)
    expected = {(method, path, tuple(sorted(v))) for (method, path), v in served.items()}
    assert documented == expected
    result = document["paths"][
        "/sessions/{session_handle}/operations/{operation_handle}/result/{token}"
    ]
    fields = list(
        result["get"]["responses"]["200"]["content"]["application/json"]["schema"]["properties"]
    )
    assert fields == [
        "resultType",
        "isQueryResult",
        "jobID",
        "resultKind",
        "results",
        "nextResultUri",
    ]


def test_openapi_main_check_detects_drift(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert openapi.main(["--check"]) == 1
    assert openapi.main([]) == 0
    assert openapi.main(["--check"]) == 0
    (tmp_path / openapi.DOCS_PATH).write_text("{}\n", encoding="utf-8")
    assert openapi.main(["--check"]) == 1


def test_entry_point_registers_the_factory() -> None:
    from importlib.metadata import entry_points

    from sparkgate.api.endpoint import ENTRY_POINT_GROUP

    [entry] = [e for e in entry_points(group=ENTRY_POINT_GROUP) if e.name == "rest"]
    factory = entry.load()()
    assert isinstance(factory, EndpointFactory) and factory.identifier == "rest"
    keys = [option.key for option in factory.options()]
    assert keys == [
        "address",
        "port",
        "bind-address",
        "bind-port",
        "fetch-timeout",
        "max-body-size",
        "fetch-max-rows",
        "cors.allowed-origins",
        "header-timeout",
        "keep-alive-timeout",
        "ssl.enabled",
        "ssl.certificate",
        "ssl.key",
        "ssl.key-password",
        "ssl.keystore",
        "ssl.keystore-password",
    ]
