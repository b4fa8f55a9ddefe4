"""Files a client hands the gateway for one session (FLIP-292: a compiled plan of
the SQL client's machine), kept under the data dir until the session ends."""

from __future__ import annotations

import shutil
from pathlib import Path

from sparkgate.api.errors import ExecutionError
from sparkgate.api.session import is_resource_name

__all__ = ["SessionResources"]


class SessionResources:
    """One session's resource directory: ``<data-dir>/sessions/<handle>/resources``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, name: str) -> Path:
        if not is_resource_name(name):
            raise ExecutionError(
                f"Invalid resource name '{name}': a file name of letters, digits, '.', '_' and '-'"
            )
        return self.root / name

    def put(self, name: str, content: str) -> str:
        """Keep ``content`` as ``name``; its URI on the gateway."""
        path = self._path(name)
        self.root.mkdir(parents=True, exist_ok=True)
        aside = path.with_name(f".{name}.tmp")
        aside.write_text(content, encoding="utf-8")
        aside.replace(path)
        return path.as_uri()

    def get(self, name: str) -> str:
        path = self._path(name)
        if not path.is_file():
            raise ExecutionError(f"The session has no resource '{name}'")
        return path.read_text(encoding="utf-8")

    def uri(self, name: str) -> str:
        return self._path(name).as_uri()

    def remove(self) -> None:
        """The session ended: its resources go (the session's directory with them)."""
        shutil.rmtree(self.root.parent, ignore_errors=True)
