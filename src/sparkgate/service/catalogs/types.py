"""Catalog types: what ``'type' = '...'`` in CREATE CATALOG turns into.

A type maps a :class:`~.definition.CatalogDefinition` to the options of a
Spark catalog plug-in (``spark.sql.catalog.<name>`` and its sub-keys). Types
are plug-ins registered under the entry-point group
``sparkgate.catalog_types``: the name is the ``type`` value, the object a
class the gateway instantiates without arguments (once per gateway). The
built-in ones (``jdbc``, ``generic_in_memory``, ``spark``) are registered the
same way in sparkgate's own ``pyproject.toml``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from sparkgate.api.errors import ExecutionError
from sparkgate.service.catalogs.definition import TYPE_KEY, CatalogDefinition
from sparkgate.service.catalogs.objects import SCHEMA as OBJECTS_SCHEMA
from sparkgate.service.catalogs.objects import CatalogObjects
from sparkgate.service.spark.jdbc import DRIVERS, subprotocol
from sparkgate.service.spark.jobs import invalid
from sparkgate.sql.quoting import quote_identifier as quote

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "CATALOG_TYPES_GROUP",
    "CatalogType",
    "GenericInMemoryCatalogType",
    "JdbcCatalogType",
    "SparkPluginCatalogType",
    "load_catalog_types",
    "option_error",
]

log = logging.getLogger(__name__)

CATALOG_TYPES_GROUP = "sparkgate.catalog_types"
JDBC_TABLE_CATALOG = "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog"


@runtime_checkable
class CatalogType(Protocol):
    """One value of ``'type'``; the gateway makes one instance per gateway."""

    def spark_options(self, definition: CatalogDefinition) -> dict[str, str]:
        """The plug-in's Spark options: ``""`` names the plug-in class, every other
        key is an option under ``spark.sql.catalog.<name>.``.

        Raises:
            ExecutionError: a required option is missing or an option is unknown.
        """
        ...

    def default_namespace(self, definition: CatalogDefinition) -> str | None:
        """The database ``USE CATALOG`` moves to, or None for the plug-in's own."""
        ...

    def prepare(self, spark: SparkSession, definition: CatalogDefinition) -> None:
        """First use, in a scratch session where the catalog is configured:
        prove it works (connect, list namespaces) and create what it needs."""
        ...

    def restore(self, spark: SparkSession, definition: CatalogDefinition) -> None:
        """The gateway starts with this stored catalog, configured in ``spark``:
        remake what lived in its memory only. No connection to an outside system
        here: a database that is down fails on first use, not the gateway's start."""
        ...

    def release(self, spark: SparkSession, definition: CatalogDefinition) -> None:
        """The catalog was dropped: free what :meth:`prepare` made."""
        ...


def option_error(definition: CatalogDefinition, message: str) -> ExecutionError:
    text = f"Could not create catalog '{definition.name}': {message}"
    return invalid(text)


def _check_options(
    definition: CatalogDefinition, required: tuple[str, ...], optional: tuple[str, ...]
) -> dict[str, str]:
    options = {k: v for k, v in definition.options.items() if k != TYPE_KEY}
    missing = [key for key in required if not options.get(key)]
    if missing:
        raise option_error(
            definition,
            f"missing required option(s) {', '.join(repr(m) for m in missing)} for type "
            f"'{definition.type}' (required: {', '.join(required)}"
            + (f"; optional: {', '.join(optional)})" if optional else ")"),
        )
    unknown = sorted(set(options) - set(required) - set(optional))
    if unknown:
        raise option_error(
            definition,
            f"unsupported option(s) {', '.join(repr(u) for u in unknown)} for type "
            f"'{definition.type}' (supported: {', '.join((*required, *optional))})",
        )
    return options


def _list_namespaces(spark: SparkSession, name: str) -> None:
    spark.sql(f"SHOW NAMESPACES IN {quote(name)}").collect()


