"""The catalog registry following a store other gateways write too: a catalog this
gateway creates while it reads the store is not taken for one another gateway dropped."""

from __future__ import annotations

import threading

import pytest
from pyspark.sql import SparkSession

from sparkgate.service.catalogs.definition import CatalogDefinition
from sparkgate.service.catalogs.registry import CatalogRegistry
from sparkgate.service.catalogs.store import InMemoryCatalogStore
from sparkgate.service.catalogs.types import load_catalog_types

from .conftest import unique_name

pytestmark = pytest.mark.service


class _SlowStore(InMemoryCatalogStore):
    """A store whose next read is held until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = threading.Event()
        self.go_on = threading.Event()
        self.hold = False

    def load(self) -> list[CatalogDefinition]:
        snapshot = super().load()
        if self.hold:
            self.hold = False
            self.reading.set()
            self.go_on.wait(10)
        return snapshot


def test_a_catalog_created_during_a_sync_stays(spark: SparkSession) -> None:
    store = _SlowStore()
    registry = CatalogRegistry(store, load_catalog_types())
    name = unique_name("cat")
    store.hold = True
    syncing = threading.Thread(target=registry.sync, args=(spark,))
    syncing.start()
    assert store.reading.wait(10)
    creating = threading.Thread(
        target=registry.create,
        args=(spark, CatalogDefinition(name, {"type": "generic_in_memory"}, None)),
    )
    creating.start()
    creating.join(0.5)  # the create waits for the sync, or (a race) finishes first
    store.go_on.set()
    syncing.join(10)
    creating.join(30)
    assert name in registry, "a catalog created while the store was read was dropped"
    assert [d.name for d in store.load()] == [name]
    registry.drop(spark, name)
