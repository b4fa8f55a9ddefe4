"""sparkgate's SQL client: embedded and gateway modes behind one executor interface.

``sparkgate sql`` builds an executor (the in-process gateway service, or a
REST session on a running gateway) and hands it to :func:`run_client`.
"""

from __future__ import annotations

from sparkgate.client.app import run_client
from sparkgate.client.client import SqlClient
from sparkgate.client.embedded import EmbeddedExecutor
from sparkgate.client.executor import ConnectionLostError, Executor, Page
from sparkgate.client.options import CLIENT_OPTIONS, ResultMode
from sparkgate.client.rest import RestExecutor
from sparkgate.client.terminal import Terminal

__all__ = [
    "CLIENT_OPTIONS",
    "ConnectionLostError",
    "EmbeddedExecutor",
    "Executor",
    "Page",
    "RestExecutor",
    "ResultMode",
    "SqlClient",
    "Terminal",
    "run_client",
]
