"""JVM objects looked up once per engine JVM, not at every statement.

Reaching a class through py4j (``jvm.org.apache.spark...``) is a reflection
call per package name, some 10 to 25 calls; enum values, Scala objects and
immutable values made from them never change for the life of the JVM. They
are kept by the py4j JVM view they came from, weakly: an engine restarted
after its death is a new view, and its predecessor's objects go with it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["jvm_constant", "scala_context", "sql_conf"]

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
