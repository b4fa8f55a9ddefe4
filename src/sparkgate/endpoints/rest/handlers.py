"""The route handlers: parse the request, call the service, build Flink's body.

Handlers are stateless translators. Every service call that may block
(Spark work, long-poll fetches) runs through :meth:`Call.run`, off the event
loop. Errors are raised, never turned into responses here: the app hands
them to :mod:`errors`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response

from sparkgate.api.auth import Principal
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import ResultType
from sparkgate.api.service import GatewayService
from sparkgate.api.session import EndpointVersion, SessionEnvironment, is_resource_name
from sparkgate.api.session_options import configured_time_zones
from sparkgate.api.workflow import (
    CreatePeriodicRefreshWorkflow,
    DeleteRefreshWorkflow,
    ResumeRefreshWorkflow,
    SuspendRefreshWorkflow,
    WorkflowScheduler,
)
from sparkgate.endpoints.rest.ahead import Answer, PagesAhead
from sparkgate.endpoints.rest.errors import RestError
from sparkgate.endpoints.rest.messages import (
    Body,
    parse_operation_handle,
    parse_session_handle,
    parse_token,
)
from sparkgate.endpoints.rest.options import RestSettings
from sparkgate.endpoints.rest.responses import json_response
from sparkgate.endpoints.rest.results import (
    RowFormat,
    needs_time_zone,
    next_result_uri,
    render_page,
)
from sparkgate.endpoints.rest.routes import RestApiVersion, RouteSpec

__all__ = ["ENDPOINT_ID", "HANDLERS", "Call", "Handler", "not_implemented"]

ENDPOINT_ID = "rest"

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """Everything a handler needs for one request."""

    request: Request
    route: RouteSpec
    version: RestApiVersion
    body: Body
    service: GatewayService
    settings: RestSettings
    run: Callable[[Callable[[], Any]], Awaitable[Any]]
    #: Who is calling (None: authentication is off and nobody was named).
    principal: Principal | None = None
    #: Result pages read ahead of the clients (the app's one).
    pages: PagesAhead = field(default_factory=PagesAhead)

    def param(self, name: str) -> str:
        return str(self.request.path_params[name])

    def session(self) -> SessionHandle:
        return parse_session_handle(self.param("session_handle"))

    def operation(self) -> OperationHandle:
        return parse_operation_handle(self.param("operation_handle"))


Handler = Callable[[Call], Awaitable[Response]]


# -- utilities -------------------------------------------------------------------


async def get_api_versions(call: Call) -> Response:
    return json_response({"versions": [v.name for v in RestApiVersion]})


async def get_info(call: Call) -> Response:
    info = await call.run(call.service.get_gateway_info)
    body = {"productName": info.product_name, "version": info.version}
    body["sparkVersion"] = info.engine_version
    body.update(dict(info.extra))
    return json_response(body)


# -- sessions ----------------------------------------------------------------------


async def open_session(call: Call) -> Response:
    environment = SessionEnvironment(
        session_name=call.body.string("sessionName"),
        endpoint_version=EndpointVersion(ENDPOINT_ID, call.version.name),
        config=call.body.string_map("properties"),
        user=call.principal.name if call.principal is not None else None,
        principal=call.principal,
        client_address=call.request.client.host if call.request.client is not None else None,
    )
    handle = await call.run(lambda: call.service.open_session(environment))
    return json_response({"sessionHandle": str(handle)})


async def close_session(call: Call) -> Response:
    session = call.session()
    await call.run(lambda: call.service.close_session(session))
    return json_response({"status": "CLOSED"})


async def get_session_config(call: Call) -> Response:
    session = call.session()
    config = await call.run(lambda: call.service.get_session_config(session))
    return json_response({"properties": config})


async def heartbeat(call: Call) -> Response:
    session = call.session()
    await call.run(lambda: call.service.heartbeat(session))
    return json_response({})


def _resource_name(call: Call) -> str:
    name = call.param("resource_name")
    if not is_resource_name(name):
        raise RestError(
            400, f"Invalid resource name '{name}': a file name of letters, digits, '.', '_', '-'"
        )
    return name


async def put_session_resource(call: Call) -> Response:
    session, name = call.session(), _resource_name(call)
    content = call.body.required_string("content")
    uri = await call.run(lambda: call.service.put_session_resource(session, name, content))
    return json_response({"uri": uri})


async def get_session_resource(call: Call) -> Response:
    session, name = call.session(), _resource_name(call)
    content = await call.run(lambda: call.service.get_session_resource(session, name))
    return json_response({"content": content})


async def configure_session(call: Call) -> Response:
    session = call.session()
    statement = call.body.required_string("statement")
    timeout = call.body.timeout_ms("executionTimeout")
    await call.run(lambda: call.service.configure_session(session, statement, timeout))
    return json_response({})


async def complete_statement(call: Call) -> Response:
    session = call.session()
    body = call.body
    if not body.data:
        # Flink sends these in the body of a GET; tools that cannot may use the query.
        query = call.request.query_params
        data: dict[str, Any] = dict(query)
        if "position" in data and data["position"].lstrip("-").isdigit():
            data["position"] = int(data["position"])
        body = Body(data)
    statement = body.required_string("statement")
    position = body.integer("position", required=True)
    assert position is not None
    if not 0 <= position <= len(statement):
        raise RestError(
            400, f"Field 'position' must be between 0 and {len(statement)}, got {position}."
        )
    candidates = await call.run(
        lambda: call.service.complete_statement(session, statement, position)
    )
    return json_response({"candidates": candidates})


# -- statements and operations -------------------------------------------------------


async def execute_statement(call: Call) -> Response:
    session = call.session()
    statement = call.body.required_string("statement")
    timeout = call.body.timeout_ms("executionTimeout")
    config = call.body.string_map("executionConfig")
    handle = await call.run(
        lambda: call.service.execute_statement(
            session, statement, timeout=timeout, config=config or None
        )
    )
    return json_response({"operationHandle": str(handle)})


async def deploy_script(call: Call) -> Response:
    session = call.session()
    script = call.body.string("script")
    uri = call.body.string("scriptUri")
    config = call.body.string_map("executionConfig")
    app_id = await call.run(
        lambda: call.service.deploy_script(session, script, uri, config or None)
    )
    return json_response({"clusterID": app_id})


async def get_operation_status(call: Call) -> Response:
    session, operation = call.session(), call.operation()
    info = await call.run(lambda: call.service.get_operation_info(session, operation))
    return json_response({"status": info.status.value})


async def get_operation_progress(call: Call) -> Response:
    session, operation = call.session(), call.operation()

    def read() -> dict[str, object]:
        status = call.service.get_operation_info(session, operation).status.value
        p = call.service.get_operation_progress(session, operation)
        return {
            "status": status,
            "jobsTotal": p.jobs_total,
            "jobsDone": p.jobs_done,
            "stagesTotal": p.stages_total,
            "stagesDone": p.stages_done,
            "tasksTotal": p.tasks_total,
            "tasksDone": p.tasks_done,
            "tasksRunning": p.tasks_running,
            "elapsed": round(p.elapsed, 3),
        }

    return json_response(await call.run(read))


async def cancel_operation(call: Call) -> Response:
    session, operation = call.session(), call.operation()

    def cancel() -> str:
        call.service.cancel_operation(session, operation)
        return call.service.get_operation_info(session, operation).status.value

    return json_response({"status": await call.run(cancel)})


async def close_operation(call: Call) -> Response:
    session, operation = call.session(), call.operation()
    call.pages.drop(operation)
    await call.run(lambda: call.service.close_operation(session, operation))
    return json_response({"status": "CLOSED"})


def _row_format(call: Call) -> RowFormat:
    if call.version is RestApiVersion.V1:
        return RowFormat.JSON  # V1 has no rowFormat parameter: always JSON
    raw = call.request.query_params.get("rowFormat")
    choices = ", ".join(f.value for f in RowFormat)
    if raw is None:
        # The snapshots call it mandatory, but Flink's handler falls back to JSON
        # (HandlerRequestUtils.getQueryParameter) and clients rely on it.
        return RowFormat.JSON
    try:
        return RowFormat(raw.upper())
    except ValueError:
        raise RestError(400, f"Invalid rowFormat {raw!r}: expecting one of {choices}.") from None


def _time_zone(config: Mapping[str, str]) -> str | None:
    zones = configured_time_zones(config)
    return zones[0] if zones else None


async def fetch_results(call: Call) -> Response:
    session, operation = call.session(), call.operation()
    token = parse_token(call.param("token"))
    row_format = _row_format(call)
    settings = call.settings

    def fetch(token: int) -> Answer:
        page = call.service.fetch_results(
            session, operation, token, settings.fetch_max_rows, wait=settings.fetch_timeout
        )
        if page.next_token is None:
            next_uri = None
        else:
            next_uri = next_result_uri(
                call.version, session, operation, page.next_token, row_format
            )
        time_zone = None
        if row_format is not RowFormat.ARROW and needs_time_zone(page.schema):
            time_zone = _time_zone(call.service.get_session_config(session))
        # Encoding a large page is CPU work: it stays on this worker thread too.
        response = render_page(page, row_format, next_uri, time_zone)
        read_on = (
            page.next_token if page.result_type is ResultType.PAYLOAD and page.num_rows else None
        )
        return Answer(response, read_on)

    ahead = call.pages.take(operation, token, row_format.value)
    answer: Answer = await (ahead if ahead is not None else call.run(lambda: fetch(token)))
    following = answer.read_on
    if following is not None:
        # The next page is read and encoded while the client reads this one.
        call.pages.start(
            operation, following, row_format.value, lambda: call.run(lambda: fetch(following))
        )
    return answer.response


# -- protocol routes sparkgate does not serve ----------------------------------------

# -- materialized tables (FLIP-448) ------------------------------------------------


async def refresh_materialized_table(call: Call) -> Response:
    session = call.session()
    identifier = call.param("identifier")
    body = call.body
    # Flink's body bean carries the flag twice (isPeriodic, and Jackson's periodic).
    periodic = body.boolean("isPeriodic")
    if periodic is None:
        periodic = body.boolean("periodic")
    if periodic is None:
        raise RestError(400, "Field 'isPeriodic' is required.")
    schedule_time = body.string("scheduleTime") or None
    dynamic = body.string_map("dynamicOptions")
    partitions = body.string_map("staticPartitions")
    config = body.string_map("executionConfig")
    handle = await call.run(
        lambda: call.service.refresh_materialized_table(
            session,
            identifier,
            is_periodic=periodic,
            schedule_time=schedule_time,
            dynamic_options=dynamic,
            static_partitions=partitions,
            execution_config=config,
        )
    )
    return json_response({"operationHandle": str(handle)})


def _embedded(call: Call) -> WorkflowScheduler[Any]:
    scheduler = call.service.embedded_workflow_scheduler()
    if scheduler is None:
        raise RestError(
            404,
            "The embedded workflow scheduler is not this gateway's scheduler "
            "(see workflow-scheduler.type).",
        )
    return scheduler


def _workflow_handler(call: Call, scheduler: WorkflowScheduler[Any]) -> Any:
    """The embedded scheduler's refresh handler the body names."""
    name = call.body.required_string("workflowName")
    group = call.body.required_string("workflowGroup")
    data = json.dumps({"workflowName": name, "workflowGroup": group}).encode()
    return scheduler.refresh_handler_serializer().deserialize(data)


