"""Where the SQL client keeps its own files: the history and its log.

Embedded mode runs a gateway in the client, so the client's files sit in that
gateway's data directory (``sql-gateway.data-dir``, ``~/.sparkgate`` by
default): ``sql-history`` and ``log/sql-client.log``. In gateway mode the
gateway may be on another machine and its data directory is none of the
client's business, so the files go to the user's own state directory,
``$XDG_STATE_HOME/sparkgate`` (``~/.local/state/sparkgate``), unless
``-Dsql-gateway.data-dir=DIR`` names one; that option is then the client's
and is not sent to the gateway as a session property. ``--history FILE``
overrides the history file in both modes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "DATA_DIR_KEY",
    "HISTORY_FILE",
    "LOG_FILE",
    "default_client_dir",
    "gateway_mode_client_dir",
]

DATA_DIR_KEY = "sql-gateway.data-dir"
HISTORY_FILE = "sql-history"
LOG_FILE = "log/sql-client.log"


def default_client_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/sparkgate``, or ``~/.local/state/sparkgate`` (the XDG default)."""
    env = os.environ if environ is None else environ
    state = env.get("XDG_STATE_HOME", "").strip()
    base = Path(state).expanduser() if state else Path.home() / ".local" / "state"
    return base / "sparkgate"


def gateway_mode_client_dir(
    properties: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> tuple[Path, dict[str, str]]:
    """The gateway-mode client's directory, and the session properties without its key."""
    rest = {k: v for k, v in properties.items() if k != DATA_DIR_KEY}
    explicit = properties.get(DATA_DIR_KEY, "").strip()
    if explicit:
        return Path(explicit).expanduser(), rest
    return default_client_dir(environ), rest
