"""The REST API as data: versions, and every route with its wire schemas.

The table mirrors Flink's ``sql_gateway_rest_api_v{1..4}.snapshot`` files: a
route exists in exactly the versions whose snapshot lists it, so a route
missing from a version is a 404 there. The app, the OpenAPI document and the
tests are all built from :data:`ROUTES`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LATEST",
    "ROUTES",
    "QueryParam",
    "RestApiVersion",
    "RouteSpec",
    "routes_for",
]


class RestApiVersion(enum.Enum):
    """Flink's ``SqlGatewayRestAPIVersion``; the URL prefix is ``/v1`` .. ``/v4``."""

    V1 = 1
    V2 = 2
    V3 = 3
    V4 = 4

    @property
    def url_prefix(self) -> str:
        return f"/v{self.value}"


LATEST = max(RestApiVersion, key=lambda v: v.value)
"""Unversioned URLs speak this version, as in Flink."""

_ALL = frozenset(RestApiVersion)
_SINCE_V2 = frozenset(v for v in RestApiVersion if v.value >= 2)
_V3 = frozenset({RestApiVersion.V3})
_V4 = frozenset({RestApiVersion.V4})


@dataclass(frozen=True)
class QueryParam:
    name: str
    required: bool
    values: tuple[str, ...] = ()
    since: RestApiVersion = RestApiVersion.V1


@dataclass(frozen=True)
class RouteSpec:
    """One route: ``name`` is also Flink's action word in "Failed to <name>." errors."""

    name: str
    method: str
    path: str
    """Flink's form, with ``:param`` path parameters."""
    versions: frozenset[RestApiVersion]
    summary: str
    request: Mapping[str, Any] | None = None
    """JSON schema of the body; None for Flink's EmptyRequestBody."""
    response: Mapping[str, Any] = field(default_factory=dict)
    query: tuple[QueryParam, ...] = ()
    implemented: bool = True
    """False: the route exists in the protocol but sparkgate answers 501."""
    extension: bool = False
    """True: sparkgate's own route, not in Flink's API (never in the snapshots)."""

    @property
    def path_params(self) -> tuple[str, ...]:
        return tuple(re.findall(r":(\w+)", self.path))

    @property
    def template(self) -> str:
        """The path with ``{param}`` placeholders (Starlette, OpenAPI)."""
        return re.sub(r":(\w+)", r"{\1}", self.path)


def routes_for(version: RestApiVersion) -> tuple[RouteSpec, ...]:
    return tuple(r for r in ROUTES if version in r.versions)


# -- schema snippets ----------------------------------------------------------

_STRING: Mapping[str, Any] = {"type": "string"}
_INTEGER: Mapping[str, Any] = {"type": "integer"}
_BOOLEAN: Mapping[str, Any] = {"type": "boolean"}
_STRING_MAP: Mapping[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}}
_EMPTY: Mapping[str, Any] = {"type": "object"}