async def create_embedded_workflow(call: Call) -> Response:
    scheduler = _embedded(call)
    body = call.body
    table = body.required_string("materializedTableIdentifier")
    workflow = CreatePeriodicRefreshWorkflow(
        materialized_table=table,
        description=f"Refresh of materialized table {table}",
        cron_expression=body.required_string("cronExpression"),
        init_config=body.string_map("initConfig"),
        execution_config=body.string_map("executionConfig"),
        rest_endpoint_url=body.string("restEndpointUrl"),
    )
    handler = await call.run(lambda: scheduler.create_refresh_workflow(workflow))
    return json_response(json.loads(scheduler.refresh_handler_serializer().serialize(handler)))


async def suspend_embedded_workflow(call: Call) -> Response:
    scheduler = _embedded(call)
    handler = _workflow_handler(call, scheduler)
    await call.run(lambda: scheduler.modify_refresh_workflow(SuspendRefreshWorkflow(handler)))
    return json_response({})


async def resume_embedded_workflow(call: Call) -> Response:
    scheduler = _embedded(call)
    handler = _workflow_handler(call, scheduler)
    resume = ResumeRefreshWorkflow(handler, dynamic_options=call.body.string_map("dynamicOptions"))
    await call.run(lambda: scheduler.modify_refresh_workflow(resume))
    return json_response({})


