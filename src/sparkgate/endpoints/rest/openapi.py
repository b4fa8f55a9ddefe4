"""The OpenAPI document of the REST API, generated from the route table.

Unlike Flink's published yml files it describes the result body as it is on
the wire. The app serves it at :data:`OPENAPI_PATH`; ``docs/rest-openapi.json``
is the committed copy, and a test fails when it drifts from the routes. Run
``python -m sparkgate.endpoints.rest.openapi`` from the repository root to
regenerate it, or with ``--check`` to verify it.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sparkgate.codec.arrow_wire import ARROW_MEDIA_TYPE
from sparkgate.endpoints.rest.routes import LATEST, ROUTES, RestApiVersion, RouteSpec

__all__ = ["DOCS_PATH", "OPENAPI_PATH", "build_openapi", "main", "render_openapi"]

logger = logging.getLogger(__name__)

OPENAPI_PATH = "/openapi.json"
DOCS_PATH = Path("docs") / "rest-openapi.json"

_ERROR_BODY = {
    "type": "object",
    "required": ["errors"],
    "properties": {"errors": {"type": "array", "items": {"type": "string"}}},
}

_DESCRIPTION = (
    "Flink SQL Gateway REST API (versions V1-V4) served by sparkgate. Each path is "
    "served under the prefix of every version in its x-versions (/v1 ... /v4), and "
    f"without a prefix when x-versions has {LATEST.name}, the newest version. "
    'Errors answer {"errors": [...]}. rowFormat=ARROW is sparkgate\'s extension: the '
    "page as an Arrow IPC stream with the result facts in X-Sparkgate-* headers."
)


def _operation(route: RouteSpec) -> dict[str, Any]:
    versions = sorted(route.versions, key=lambda v: v.value)
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in route.path_params
    ]
    for param in route.query:
        schema: dict[str, Any] = {"type": "string"}
        if param.values:
            schema["enum"] = list(param.values)
        parameters.append(
            {
                "name": param.name,
                "in": "query",
                "required": param.required,
                "description": f"Since {param.since.name}; ignored before.",
                "schema": schema,
            }
        )
    success: dict[str, Any] = {
        "description": "OK",
        "content": {"application/json": {"schema": dict(route.response)}},
    }
    if route.name == "fetchResults":
        success["content"][ARROW_MEDIA_TYPE] = {"schema": {"type": "string", "format": "binary"}}
    operation: dict[str, Any] = {
        "operationId": route.name,
        "summary": route.summary,
        "x-versions": [v.name for v in versions],
        "parameters": parameters,
        "responses": {
            "200": success,
            "default": {
                "description": "Error",
                "content": {"application/json": {"schema": _ERROR_BODY}},
            },
        },
    }
    if not route.implemented:
        operation["x-sparkgate-status"] = "501 Not Implemented"
    if route.request is not None:
        operation["requestBody"] = {
            "required": False,
            "content": {"application/json": {"schema": dict(route.request)}},
        }
    return operation


def build_openapi() -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        methods = paths.setdefault(route.template, {})
        known = methods.get(route.method.lower())
        if known is not None:  # one route in Flink's versions and ours (refresh on V4)
            names = sorted({*known["x-versions"], *(v.name for v in route.versions)})
            known["x-versions"] = names
            continue
        methods[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "sparkgate SQL Gateway REST API",
            "version": LATEST.name.lower(),
            "description": _DESCRIPTION,
        },
        "x-api-versions": [v.name for v in RestApiVersion],
        "paths": dict(sorted(paths.items())),
    }


def render_openapi() -> str:
    return json.dumps(build_openapi(), indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sparkgate.endpoints.rest.openapi",
        description=f"Write {DOCS_PATH} (relative to the current directory).",
    )
    parser.add_argument(
        "--check", action="store_true", help="do not write; exit 1 if the file differs"
    )
    args = parser.parse_args(argv)
    expected = render_openapi()
    path = Path.cwd() / DOCS_PATH
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != expected:
            logger.error("%s is out of date; regenerate it with: %s", DOCS_PATH, parser.prog)
            return 1
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(expected, encoding="utf-8")
    logger.info("Wrote %s", DOCS_PATH)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    raise SystemExit(main())
