"""The catalog store (FLIP-295): where CREATE CATALOG keeps its catalogs.

``file`` (the default) writes one JSON file per catalog, ``<name>.json`` under
``<data-dir>/catalogs`` (or ``table.catalog-store.file.path``), so a restarted
gateway has them again; ``generic_in_memory`` keeps them until the gateway
stops. The file holds the options as typed, secrets too (the gateway needs
them to connect after a restart, as Flink's file store does): the directory is
mode 0700 and each file 0600, readable by the gateway's user only.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Protocol

from sparkgate.service.catalogs.definition import CatalogDefinition
from sparkgate.service.state import FileRecords, Records

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
    """``table.catalog-store.kind: file``: one ``<name>.json`` per catalog in a
    private directory, or rows of the state database (``sql-gateway.state.url``),
    shared by the gateways given it."""

    def __init__(self, records: Path | Records) -> None:
        self.records: Records = (
            FileRecords(records, private=True) if isinstance(records, Path) else records
        )

    def load(self) -> list[CatalogDefinition]:
        found: list[CatalogDefinition] = []
        for key, text in self.records.load():
            where = self.records.where(key)
            try:
                definition = CatalogDefinition.from_json(json.loads(text))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                log.error("Catalog store: %s is not a catalog definition, left out: %s", where, exc)
                continue
            if key != definition.name:
                log.warning("Catalog store: %s holds catalog %r", where, definition.name)
            found.append(definition)
        return found

    def save(self, definition: CatalogDefinition) -> None:
        self.records.put(definition.name, definition.to_json())

    def remove(self, name: str) -> None:
        self.records.delete(name)