async def delete_embedded_workflow(call: Call) -> Response:
    scheduler = _embedded(call)
    handler = _workflow_handler(call, scheduler)
    await call.run(lambda: scheduler.delete_refresh_workflow(DeleteRefreshWorkflow(handler)))
    return json_response({})


_NOT_IMPLEMENTED: dict[str, str] = {}
_MISSING = "sparkgate does not implement '{name}' ({method} {path})."


def not_implemented(route: RouteSpec) -> Handler:
    """A handler answering 501: the route is in the protocol, sparkgate lacks the feature."""
    message = _NOT_IMPLEMENTED.get(route.name) or _MISSING.format(
        name=route.name, method=route.method, path=route.path
    )

    async def handler(call: Call) -> Response:
        raise RestError(501, message)

    return handler


HANDLERS: Mapping[str, Handler] = {
    "getApiVersions": get_api_versions,
    "getInfo": get_info,
    "openSession": open_session,
    "closeSession": close_session,
    "getSessionConfig": get_session_config,
    "triggerSessionHeartbeat": heartbeat,
    "configureSession": configure_session,
    "putSessionResource": put_session_resource,
    "getSessionResource": get_session_resource,
    "completeStatement": complete_statement,
    "executeStatement": execute_statement,
    "deployScript": deploy_script,
    "getOperationStatus": get_operation_status,
    "getOperationProgress": get_operation_progress,
    "cancelOperation": cancel_operation,
    "closeOperation": close_operation,
    "fetchResults": fetch_results,
    "refreshMaterializedTable": refresh_materialized_table,
    "createEmbeddedSchedulerWorkflow": create_embedded_workflow,
    "suspendEmbeddedSchedulerWorkflow": suspend_embedded_workflow,
    "resumeEmbeddedSchedulerWorkflow": resume_embedded_workflow,
    "deleteEmbeddedSchedulerWorkflow": delete_embedded_workflow,
}
