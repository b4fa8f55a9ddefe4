"""What the catalogs do to Spark: a catalog's ``spark.sql.catalog.<name>`` options
in one Spark session, and the plug-in Spark has loaded for it.

Spark keeps catalog options per session (SQL conf) and caches the plug-in it
loaded for a name (``CatalogManager.catalogs``, private): a catalog that changes
or goes away must leave that cache too, or the session keeps the old one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from sparkgate.service.spark.plans import active_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "CATALOG_PREFIX",
    "SESSION_CATALOG",
    "add_to_driver_classpath",
    "apply_options",
    "catalog_keys",
    "configured",
    "evict",
    "holds_views",
    "load_plugin",
    "qualified_name",
    "remove_options",
]

log = logging.getLogger(__name__)

CATALOG_PREFIX = "spark.sql.catalog."
SESSION_CATALOG = "spark_catalog"
_DRIVER_LOADER = "org.apache.spark.util.MutableURLClassLoader"


def catalog_keys(name: str, options: Mapping[str, str]) -> dict[str, str]:
    """Spark's keys for a plug-in's options (``""`` is the class)."""
    return {
        (CATALOG_PREFIX + name + (f".{key}" if key else "")): value
        for key, value in options.items()
    }


def apply_options(spark: SparkSession, name: str, options: Mapping[str, str]) -> None:
    for key, value in catalog_keys(name, options).items():
        spark.conf.set(key, value)


def remove_options(spark: SparkSession, name: str, keys: Iterable[str]) -> None:
    for key in catalog_keys(name, dict.fromkeys(keys, "")):
        try:
            spark.conf.unset(key)
        except Exception:
            log.debug("Could not unset %s", key, exc_info=True)


def _catalog_manager(spark: SparkSession) -> Any:
    return spark._jsparkSession.sessionState().catalogManager()


def evict(spark: SparkSession, name: str) -> None:
    """Forget the plug-in the session loaded for ``name``: the next use loads it anew."""
    manager = _catalog_manager(spark)
    try:
        field = manager.getClass().getDeclaredField("catalogs")
        field.setAccessible(True)
        field.get(manager).remove(name)
    except Exception:
        log.warning("Could not unload catalog %s from a Spark session", name, exc_info=True)


def load_plugin(spark: SparkSession, name: str) -> None:
    """Load (and initialize) the plug-in now; raises what Spark raises."""
    with active_session(spark):
        _catalog_manager(spark).catalog(name)


def holds_views(spark: SparkSession, name: str) -> tuple[bool, str]:
    """Whether catalog ``name`` keeps views, and its plug-in's class name.

    Spark's JDBC catalog (behind ``jdbc`` and ``generic_in_memory``) keeps
    none. A catalog that does not load answers True: Spark's own error says why.
    """
    if name.lower() == SESSION_CATALOG:
        return True, "V2SessionCatalog"
    try:
        with active_session(spark):  # the plug-in's options are in the session's conf
            plugin = _catalog_manager(spark).catalog(name)
    except Exception:
        log.debug("catalog %s does not load", name, exc_info=True)
        return True, ""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    views = jvm.java.lang.Class.forName("org.apache.spark.sql.connector.catalog.ViewCatalog")
    return bool(views.isInstance(plugin)), str(plugin.getClass().getSimpleName())


def configured(spark: SparkSession, name: str) -> bool:
    """Whether ``spark``'s conf names a plug-in for catalog ``name``."""
    return spark.conf.get(CATALOG_PREFIX + name, None) is not None


def current_catalog(spark: SparkSession) -> str:
    return str(spark.catalog.currentCatalog())


def qualified_name(spark: SparkSession, name: tuple[str, ...]) -> tuple[str, ...]:
    """``name`` as catalog, database, table, as Spark resolves it in ``spark``."""
    current = current_catalog(spark)
    if len(name) > 1 and (name[0].lower() == SESSION_CATALOG or configured(spark, name[0])):
        catalog, rest = name[0], name[1:]
    else:
        catalog, rest = current, name
    if len(rest) == 1:
        namespace = tuple(str(part) for part in _catalog_manager(spark).currentNamespace())
        if catalog != current:
            namespace = ("default",)
        rest = (*namespace, rest[0])
    return (catalog, *rest)


def add_to_driver_classpath(spark: SparkSession, jars: Iterable[str]) -> bool:
    """Make local jars loadable from every thread of the driver, and ship them to executors.

    Spark's ``ADD JAR`` makes a jar visible to the JVM thread that ran it only;
    the gateway runs statements on many threads. The class loader spark-submit
    gave the driver's main thread is every py4j thread's context loader (and
    the parent of the one ``ADD JAR`` fills): a jar added there is seen by all.
    Returns False when the JVM was not started by spark-submit.
    """
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    # A statement's thread may have a session's loader (ADD JAR, artifacts) in
    # front: the one to extend is the first MutableURLClassLoader above it.
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    while loader is not None and loader.getClass().getName() != _DRIVER_LOADER:
        loader = loader.getParent()
    if loader is None:
        return False
    for jar in jars:
        uri = jvm.java.net.URI(jar)
        url = uri.toURL() if uri.getScheme() else jvm.java.io.File(jar).toURI().toURL()
        loader.addURL(url)
    return True
