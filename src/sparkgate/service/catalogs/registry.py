"""The gateway's catalogs: one registry per gateway, shared by every session.

As in Flink, a catalog made with CREATE CATALOG belongs to the gateway, not to
the session that made it: the registry keeps its definition in the catalog
store and its Spark options in every session (Spark keeps catalog options per
session): sessions that open later get them when they open, open ones when
the catalog is created, altered or dropped.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sparkgate.api.errors import ExecutionError
from sparkgate.service.catalogs import spark as plugins
from sparkgate.service.catalogs.definition import TYPE_KEY, CatalogDefinition
from sparkgate.service.catalogs.store import CatalogStore
from sparkgate.service.catalogs.types import CatalogType, option_error
from sparkgate.service.spark.jobs import invalid, to_execution_error

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["CatalogRegistry", "catalog_error"]

log = logging.getLogger(__name__)


def catalog_error(message: str, kind: str = "CatalogException") -> ExecutionError:
    return invalid(message, kind=kind)


def not_found(name: str) -> ExecutionError:
    """Spark's CATALOG_NOT_FOUND, in Flink's words."""
    return invalid(
        f"Catalog {name} does not exist.",
        kind="CatalogException",
        error_class="CATALOG_NOT_FOUND",
        sql_state="42P08",
    )


def _current_or_none(spark: SparkSession) -> str | None:
    try:
        return plugins.current_catalog(spark)
    except Exception:  # a session whose catalog cannot load any more
        return None


class CatalogRegistry:
    """Catalogs by name (case-sensitive, as Spark's and Flink's catalog names)."""

    def __init__(self, store: CatalogStore, types: Mapping[str, CatalogType]) -> None:
        self._store = store
        self._types = dict(types)
        self._definitions: dict[str, CatalogDefinition] = {}
        self._options: dict[str, dict[str, str]] = {}  # Spark options per catalog
        self._sessions: weakref.WeakSet[SparkSession] = weakref.WeakSet()
        self._lock = threading.RLock()

    # -- reading ---------------------------------------------------------------
    @property
    def type_names(self) -> list[str]:
        return sorted(self._types)

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._definitions)

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._definitions

    def get(self, name: str) -> CatalogDefinition:
        with self._lock:
            definition = self._definitions.get(name)
        if definition is None:
            raise not_found(name)
        return definition

    def default_namespace(self, name: str) -> str | None:
        with self._lock:
            definition = self._definitions.get(name)
            if definition is None:
                return None
            catalog_type = self._types.get(definition.type)
        return catalog_type.default_namespace(definition) if catalog_type else None

    def hidden_namespaces(self, name: str) -> frozenset[str]:
        """Namespaces of catalog ``name`` that its store holds for itself (not listed)."""
        with self._lock:
            definition = self._definitions.get(name)
            catalog_type = self._types.get(definition.type) if definition else None
        # Optional: a catalog type (a plug-in too) that has none need not say so.
        hidden: object = getattr(catalog_type, "hidden_namespaces", frozenset())
        return hidden if isinstance(hidden, frozenset) else frozenset()

    def _capability(self, catalog: str, name: str) -> tuple[CatalogDefinition, Any] | None:
        """Catalog ``catalog``'s definition and its type's optional method ``name``."""
        with self._lock:
            definition = self._definitions.get(catalog)
            catalog_type = self._types.get(definition.type) if definition else None
        method = getattr(catalog_type, name, None)
        return None if definition is None or method is None else (definition, method)

    def _delegate(self, spark: SparkSession, catalog: str, name: str, *args: Any) -> bool:
        """Call the catalog type's optional method ``name`` with the catalog's
        definition and ``args``; False when it has none."""
        found = self._capability(catalog, name)
        if found is None:
            return False
        definition, method = found
        method(spark, definition, *args)
        return True

    def create_namespace(
        self,
        spark: SparkSession,
        catalog: str,
        namespace: str,
        comment: str | None,
        properties: Mapping[str, str],
        *,
        if_not_exists: bool,
    ) -> bool:
        """Create database ``namespace`` of ``catalog`` with its comment and
        properties where its type keeps them itself (an optional
        ``create_namespace``); False where Spark's CREATE DATABASE does."""
        return self._delegate(
            spark, catalog, "create_namespace", namespace, comment, properties, if_not_exists
        )

    def alter_namespace(
        self, spark: SparkSession, catalog: str, namespace: str, properties: Mapping[str, str]
    ) -> bool:
        """ALTER DATABASE ... SET where the catalog's type keeps the properties."""
        return self._delegate(spark, catalog, "alter_namespace", namespace, properties)

    def namespace_metadata(
        self, catalog: str, namespace: str
    ) -> tuple[str | None, dict[str, str]] | None:
        """The comment and properties the catalog's type keeps for a database;
        None where Spark's catalog keeps them."""
        found = self._capability(catalog, "namespace_metadata")
        if found is None:
            return None
        definition, read = found
        comment, properties = read(definition, namespace)
        return comment, dict(properties)

    def drop_namespace(
        self, spark: SparkSession, catalog: str, namespace: str, *, cascade: bool
    ) -> bool:
        """Drop database ``namespace`` of ``catalog`` where its type drops
        databases itself (an optional ``drop_namespace``); False where Spark's
        DROP DATABASE does."""
        return self._delegate(spark, catalog, "drop_namespace", namespace, cascade)

    # -- sessions --------------------------------------------------------------
    def load(self, spark: SparkSession) -> None:
        """Register the store's catalogs (at start: no connection is tried here,
        a database that is down fails on first use, not the gateway's start)."""
        with self._lock:
            for definition in self._store.load():
                self._register(spark, definition)
            if self._definitions:
                log.info(
                    "Catalogs from the catalog store: %s", ", ".join(sorted(self._definitions))
                )

    def _register(self, spark: SparkSession, definition: CatalogDefinition) -> bool:
        """Make a stored catalog known (not yet to open sessions); False if it cannot be."""
        try:
            catalog_type = self._type(definition)
            options = catalog_type.spark_options(definition)
            scratch = spark.newSession()
            plugins.apply_options(scratch, definition.name, options)
            catalog_type.restore(scratch, definition)
        except ExecutionError as exc:
            log.error("Stored catalog %s is left out: %s", definition.name, exc.message)
            return False
        except Exception as exc:
            log.error(
                "Stored catalog %s is left out: %s",
                definition.name,
                to_execution_error(exc).root_cause,
            )
            return False
        self._definitions[definition.name] = definition
        self._options[definition.name] = options
        return True

    def sync(self, spark: SparkSession) -> None:
        """Follow a store other gateways of the service write too (a state database):
        catalogs they created, altered or dropped are so here, in every open session."""
        with self._lock:
            # Read under the lock: a snapshot taken before this gateway's own CREATE
            # would make the new catalog look dropped by another gateway.
            stored = {d.name: d for d in self._store.load()}
            for name in [n for n in self._definitions if n not in stored]:
                old = self._options.pop(name, {})
                del self._definitions[name]
                for session in self.live_sessions():
                    plugins.remove_options(session, name, old)
                    plugins.evict(session, name)
                log.info("Catalog %s was dropped by another gateway", name)
            for name, definition in stored.items():
                if self._definitions.get(name) == definition:
                    continue
                old = self._options.get(name, {})
                if not self._register(spark, definition):
                    continue
                for session in self.live_sessions():
                    plugins.remove_options(session, name, old)
                    plugins.apply_options(session, name, self._options[name])
                    plugins.evict(session, name)
                log.info("Catalog %s was created or altered by another gateway", name)

    def attach(self, spark: SparkSession) -> None:
        """Put every catalog into a session that opens, and keep it up to date."""
        with self._lock:
            for name, options in self._options.items():
                plugins.apply_options(spark, name, options)
            self._sessions.add(spark)

    def live_sessions(self) -> list[SparkSession]:
        """Every Spark session of the gateway still open (each attached one)."""
        with self._lock:
            return list(self._sessions)

    # -- changing ----------------------------------------------------------------
    def _type(self, definition: CatalogDefinition) -> CatalogType:
        type_name = definition.options.get(TYPE_KEY)
        known = ", ".join(self.type_names)
        if not type_name:
            raise option_error(definition, f"the option 'type' is missing (known types: {known})")
        catalog_type = self._types.get(type_name)
        if catalog_type is None:
            raise option_error(
                definition, f"unknown catalog type '{type_name}' (known types: {known})"
            )
        return catalog_type

    def _prepare(
        self, spark: SparkSession, definition: CatalogDefinition, catalog_type: CatalogType
    ) -> dict[str, str]:
        """The catalog's Spark options, once it proved to work in a scratch session."""
        options = catalog_type.spark_options(definition)
        scratch = spark.newSession()
        plugins.apply_options(scratch, definition.name, options)
        try:
            catalog_type.prepare(scratch, definition)
        except ExecutionError:
            raise
        except Exception as exc:
            raise option_error(definition, to_execution_error(exc).root_cause) from None
        return options

    def _refuse_taken(self, spark: SparkSession, name: str) -> None:
        if name == plugins.SESSION_CATALOG or name.lower() == plugins.SESSION_CATALOG:
            raise catalog_error(f"Catalog {name} already exists: it is Spark's built-in catalog.")
        if plugins.configured(spark, name):
            raise catalog_error(
                f"Catalog {name} already exists: the gateway's configuration defines it "
                f"({plugins.CATALOG_PREFIX}{name})."
            )

    def create(
        self, spark: SparkSession, definition: CatalogDefinition, *, if_not_exists: bool = False
    ) -> bool:
        """Create, store and register a catalog; False when it existed (IF NOT EXISTS)."""
        with self._lock:
            if definition.name in self._definitions:
                if if_not_exists:
                    return False
                raise catalog_error(f"Catalog {definition.name} already exists.")
            self._refuse_taken(spark, definition.name)
            catalog_type = self._type(definition)
            try:
                options = self._prepare(spark, definition, catalog_type)
                self._store.save(definition)
            except BaseException:
                catalog_type.release(spark, definition)
                raise
            self._definitions[definition.name] = definition
            self._options[definition.name] = options
            for session in self.live_sessions():
                plugins.apply_options(session, definition.name, options)
            log.info("Catalog %s created (type %s)", definition.name, definition.type)
            return True

    def alter(
        self,
        spark: SparkSession,
        name: str,
        *,
        set_options: Mapping[str, str] | None = None,
        reset_keys: Sequence[str] = (),
        comment: str | None = None,
    ) -> None:
        with self._lock:
            old = self.get(name)
            changed = dict(old.options)
            for key in (*reset_keys, *(set_options or {})):
                if key == TYPE_KEY:
                    raise catalog_error(
                        f"Could not alter catalog {name}: its 'type' cannot be changed; "
                        "drop it and create it again."
                    )
            changed.update(set_options or {})
            for key in reset_keys:
                changed.pop(key, None)
            new = CatalogDefinition(name, changed, comment if comment is not None else old.comment)
            catalog_type = self._type(new)
            if dict(new.options) != dict(old.options):
                options = self._prepare(spark, new, catalog_type)
            else:
                options = self._options[name]
            self._store.save(new)
            old_options = self._options[name]
            self._definitions[name] = new
            self._options[name] = options
            if options != old_options:
                for session in self.live_sessions():
                    plugins.remove_options(session, name, old_options)
                    plugins.apply_options(session, name, options)
                    plugins.evict(session, name)
            log.info("Catalog %s altered", name)

    def drop(self, spark: SparkSession, name: str, *, if_exists: bool = False) -> bool:
        """Drop a catalog; False when there was none (IF EXISTS)."""
        with self._lock:
            definition = self._definitions.get(name)
            if definition is None:
                # default_catalog: Flink's name of the session catalog.
                builtin = name.lower() in (plugins.SESSION_CATALOG, "default_catalog")
                if builtin or plugins.configured(spark, name):
                    raise catalog_error(
                        f"Cannot drop catalog {name}: it is not made with CREATE CATALOG "
                        "but Spark's built-in catalog or one of the gateway's configuration.",
                        "ValidationException",
                    )
                if if_exists:
                    return False
                raise not_found(name)
            if plugins.current_catalog(spark) == name:
                raise catalog_error(
                    f"Cannot drop catalog {name}: it is the current catalog of this session. "
                    f"Switch to another one first (USE CATALOG {plugins.SESSION_CATALOG}).",
                    "ValidationException",
                )
            users = sum(
                1
                for session in self.live_sessions()
                if session is not spark and _current_or_none(session) == name
            )
            if users:
                raise catalog_error(
                    f"Cannot drop catalog {name}: it is the current catalog of {users} other "
                    f"session(s).",
                    "ValidationException",
                )
            self._store.remove(name)
            options = self._options.pop(name)
            del self._definitions[name]
            for session in self.live_sessions():
                plugins.remove_options(session, name, options)
                plugins.evict(session, name)
            self._types[definition.type].release(spark, definition)
            log.info("Catalog %s dropped", name)
            return True
