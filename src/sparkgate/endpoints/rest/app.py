"""The Starlette application: the route table mounted under each version prefix.

Every route is mounted at ``/vN/...`` for each version whose snapshot lists
it, and unversioned for the newest version, so a route missing from a
version answers 404 there, as in Flink. Blocking service calls run on worker
threads under one capacity limiter, sized for many concurrent long polls.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sparkgate.api.auth import CredentialKind, Principal
from sparkgate.api.service import GatewayService
from sparkgate.endpoints.rest.ahead import PagesAhead
from sparkgate.endpoints.rest.credentials import request_credentials
from sparkgate.endpoints.rest.errors import error_body, error_response
from sparkgate.endpoints.rest.forwarding import forward, forwarded
from sparkgate.endpoints.rest.handlers import HANDLERS, Call, Handler, not_implemented
from sparkgate.endpoints.rest.headers import SecurityHeaders
from sparkgate.endpoints.rest.messages import (
    check_content_type,
    parse_json_object,
    parse_session_handle,
    read_body,
)
from sparkgate.endpoints.rest.openapi import OPENAPI_PATH, build_openapi
from sparkgate.endpoints.rest.options import RestSettings
from sparkgate.endpoints.rest.responses import json_response
from sparkgate.endpoints.rest.routes import LATEST, ROUTES, RestApiVersion, RouteSpec

__all__ = ["MAX_THREADS", "ThreadRunner", "create_app"]

log = logging.getLogger(__name__)

MAX_THREADS = 512
"""Worker threads for blocking calls; each long-poll fetch holds one for up to fetch-timeout."""


class ThreadRunner:
    """Runs blocking calls on worker threads, at most ``max_threads`` at a time.

    anyio's default limiter allows 40 threads: 40 waiting long polls would
    stall every other request. A limiter belongs to one event loop, so one is
    kept per loop (the server has one; test clients may start several).
    """

    def __init__(self, max_threads: int = MAX_THREADS) -> None:
        self.max_threads = max_threads
        self._limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    async def __call__(self, fn: Callable[[], Any]) -> Any:
        loop = asyncio.get_running_loop()
        limiter = self._limiters.get(loop)
        if limiter is None:
            limiter = self._limiters[loop] = anyio.CapacityLimiter(self.max_threads)
        return await anyio.to_thread.run_sync(fn, limiter=limiter)


#: Probes for orchestrators (Kubernetes livenessProbe / readinessProbe), outside
#: Flink's versioned API.
LIVENESS_PATH = "/health/live"
READINESS_PATH = "/health/ready"
#: Prometheus scrapes here (outside Flink's API; no credentials, like the probes).
METRICS_PATH = "/metrics"
_METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _endpoint(
    route: RouteSpec,
    version: RestApiVersion,
    handler: Handler,
    service: GatewayService,
    settings: RestSettings,
    runner: ThreadRunner,
    pages: PagesAhead,
) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        try:
            check_content_type(request)
            owner = await _owner(request, service, runner)
            if owner is not None:
                raw = await read_body(request, settings.max_body_size)
                return await forward(request, owner, raw, settings.fetch_timeout + 60.0)
            principal = await _principal(request, service, runner)
            raw = await read_body(request, settings.max_body_size)
            call = Call(
                request=request,
                route=route,
                version=version,
                body=parse_json_object(raw),
                service=service,
                settings=settings,
                run=runner,
                principal=principal,
                pages=pages,
            )
            return await handler(call)
        except Exception as exc:  # every failure answers; the server keeps serving
            return error_response(exc, route.name)

    endpoint.__name__ = f"{route.name}_{version.name}"
    return endpoint


async def _owner(request: Request, service: GatewayService, runner: ThreadRunner) -> str | None:
    """The URL of the gateway of this service that serves the call's session, when it
    is not this one (never for a call forwarded here already)."""
    text = request.path_params.get("session_handle")
    if text is None or forwarded(request) or not service.has_peers():
        return None  # a gateway alone serves every session itself: no thread hop
    try:
        handle = parse_session_handle(str(text))
    except Exception:
        return None  # the route answers a malformed handle itself
    owner: str | None = await runner(lambda: service.session_owner(handle))
    return owner


async def _principal(
    request: Request, service: GatewayService, runner: ThreadRunner
) -> Principal | None:
    """Who calls (401 when authentication is on and they prove nothing); a call on a
    session must come from its owner or an admin (403)."""
    credentials = request_credentials(request)
    if credentials.kind is CredentialKind.PASSWORD:
        # A password check may be slow on purpose (a hash) or ask a directory.
        principal: Principal | None = await runner(lambda: service.authenticate(credentials))
    else:
        principal = service.authenticate(credentials)
    handle = request.path_params.get("session_handle")
    if handle is not None and principal is not None:
        service.authorize_session(parse_session_handle(str(handle)), principal)
    return principal


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        message = f"Not found: {request.url.path}"
    elif exc.status_code == 405:
        message = f"Method {request.method} is not allowed for {request.url.path}."
    else:
        message = str(exc.detail)
    return json_response(error_body(message), exc.status_code, headers=exc.headers)


async def _unexpected(request: Request, exc: Exception) -> Response:
    return error_response(exc, "handleRequest")


def create_app(
    service: GatewayService,
    settings: RestSettings | None = None,
    runner: ThreadRunner | None = None,
) -> Starlette:
    """The ASGI app over ``service``; also usable in-process (tests, embedding)."""
    settings = settings or RestSettings()
    runner = runner or ThreadRunner()
    openapi = build_openapi()
    pages = PagesAhead()
    routes: list[Route] = []
    for route in ROUTES:
        handler = HANDLERS[route.name] if route.implemented else not_implemented(route)
        for version in sorted(route.versions, key=lambda v: v.value):
            endpoint = _endpoint(route, version, handler, service, settings, runner, pages)
            routes.append(
                Route(version.url_prefix + route.template, endpoint, methods=[route.method])
            )
        if LATEST in route.versions:
            endpoint = _endpoint(route, LATEST, handler, service, settings, runner, pages)
            routes.append(Route(route.template, endpoint, methods=[route.method]))

    async def serve_openapi(request: Request) -> Response:
        return json_response(openapi)

    routes.append(Route(OPENAPI_PATH, serve_openapi, methods=["GET"]))

    async def live(request: Request) -> Response:
        # The process serves HTTP: an orchestrator need not restart it, whatever the
        # engine's state (the gateway heals a dead engine itself).
        return json_response({"status": "UP"})

    async def ready(request: Request) -> Response:
        health = await anyio.to_thread.run_sync(service.health)
        body: dict[str, Any] = {
            "status": "UP" if health.ready else "DOWN",
            "engine": health.state.value,
            "restarts": health.restarts,
        }
        if health.cause is not None:
            body["cause"] = health.cause
        if health.draining:
            body["draining"] = True
        if health.ready:
            return json_response(body)
        return json_response(body, 503, headers={"Retry-After": "5"})

    async def metrics(request: Request) -> Response:
        body = await runner(service.render_metrics)
        return Response(body, media_type=_METRICS_TYPE)

    routes.append(Route(METRICS_PATH, metrics, methods=["GET"]))
    routes.append(Route(LIVENESS_PATH, live, methods=["GET"]))
    routes.append(Route(READINESS_PATH, ready, methods=["GET"]))
    middleware = [Middleware(SecurityHeaders)]
    if settings.cors_allowed_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(settings.cors_allowed_origins),
                allow_methods=["GET", "POST", "PUT", "DELETE"],
                allow_headers=["Content-Type", "Authorization"],
            )
        )
    return Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={HTTPException: _http_error, Exception: _unexpected},
    )
