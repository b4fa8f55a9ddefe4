"""The catalog store (FLIP-295): where CREATE CATALOG keeps its catalogs.

``file`` (the default) writes one JSON file per catalog, ``<name>.json`` under
``<data-dir>/catalogs`` (or ``table.catalog-store.file.path``), so a restarted
gateway has them again; ``generic_in_memory`` keeps them until the gateway
stops. The file holds the options as typed, secrets too (the gateway needs
them to connect after a restart, as Flink's file store does): the directory is
mode 0700 and each file 0600, readable by the gateway's user only.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Protocol
from urllib.parse import quote, unquote

from sparkgate.service.catalogs.definition import CatalogDefinition

__all__ = ["CatalogStore", "FileCatalogStore", "InMemoryCatalogStore"]

log = logging.getLogger(__name__)


class CatalogStore(Protocol):
    """Keeps catalog definitions; every call is atomic on its own."""

    def load(self) -> list[CatalogDefinition]: ...

    def save(self, definition: CatalogDefinition) -> None: ...

    def remove(self, name: str) -> None: ...


class InMemoryCatalogStore:
    """``table.catalog-store.kind: generic_in_memory``: gone when the gateway stops."""

    def __init__(self) -> None:
        self._definitions: dict[str, CatalogDefinition] = {}
        self._lock = threading.Lock()

    def load(self) -> list[CatalogDefinition]:
        with self._lock:
            return list(self._definitions.values())

    def save(self, definition: CatalogDefinition) -> None:
        with self._lock:
            self._definitions[definition.name] = definition

    def remove(self, name: str) -> None:
        with self._lock:
            self._definitions.pop(name, None)


class FileCatalogStore:
    """``table.catalog-store.kind: file``: one ``<name>.json`` per catalog in ``directory``."""

    SUFFIX = ".json"

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, name: str) -> Path:
        # Any catalog name is a safe file name once quoted ('/' and '.' too).
        return self.directory / (quote(name, safe="").replace(".", "%2E") + self.SUFFIX)

    def load(self) -> list[CatalogDefinition]:
        if not self.directory.is_dir():
            return []
        found: list[CatalogDefinition] = []
        for path in sorted(self.directory.glob(f"*{self.SUFFIX}")):
            try:
                definition = CatalogDefinition.from_json(json.loads(path.read_text("utf-8")))
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                log.error("Catalog store: %s is not a catalog definition, left out: %s", path, exc)
                continue
            if unquote(path.name[: -len(self.SUFFIX)]) != definition.name:
                log.warning("Catalog store: %s holds catalog %r", path, definition.name)
            found.append(definition)
        return found

    def save(self, definition: CatalogDefinition) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        target = self._path(definition.name)
        fd, tmp = tempfile.mkstemp(prefix=".catalog-", suffix=".tmp", dir=self.directory)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(definition.to_json(), out, indent=2, sort_keys=True)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def remove(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(name).unlink()
