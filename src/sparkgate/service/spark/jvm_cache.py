"""JVM objects looked up once per engine JVM, not at every statement.

Reaching a class through py4j (``jvm.org.apache.spark...``) is a reflection
call per package name, some 10 to 25 calls; enum values, Scala objects and
immutable values made from them never change for the life of the JVM. They
are kept by the py4j JVM view they came from, weakly: an engine restarted
after its death is a new view, and its predecessor's objects go with it.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "as_json",
    "default_time_zone",
    "jvm_constant",
    "scala_context",
    "session_settings",
    "sql_conf",
]

T = TypeVar("T")

_values: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def jvm_constant(jvm: Any, key: str, make: Callable[[Any], T]) -> T:
    """``make(jvm)``, made once per JVM view and ``key``.

    ``jvm`` may also be a Spark context or session: then ``make`` gives one of
    its JVM objects that is fixed for its life (its SQL conf, status store).
    """
    with _lock:
        values = _values.setdefault(jvm, {})
        if key in values:
            return values[key]  # type: ignore[no-any-return]
    value = make(jvm)  # outside the lock: py4j calls; a race makes it twice, harmlessly
    with _lock:
        return values.setdefault(key, value)  # type: ignore[no-any-return]


def sql_conf(spark: Any) -> Any:
    """The JVM ``SQLConf`` of Spark session ``spark`` (one object for its life)."""
    return jvm_constant(spark, "sql-conf", lambda s: s._jsparkSession.sessionState().conf())


def scala_context(sc: Any) -> Any:
    """The Scala ``SparkContext`` behind PySpark's context ``sc`` (one object for its life)."""
    return jvm_constant(sc, "scala-context", lambda c: c._jsc.sc())


def as_json(jvm: Any, value: Any) -> Any:
    """A JVM object (a Scala map, an array, a status-store record) read as Python
    values in one round trip, through the JSON mapper Spark's REST API uses,
    instead of a py4j call per field or element."""
    mapper = jvm_constant(jvm, "json-mapper", _json_mapper)
    return json.loads(str(mapper.writeValueAsString(value)))


def _json_mapper(jvm: Any) -> Any:
    mapper = jvm.com.fasterxml.jackson.databind.ObjectMapper()
    scala = getattr(jvm.com.fasterxml.jackson.module.scala, "DefaultScalaModule$")
    mapper.registerModule(getattr(scala, "MODULE$"))
    return mapper


def session_settings(spark: Any) -> dict[str, str]:
    """The settings Spark session ``spark`` has set (its own and the engine's
    ``spark.*`` configuration), in two py4j calls; a key left at its default is
    absent."""
    jvm = spark.sparkContext._jvm
    return as_json(jvm, sql_conf(spark).getAllConfs())  # type: ignore[no-any-return]


def default_time_zone(jvm: Any) -> str:
    """The JVM's time zone: ``spark.sql.session.timeZone`` when it is not set."""
    return jvm_constant(
        jvm, "default-time-zone", lambda jvm: str(jvm.java.util.TimeZone.getDefault().getID())
    )
