"""Helpers shared by the SQL client tests."""

from __future__ import annotations

import io
from collections.abc import Callable

from sparkgate.client.client import SqlClient
from sparkgate.client.executor import Executor
from sparkgate.client.terminal import Terminal

__all__ = ["ExecutorFactory", "text_client"]

ExecutorFactory = Callable[..., Executor]


def text_client(executor: Executor) -> tuple[SqlClient, io.StringIO]:
    """A started client writing plain text (no TTY, no colours) into a buffer."""
    out = io.StringIO()
    client = SqlClient(executor, Terminal(out, interactive=False))
    client.start()
    return client, out
