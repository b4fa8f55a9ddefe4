"""Calls on a session another gateway of the service serves, forwarded to it.

Gateways sharing a state database are one service behind one address: a load
balancer may send any call to any of them. A call on a session this gateway
does not serve goes, as it came (method, path, query, body, credentials), to
the gateway that does, and its answer comes back as it was. A forwarded call
is marked, so it is never forwarded again; the gateway it reaches answers it
itself (a 404 if the session has moved on meanwhile).
"""

from __future__ import annotations

import logging

import httpx
from starlette.requests import Request
from starlette.responses import Response

from sparkgate.api.errors import EngineUnavailableError

__all__ = ["FORWARDED_HEADER", "forward"]

log = logging.getLogger(__name__)

#: Set on a forwarded call (its value: the forwarding gateway's URL is not needed).
FORWARDED_HEADER = "x-sparkgate-forwarded"
# Hop-by-hop headers (RFC 9110 7.6.1) and those httpx sets itself.
_NOT_FORWARDED = frozenset(
    {
        "connection",
        "content-encoding",
        "content-length",
        "host",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)


def forwarded(request: Request) -> bool:
    """Whether ``request`` was forwarded here by another gateway."""
    return FORWARDED_HEADER in request.headers


async def forward(request: Request, base_url: str, body: bytes, timeout_s: float) -> Response:
    """Send ``request`` (its ``body`` already read) to the gateway at ``base_url``.

    Raises:
        EngineUnavailableError: that gateway does not answer (503 and Retry-After:
            once its lease ends, another gateway takes its sessions over).
    """
    headers = {k: v for k, v in request.headers.items() if k.lower() not in _NOT_FORWARDED}
    headers[FORWARDED_HEADER] = "1"
    url = base_url + request.url.path
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            answer = await client.request(
                request.method, url, params=request.query_params, content=body, headers=headers
            )
    except httpx.TransportError as exc:
        log.info("Gateway %s does not answer a call for %s: %s", base_url, request.url.path, exc)
        raise EngineUnavailableError(
            f"The gateway serving this session ({base_url}) does not answer "
            f"({type(exc).__name__}); retry: another gateway takes it over when that "
            "gateway's lease ends (sql-gateway.state.lease)."
        ) from None
    kept = {k: v for k, v in answer.headers.items() if k.lower() not in _NOT_FORWARDED}
    return Response(answer.content, answer.status_code, headers=kept)