class JdbcCatalogType:
    """Flink's JDBC catalog options on Spark's ``JDBCTableCatalog``.

    ``base-url`` (``jdbc:postgresql://host:port``) and ``default-database`` make
    the URL; the database's schemas are the catalog's databases (Spark's
    namespaces), ``public`` the current one after ``USE CATALOG`` on PostgreSQL.
    """

    REQUIRED = ("base-url", "default-database", "username", "password")
    OPTIONAL = ("driver",)

    def spark_options(self, definition: CatalogDefinition) -> dict[str, str]:
        options = _check_options(definition, self.REQUIRED, self.OPTIONAL)
        base = options["base-url"]
        if not subprotocol(base):
            raise option_error(
                definition,
                f"'base-url' must be a JDBC URL such as 'jdbc:postgresql://host:5432', "
                f"not '{base}'",
            )
        url = f"{base.rstrip('/')}/{options['default-database']}"
        driver = options.get("driver") or DRIVERS.get(subprotocol(base))
        spark = {"": JDBC_TABLE_CATALOG, "url": url, "user": options["username"]}
        spark["password"] = options["password"]
        if driver:
            spark["driver"] = driver
        return spark

    def default_namespace(self, definition: CatalogDefinition) -> str | None:
        return (
            "public"
            if subprotocol(definition.options.get("base-url", "")) == "postgresql"
            else None
        )

    def prepare(self, spark: SparkSession, definition: CatalogDefinition) -> None:
        _list_namespaces(spark, definition.name)

    def restore(self, spark: SparkSession, definition: CatalogDefinition) -> None:
        pass

    def release(self, spark: SparkSession, definition: CatalogDefinition) -> None:
        pass


def _qualified(definition: CatalogDefinition, namespace: str) -> str:
    """The quoted ``catalog.database`` name of one of the catalog's databases."""
    return f"{quote(definition.name)}.{quote(namespace)}"


class GenericInMemoryCatalogType:
    """Flink's ``generic_in_memory``: a catalog whose databases and tables live in
    the gateway's memory only, gone when it stops (or the catalog is dropped).

    Spark ships no in-memory V2 catalog, so this is Spark's ``JDBCTableCatalog``
    over an in-memory Apache Derby database (Derby comes with Spark). It has a
    ``default`` database (or the one its ``default-database`` option names);
    columns are atomic types only (no ARRAY, MAP, ROW).
    """

    _DRIVER = DRIVERS["derby"]
    DEFAULT_DATABASE = "default"
    DEFAULT_DATABASE_KEY = "default-database"
    #: Derby's own schemas, which no user of the catalog made (not listed).
    hidden_namespaces = frozenset(
        {
            "APP",
            "NULLID",
            "SQLJ",
            "SYS",
            "SYSCAT",
            "SYSCS_DIAG",
            "SYSCS_UTIL",
            "SYSFUN",
            "SYSIBM",
            "SYSPROC",
            "SYSSTAT",
            OBJECTS_SCHEMA,
        }
    )

    def __init__(self) -> None:
        # One Derby database per catalog, unique per gateway: another gateway in
        # the same JVM (tests, embedding) never shares it.
        self._databases: dict[str, str] = {}
        # Each database's comment and properties (Derby keeps neither), by
        # (catalog, database): in memory, as the rest of the catalog.
        self._metadata: dict[tuple[str, str], tuple[str | None, dict[str, str]]] = {}

    def _url(self, name: str) -> str:
        database = self._databases.setdefault(name, f"sparkgate_{uuid.uuid4().hex}")
        return f"jdbc:derby:memory:{database}"

    def spark_options(self, definition: CatalogDefinition) -> dict[str, str]:
        _check_options(definition, (), (self.DEFAULT_DATABASE_KEY,))
        url = f"{self._url(definition.name)};create=true"
        return {"": JDBC_TABLE_CATALOG, "url": url, "driver": self._DRIVER}

    def default_namespace(self, definition: CatalogDefinition) -> str:
        return definition.options.get(self.DEFAULT_DATABASE_KEY) or self.DEFAULT_DATABASE

    def prepare(self, spark: SparkSession, definition: CatalogDefinition) -> None:
        namespace = _qualified(definition, self.default_namespace(definition))
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {namespace}").collect()

    def restore(self, spark: SparkSession, definition: CatalogDefinition) -> None:
        self.prepare(spark, definition)  # an empty catalog again, as Flink's after a restart

    def create_namespace(
        self,
        spark: SparkSession,
        definition: CatalogDefinition,
        namespace: str,
        comment: str | None,
        properties: Mapping[str, str],
        if_not_exists: bool,
    ) -> None:
        """CREATE DATABASE with a comment or properties, which Derby cannot keep:
        the schema in Derby, its comment and properties here."""
        qualified = _qualified(definition, namespace)
        if if_not_exists and spark.catalog.databaseExists(qualified):
            return
        spark.sql(f"CREATE NAMESPACE {qualified}").collect()
        self._metadata[(definition.name, namespace)] = (comment, dict(properties))

    def alter_namespace(
        self,
        spark: SparkSession,
        definition: CatalogDefinition,
        namespace: str,
        properties: Mapping[str, str],
    ) -> None:
        """ALTER DATABASE ... SET: the properties kept here, merged."""
        qualified = _qualified(definition, namespace)
        if not spark.catalog.databaseExists(qualified):
            raise invalid(
                f"Database {namespace} does not exist in catalog {definition.name}.",
                kind="DatabaseNotExistException",
            )
        comment, kept = self._metadata.get((definition.name, namespace), (None, {}))
        self._metadata[(definition.name, namespace)] = (comment, {**kept, **properties})

    def namespace_metadata(
        self, definition: CatalogDefinition, namespace: str
    ) -> tuple[str | None, dict[str, str]]:
        """A database's comment and properties."""
        comment, properties = self._metadata.get((definition.name, namespace), (None, {}))
        return comment, dict(properties)

    def drop_namespace(
        self, spark: SparkSession, definition: CatalogDefinition, namespace: str, cascade: bool
    ) -> None:
        """DROP DATABASE: Derby drops a schema only when written ``RESTRICT``,
        which Spark's JDBC catalog does not write, and has no ``CASCADE``: the
        tables go first, through Spark, then the schema on Derby's connection."""
        qualified = _qualified(definition, namespace)
        tables = [str(row[1]) for row in spark.sql(f"SHOW TABLES IN {qualified}").collect()]
        kept = CatalogObjects.of(spark, definition.name)
        if kept is not None and kept.listed(namespace) and not cascade:
            tables.append("")  # connector tables and views the gateway keeps there
        if tables and not cascade:
            raise invalid(
                f"Database {namespace} in catalog {definition.name} is not empty.",
                kind="DatabaseNotEmptyException",
            )
        for table in tables:
            spark.sql(f"DROP TABLE {qualified}.{quote(table)}").collect()
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        connection = jvm.java.sql.DriverManager.getConnection(self._url(definition.name))
        try:
            escaped = namespace.replace('"', '""')
            connection.createStatement().execute(f'DROP SCHEMA "{escaped}" RESTRICT')
        finally:
            connection.close()
        if kept is not None:
            kept.remove(namespace)
        self._metadata.pop((definition.name, namespace), None)

    def release(self, spark: SparkSession, definition: CatalogDefinition) -> None:
        for key in [key for key in self._metadata if key[0] == definition.name]:
            del self._metadata[key]
        database = self._databases.pop(definition.name, None)
        if database is None:
            return
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        try:  # Derby answers a successful drop with an exception (SQLState 08006)
            jvm.java.sql.DriverManager.getConnection(f"jdbc:derby:memory:{database};drop=true")
        except Exception:
            log.debug("Dropped Derby database %s", database)


