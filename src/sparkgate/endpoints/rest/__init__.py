"""Flink SQL Gateway REST endpoint (API versions V1-V4) over the GatewayService.

``factory.RestEndpointFactory`` is registered under the entry-point group
``sparkgate.endpoints`` as ``rest``; ``app.create_app`` builds the ASGI app
for in-process use. Nothing is imported here, so that running a submodule
(``python -m sparkgate.endpoints.rest.openapi``) stays clean.
"""

from __future__ import annotations

__all__: list[str] = []
