"""REST routes and their answers' shapes, in-process over the GatewayService double."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.service import OperationProgress
from sparkgate.api.session import EndpointVersion
from sparkgate.api.status import OperationStatus
from sparkgate.endpoints.rest import openapi
from sparkgate.endpoints.rest.routes import LATEST, RestApiVersion, routes_for
from tests.doubles import ENGINE_VERSION, OK, Canned, FakeGatewayService, InProcessClient

DATA = Path(__file__).resolve().parents[1] / "data" / "flink"
VERSIONS = [v.name for v in RestApiVersion]


def snapshot_routes(version: str) -> set[tuple[str, str]]:
    path = DATA / f"sql_gateway_rest_api_{version.lower()}.snapshot"
    calls = json.loads(path.read_text(encoding="utf-8"))["calls"]
    return {(call["method"], call["url"]) for call in calls}


ALL_SNAPSHOT_ROUTES = sorted(set().union(*(snapshot_routes(v) for v in VERSIONS)))


def concrete(url: str) -> str:
    """A Flink route template with well-formed but unknown handles."""
    return (
        url.replace(":session_handle", str(uuid.uuid4()))
        .replace(":operation_handle", str(uuid.uuid4()))
        .replace(":identifier", "cat.db.mt")
        .replace(":token", "0")
    )


def submit(http: InProcessClient, session: str, statement: str, **body: Any) -> str:
    response = http.post(
        f"/v4/sessions/{session}/statements", json={"statement": statement, **body}
    )
    assert response.status_code == 200, response.text
    assert list(response.json()) == ["operationHandle"]
    return str(response.json()["operationHandle"])


@pytest.mark.parametrize("prefix", [*(f"/{v.lower()}" for v in VERSIONS), ""])
def test_routes_exist_exactly_in_their_versions(http: InProcessClient, prefix: str) -> None:
    version = prefix.strip("/").upper() or LATEST.name
    # sparkgate's own routes of a version (the refresh route on V4) exist there too.
    extensions = {(r.method, r.path) for r in routes_for(RestApiVersion[version]) if r.extension}
    listed = snapshot_routes(version) | extensions
    for method, url in ALL_SNAPSHOT_ROUTES:
        response = http.request(method, prefix + concrete(url) + "?rowFormat=JSON", content=b"{}")
        errors = response.json().get("errors", []) if response.content else []
        route_missing = response.status_code == 404 and any(
            e.startswith("Not found:") for e in errors
        )
        assert route_missing == ((method, url) not in listed), (prefix, method, url, errors)


def test_unknown_routes_and_methods(http: InProcessClient) -> None:
    response = http.get("/v4/no/such/route")
    assert response.status_code == 404
    assert response.json() == {"errors": ["Not found: /v4/no/such/route"]}
    assert http.get("/v5/info").status_code == 404
    response = http.put("/v4/sessions")
    assert response.status_code == 405 and "not allowed" in response.json()["errors"][0]


@pytest.mark.parametrize("prefix", ["/v1", "/v2", "/v3", "/v4", ""])
def test_api_versions_and_info(
    http: InProcessClient, service: FakeGatewayService, prefix: str
) -> None:
    service.gateway_info = type(service.gateway_info)(
        "sparkgate", "1.2.3", ENGINE_VERSION, (("extra.key", "x"),)
    )
    assert http.get(prefix + "/api_versions").json() == {"versions": VERSIONS}
    response = http.get(prefix + "/info")
    assert response.headers["content-type"] == "application/json; charset=UTF-8"
    assert list(response.json().items()) == [
        ("productName", "sparkgate"),
        ("version", "1.2.3"),
        ("sparkVersion", ENGINE_VERSION),
        ("extra.key", "x"),
    ]


@pytest.mark.parametrize(
    ("prefix", "version"),
    [("/v1", "V1"), ("/v2", "V2"), ("/v3", "V3"), ("/v4", "V4"), ("", LATEST.name)],
)
def test_session_lifecycle_records_the_url_version(
    http: InProcessClient, service: FakeGatewayService, prefix: str, version: str
) -> None:
    response = http.post(
        prefix + "/sessions", json={"sessionName": "s", "properties": {"my.key": "v1"}}
    )
    assert response.status_code == 200
    assert list(response.json()) == ["sessionHandle"]
    handle = SessionHandle.parse(response.json()["sessionHandle"])
    [opened] = service.called("open_session")
    environment = opened.args[0]
    assert environment.session_name == "s" and dict(environment.config) == {"my.key": "v1"}
    assert environment.endpoint_version == EndpointVersion("rest", version)
    config = http.get(f"{prefix}/sessions/{handle}").json()
    assert config == {"properties": {"my.key": "v1"}}
    assert http.post(f"{prefix}/sessions/{handle}/heartbeat").json() == {}
    assert [c.args for c in service.called("heartbeat")] == [(handle,)]
    assert http.delete(f"{prefix}/sessions/{handle}").json() == {"status": "CLOSED"}
    assert http.get(f"{prefix}/sessions/{handle}").status_code == 404
    assert http.delete(f"{prefix}/sessions/{handle}").status_code == 404


def test_open_session_without_body(http: InProcessClient, service: FakeGatewayService) -> None:
    response = http.post("/v4/sessions")
    assert response.status_code == 200
    [opened] = service.called("open_session")
    assert opened.args[0].session_name is None and dict(opened.args[0].config) == {}


def test_configure_session_passes_statement_and_timeout(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.results["SET 'my.flag' = 'on'"] = OK
    base = f"/v2/sessions/{session}/configure-session"
    for body, timeout in (
        ({}, None),
        ({"executionTimeout": 0}, None),
        ({"executionTimeout": 1500}, 1.5),
    ):
        response = http.post(base, json={"statement": "SET 'my.flag' = 'on'", **body})
        assert response.status_code == 200 and response.json() == {}
        assert service.called("configure_session")[-1].args[1:] == ("SET 'my.flag' = 'on'", timeout)


def test_execute_statement_passes_timeout_and_execution_config(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.results["INSERT INTO t VALUES (1)"] = OK
    config = {"execution.runtime-mode": "streaming", "spark.sql.shuffle.partitions": "3"}
    op = submit(
        http, session, "INSERT INTO t VALUES (1)", executionTimeout=2000, executionConfig=config
    )
    [call] = service.called("execute_statement")
    assert call.args == (SessionHandle.parse(session), "INSERT INTO t VALUES (1)")
    assert call.kwargs == {"timeout": 2.0, "config": config}
    assert OperationHandle.parse(op) in service.open_operations
    # No executionConfig: the service is told "none", not an empty map.
    submit(http, session, "INSERT INTO t VALUES (1)")
    assert service.called("execute_statement")[-1].kwargs == {"timeout": None, "config": None}


def test_complete_statement_from_body_or_query(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.completions = ["SELECT", "SET"]
    base = f"/v4/sessions/{session}/complete-statement"
    response = http.request("GET", base, json={"statement": "SE", "position": 2})
    assert response.status_code == 200 and response.json() == {"candidates": ["SELECT", "SET"]}
    by_query = http.get(base, params={"statement": "SE", "position": 2})
    assert by_query.json() == response.json()
    assert [c.args[1:] for c in service.called("complete_statement")] == [("SE", 2), ("SE", 2)]
    response = http.request("GET", base, json={"statement": "SE", "position": 3})
    assert response.status_code == 400 and "'position'" in response.json()["errors"][0]


def test_operation_status_cancel_close(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    service.results["SELECT slow"] = Canned.query(Canned().schema, [], not_ready=5)
    op = submit(http, session, "SELECT slow")
    base = f"/v4/sessions/{session}/operations/{op}"
    assert http.get(base + "/status").json() == {"status": "RUNNING"}
    assert http.post(base + "/cancel").json() == {"status": "CANCELED"}
    assert http.get(base + "/status").json() == {"status": "CANCELED"}
    assert http.delete(base + "/close").json() == {"status": "CLOSED"}
    for method, path in (("GET", "/status"), ("POST", "/cancel"), ("DELETE", "/close")):
        response = http.request(method, base + path)
        assert response.status_code == 404, (method, path)
        assert "does not exist" in response.json()["errors"][0]


def test_operation_progress_shape(
    http: InProcessClient, service: FakeGatewayService, session: str
) -> None:
    progress = OperationProgress(2, 1, 4, 3, 40, 30, 2, 1.23456)
    service.results["SELECT 1"] = Canned.query(Canned().schema, [("x",)], progress=progress)
    op = submit(http, session, "SELECT 1")
    body = http.get(f"/v4/sessions/{session}/operations/{op}/progress").json()
    assert body == {
        "status": OperationStatus.FINISHED.value,
        "jobsTotal": 2,
        "jobsDone": 1,
        "stagesTotal": 4,
        "stagesDone": 3,
        "tasksTotal": 40,
        "tasksDone": 30,
        "tasksRunning": 2,
        "elapsed": 1.235,
    }


@pytest.mark.parametrize("path", ["/v4/sessions/{s}/scripts", "/sessions/{s}/scripts"])
def test_deploy_script_answers_the_application_id(
    http: InProcessClient, service: FakeGatewayService, session: str, path: str
) -> None:
    body = {"script": "SELECT 1;", "executionConfig": {"pipeline.name": "nightly"}}
    response = http.request("POST", path.format(s=session), json=body)
    assert response.status_code == 200, response.text
    assert response.json() == {"clusterID": "app-double-0001"}
    [call] = [c for c in service.calls if c.name == "deploy_script"]
    assert call.args[1:] == ("SELECT 1;", None, {"pipeline.name": "nightly"})
    missing = http.request("POST", path.format(s=session), json={})
    assert missing.status_code == 400 and "script" in missing.text


@pytest.mark.parametrize("prefix", ["/v3", "/v4", ""])
def test_refresh_materialized_table_reaches_the_service(
    http: InProcessClient, service: FakeGatewayService, session: str, prefix: str
) -> None:
    url = f"{prefix}/sessions/{session}/materialized-tables/cat.db.mt/refresh"
    service.results["REFRESH MATERIALIZED TABLE cat.db.mt"] = OK
    body = {
        "isPeriodic": True,
        "scheduleTime": "2024-01-02 00:00:00",
        "dynamicOptions": {"d": "1"},
        "staticPartitions": {"ds": "2024-01-01"},
        "executionConfig": {"spark.x": "y"},
    }
    response = http.post(url, json=body)
    assert response.status_code == 200, response.text
    assert list(response.json()) == ["operationHandle"]
    call = service.called("refresh_materialized_table")[-1]
    assert call.args[1] == "cat.db.mt"
    assert call.kwargs == {
        "is_periodic": True,
        "schedule_time": "2024-01-02 00:00:00",
        "dynamic_options": {"d": "1"},
        "static_partitions": {"ds": "2024-01-01"},
        "execution_config": {"spark.x": "y"},
    }
    # Flink's bean also carries the flag as "periodic"; one of the two is required.
    assert http.post(url, json={"periodic": False}).status_code == 200
    assert service.called("refresh_materialized_table")[-1].kwargs["is_periodic"] is False
    missing = http.post(url, json={})
    assert missing.status_code == 400
    assert missing.json()["errors"] == ["Field 'isPeriodic' is required."]
    wrong = http.post(url, json={"isPeriodic": "yes"})
    assert wrong.status_code == 400 and "boolean" in wrong.json()["errors"][0]


def test_refresh_route_is_flinks_v3_and_ours_on_v4(http: InProcessClient, session: str) -> None:
    url = f"/v2/sessions/{session}/materialized-tables/cat.db.mt/refresh"
    assert http.post(url, json={"isPeriodic": False}).status_code == 404


def test_embedded_scheduler_routes(http: InProcessClient, service: FakeGatewayService) -> None:
    from tests.workflow_recorder import OPERATIONS, RecordingScheduler

    create = {
        "materializedTableIdentifier": "`c`.`d`.`t`",
        "cronExpression": "0/5 * * * * ? *",
        "initConfig": {"a": "b"},
        "executionConfig": {},
        "restEndpointUrl": "http://127.0.0.1:8083",
    }
    refused = http.post("/v3/workflow/embedded-scheduler/create", json=create)
    assert refused.status_code == 404
    assert "embedded workflow scheduler" in refused.json()["errors"][0]
    scheduler = RecordingScheduler({})
    service.workflow_scheduler = scheduler  # type: ignore[assignment]
    OPERATIONS.clear()
    response = http.post("/v3/workflow/embedded-scheduler/create", json=create)
    assert response.status_code == 200, response.text
    assert response.json() == {"id": "wf-0"}  # the scheduler's own handler serialization
    created = OPERATIONS[-1][1]
    assert (created.materialized_table, created.cron_expression) == (
        "`c`.`d`.`t`",
        create["cronExpression"],
    )
    assert dict(created.init_config) == {"a": "b"}
    assert created.rest_endpoint_url == "http://127.0.0.1:8083"


def test_embedded_scheduler_routes_name_flinks_workflows(
    http: InProcessClient, service: FakeGatewayService
) -> None:
    from sparkgate.workflow.embedded.scheduler import EmbeddedRefreshHandlerSerializer

    calls: list[tuple[str, Any]] = []

    class Embedded:
        def refresh_handler_serializer(self) -> EmbeddedRefreshHandlerSerializer:
            return EmbeddedRefreshHandlerSerializer()

        def modify_refresh_workflow(self, workflow: Any) -> None:
            calls.append((type(workflow).__name__, workflow))

        def delete_refresh_workflow(self, workflow: Any) -> None:
            calls.append(("delete", workflow))

    service.workflow_scheduler = Embedded()  # type: ignore[assignment]
    names = {"workflowName": "quartz_job_`c`.`d`.`t`", "workflowGroup": "default_group"}
    assert http.post("/v3/workflow/embedded-scheduler/suspend", json=names).json() == {}
    resume = {**names, "dynamicOptions": {"k": "v"}}
    assert http.post("/v3/workflow/embedded-scheduler/resume", json=resume).json() == {}
    response = http.request("DELETE", "/v3/workflow/embedded-scheduler/delete", json=names)
    assert response.status_code == 200 and response.json() == {}
    assert [c[0] for c in calls] == [
        "SuspendRefreshWorkflow",
        "ResumeRefreshWorkflow",
        "delete",
    ]
    assert all(c[1].refresh_handler.workflow_name == names["workflowName"] for c in calls)
    assert dict(calls[1][1].dynamic_options) == {"k": "v"}
    bad = http.post("/v3/workflow/embedded-scheduler/suspend", json={"workflowName": "x"})
    assert bad.status_code == 400 and "workflowGroup" in bad.json()["errors"][0]


def test_openapi_is_served(http: InProcessClient) -> None:
    assert http.get("/openapi.json").json() == openapi.build_openapi()