def _object(required: tuple[str, ...] = (), **properties: Mapping[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    return schema


_STATUS = _object(("status",), status=_STRING)
_COLUMN = _object(
    ("name", "logicalType", "comment"),
    name=_STRING,
    logicalType={"type": "object", "description": "Flink's logical-type JSON."},
    comment={"type": ["string", "null"]},
)
_RESULT_BODY: Mapping[str, Any] = {
    "type": "object",
    "description": (
        "NOT_READY bodies hold only resultType and nextResultUri. PAYLOAD and EOS bodies "
        "hold every field in this order; jobID only when the result has one, nextResultUri "
        "not at EOS. rowFormat=ARROW (sparkgate) answers an Arrow IPC stream instead."
    ),
    "required": ["resultType"],
    "properties": {
        "resultType": {"type": "string", "enum": ["NOT_READY", "PAYLOAD", "EOS"]},
        "isQueryResult": _BOOLEAN,
        "jobID": _STRING,
        "resultKind": {"type": "string", "enum": ["SUCCESS", "SUCCESS_WITH_CONTENT"]},
        "results": _object(
            ("columns", "rowFormat", "data"),
            columns={"type": "array", "items": _COLUMN},
            rowFormat={"type": "string", "enum": ["JSON", "PLAIN_TEXT"]},
            data={
                "type": "array",
                "items": _object(
                    ("kind", "fields"),
                    kind={
                        "type": "string",
                        "enum": ["INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"],
                    },
                    fields={"type": "array", "items": {}},
                ),
            },
        ),
        "nextResultUri": _STRING,
    },
}

_S = "/sessions/:session_handle"
_OP = _S + "/operations/:operation_handle"

ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec(
        "getApiVersions",
        "GET",
        "/api_versions",
        _ALL,
        "The REST API versions the gateway speaks.",
        response=_object(("versions",), versions={"type": "array", "items": _STRING}),
    ),
    RouteSpec(
        "getInfo",
        "GET",
        "/info",
        _ALL,
        "Product name and version; sparkgate adds sparkVersion.",
        response=_object(
            ("productName", "version"),
            productName=_STRING,
            version=_STRING,
            sparkVersion=_STRING,
        ),
    ),
    RouteSpec(
        "openSession",
        "POST",
        "/sessions",
        _ALL,
        "Open a session with optional name and properties.",
        request=_object(sessionName=_STRING, properties=_STRING_MAP),
        response=_object(("sessionHandle",), sessionHandle=_STRING),
    ),
    RouteSpec(
        "closeSession",
        "DELETE",
        _S,
        _ALL,
        "Close a session and every operation in it.",
        response=_STATUS,
    ),
    RouteSpec(
        "getSessionConfig",
        "GET",
        _S,
        _ALL,
        "The session's effective configuration.",
        response=_object(("properties",), properties=_STRING_MAP),
    ),
    RouteSpec(
        "completeStatement",
        "GET",
        _S + "/complete-statement",
        _SINCE_V2,
        "Completion candidates at a position of a statement (body on a GET, as in Flink).",
        request=_object(("statement", "position"), statement=_STRING, position=_INTEGER),
        response=_object(("candidates",), candidates={"type": "array", "items": _STRING}),
    ),
    RouteSpec(
        "configureSession",
        "POST",
        _S + "/configure-session",
        _SINCE_V2,
        "Run one SET/RESET/CREATE/DROP/ALTER/USE/ADD JAR/... statement; waits for it.",
        request=_object(("statement",), statement=_STRING, executionTimeout=_INTEGER),
        response=_EMPTY,
    ),
    RouteSpec(
        "putSessionResource",
        "PUT",
        _S + "/resources/:resource_name",
        _ALL,
        "sparkgate extension: keep a client's file (a compiled plan of the SQL client's "
        "machine, FLIP-292) for the session until it ends; its URI names it in statements.",
        request=_object(("content",), content=_STRING),
        response=_object(("uri",), uri=_STRING),
        extension=True,
    ),
    RouteSpec(
        "getSessionResource",
        "GET",
        _S + "/resources/:resource_name",
        _ALL,
        "sparkgate extension: a file kept for the session (a plan COMPILE PLAN wrote there).",
        response=_object(("content",), content=_STRING),
        extension=True,
    ),
    RouteSpec(
        "triggerSessionHeartbeat",
        "POST",
        _S + "/heartbeat",
        _ALL,
        "Keep an idle session alive.",
        response=_EMPTY,
    ),
    RouteSpec(
        "refreshMaterializedTable",
        "POST",
        _S + "/materialized-tables/:identifier/refresh",
        _V3,
        "Refresh a materialized table once: a batch job of INSERT OVERWRITE; the "
        "operation's result is the job's id and cluster information.",
        request=_object(
            isPeriodic=_BOOLEAN,
            scheduleTime=_STRING,
            dynamicOptions=_STRING_MAP,
            staticPartitions=_STRING_MAP,
            executionConfig=_STRING_MAP,
            periodic=_BOOLEAN,
        ),
        response=_object(("operationHandle",), operationHandle=_STRING),
    ),
    RouteSpec(
        "refreshMaterializedTable",
        "POST",
        _S + "/materialized-tables/:identifier/refresh",
        _V4,
        "Refresh a materialized table once (served on V4 too, beyond Flink's V4 API): a "
        "batch job of INSERT OVERWRITE; the operation's result is the job's id and cluster "
        "information.",
        request=_object(
            isPeriodic=_BOOLEAN,
            scheduleTime=_STRING,
            dynamicOptions=_STRING_MAP,
            staticPartitions=_STRING_MAP,
            executionConfig=_STRING_MAP,
            periodic=_BOOLEAN,
        ),
        response=_object(("operationHandle",), operationHandle=_STRING),
        extension=True,
    ),
    RouteSpec(
        "cancelOperation",
        "POST",
        _OP + "/cancel",
        _ALL,
        "Cancel an operation; answers its status afterwards.",
        response=_STATUS,
    ),
    RouteSpec(
        "closeOperation",
        "DELETE",
        _OP + "/close",
        _ALL,
        "Close an operation and drop its results.",
        response=_STATUS,
    ),
    RouteSpec(
        "fetchResults",
        "GET",
        _OP + "/result/:token",
        _ALL,
        "One page of results: token N is the next page, N-1 replays the last one.",
        response=_RESULT_BODY,
        query=(
            QueryParam(
                "rowFormat",
                required=True,
                values=("JSON", "PLAIN_TEXT", "ARROW"),
                since=RestApiVersion.V2,
            ),
        ),
    ),
    RouteSpec(
        "getOperationStatus",
        "GET",
        _OP + "/status",
        _ALL,
        "The operation's status.",
        response=_STATUS,
    ),
    RouteSpec(
        "getOperationProgress",
        "GET",
        _OP + "/progress",
        _ALL,
        "sparkgate extension: the Spark jobs, stages and tasks of an operation so far.",
        response=_object(
            ("status",),
            status=_STRING,
            jobsTotal=_INTEGER,
            jobsDone=_INTEGER,
            stagesTotal=_INTEGER,
            stagesDone=_INTEGER,
            tasksTotal=_INTEGER,
            tasksDone=_INTEGER,
            tasksRunning=_INTEGER,
            elapsed={"type": "number", "description": "seconds since it started"},
        ),
        extension=True,
    ),
    RouteSpec(
        "deployScript",
        "POST",
        _S + "/scripts",
        _V4,
        "Run a SQL script (inline, or from scriptUri) as a Spark application of its own "
        "(application mode); clusterID is its Spark application id. It is a job: SHOW JOBS.",
        request=_object(script=_STRING, scriptUri=_STRING, executionConfig=_STRING_MAP),
        response=_object(("clusterID",), clusterID=_STRING),
    ),
    RouteSpec(
        "executeStatement",
        "POST",
        _S + "/statements",
        _ALL,
        "Submit a statement; executionTimeout is in ms, 0 means none.",
        request=_object(
            ("statement",),
            statement=_STRING,
            executionTimeout=_INTEGER,
            executionConfig=_STRING_MAP,
        ),
        response=_object(("operationHandle",), operationHandle=_STRING),
    ),
    RouteSpec(
        "createEmbeddedSchedulerWorkflow",
        "POST",
        "/workflow/embedded-scheduler/create",
        _V3,
        "The embedded workflow scheduler's workflows (FLIP-448).",
        request=_object(
            materializedTableIdentifier=_STRING,
            cronExpression=_STRING,
            initConfig=_STRING_MAP,
            executionConfig=_STRING_MAP,
            restEndpointUrl=_STRING,
        ),
        response=_object(workflowName=_STRING, workflowGroup=_STRING),
    ),
    RouteSpec(
        "deleteEmbeddedSchedulerWorkflow",
        "DELETE",
        "/workflow/embedded-scheduler/delete",
        _V3,
        "The embedded workflow scheduler's workflows (FLIP-448).",
        request=_object(workflowName=_STRING, workflowGroup=_STRING),
        response=_EMPTY,
    ),
    RouteSpec(
        "resumeEmbeddedSchedulerWorkflow",
        "POST",
        "/workflow/embedded-scheduler/resume",
        _V3,
        "The embedded workflow scheduler's workflows (FLIP-448).",
        request=_object(workflowName=_STRING, workflowGroup=_STRING, dynamicOptions=_STRING_MAP),
        response=_EMPTY,
    ),
    RouteSpec(
        "suspendEmbeddedSchedulerWorkflow",
        "POST",
        "/workflow/embedded-scheduler/suspend",
        _V3,
        "The embedded workflow scheduler's workflows (FLIP-448).",
        request=_object(workflowName=_STRING, workflowGroup=_STRING),
        response=_EMPTY,
    ),
)
