"""Running the SQL client end to end on an executor: init file, script or prompt.

The command line builds the executor (embedded or REST) and calls
:func:`run_client`; everything after that is the same in both modes.
"""

from __future__ import annotations

import logging
from pathlib import Path

from sparkgate.api.errors import GatewayError
from sparkgate.client.client import SqlClient, TableViewFactory
from sparkgate.client.executor import Executor
from sparkgate.client.terminal import Terminal

__all__ = ["run_client"]

log = logging.getLogger(__name__)


def _read(path: Path, terminal: Terminal, what: str) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        terminal.error(f"Could not read the {what} file {path}: {exc}")
        return None


def run_client(
    executor: Executor,
    *,
    terminal: Terminal | None = None,
    init_file: Path | None = None,
    script_file: Path | None = None,
    history_file: Path | None = None,
) -> int:
    """The client's exit status: 0, or 1 when the init file or the script failed."""
    terminal = terminal or Terminal()
    client = SqlClient(executor, terminal, table_view=_table_view_factory(terminal))
    try:
        client.start()
    except GatewayError as exc:
        terminal.clear_status()
        terminal.error("Could not open a session.", str(exc))
        executor.close()
        return 1
    try:
        if init_file is not None:
            init = _read(init_file, terminal, "initialization")
            if init is None or not client.run_init(init, f"the initialization file {init_file}"):
                return 1
        if script_file is not None:
            script = _read(script_file, terminal, "SQL script")
            if script is None:
                return 1
            return 0 if client.run_script(script) else 1
        return _interactive(client, history_file)
    finally:
        client.close()


def _table_view_factory(terminal: Terminal) -> TableViewFactory | None:
    if not terminal.interactive:
        return None
    from sparkgate.client.table_view import run_table_view

    return run_table_view


def _interactive(client: SqlClient, history_file: Path | None) -> int:
    from sparkgate.client.repl import Repl

    terminal = client.terminal
    terminal.clear_status()
    terminal.line(f"sparkgate SQL client · {client.executor.description}")
    terminal.line("Type HELP; for help, QUIT; or Ctrl-D to exit. Statements end with ';'.")
    terminal.line()
    Repl(client, history_file=history_file).run()
    terminal.line("Shutting down the session...")
    terminal.line("done.")
    terminal.flush()
    return 0