class SparkPluginCatalogType:
    """Any Spark catalog plug-in: ``'type' = 'spark', 'class' = '<CatalogPlugin
    class>'``; every other option passes to the plug-in as it is."""

    CLASS_KEY = "class"

    def spark_options(self, definition: CatalogDefinition) -> dict[str, str]:
        options = {k: v for k, v in definition.options.items() if k != TYPE_KEY}
        plugin = options.pop(self.CLASS_KEY, "")
        if not plugin:
            raise option_error(
                definition,
                "missing required option 'class' for type 'spark' (the class of a Spark "
                f"CatalogPlugin, e.g. '{JDBC_TABLE_CATALOG}')",
            )
        return {"": plugin, **options}

    def default_namespace(self, definition: CatalogDefinition) -> str | None:
        return None

    def prepare(self, spark: SparkSession, definition: CatalogDefinition) -> None:
        from sparkgate.service.catalogs.spark import load_plugin

        load_plugin(spark, definition.name)

    def restore(self, spark: SparkSession, definition: CatalogDefinition) -> None:
        pass

    def release(self, spark: SparkSession, definition: CatalogDefinition) -> None:
        pass


def load_catalog_types() -> Mapping[str, CatalogType]:
    """Every registered catalog type by name, each instantiated once.

    A plug-in that fails to load is logged and left out: CREATE CATALOG with it
    then says it is unknown.
    """
    found: dict[str, CatalogType] = {}
    for entry in entry_points(group=CATALOG_TYPES_GROUP):
        try:
            factory = entry.load()
            instance = factory()
        except Exception:
            log.exception("Catalog type %r (%s) failed to load", entry.name, entry.value)
            continue
        if not isinstance(instance, CatalogType):
            log.error("Catalog type %r (%s) is not a CatalogType", entry.name, entry.value)
            continue
        found[entry.name] = instance
    return found
