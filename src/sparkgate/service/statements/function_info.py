"""``DESCRIBE FUNCTION [EXTENDED] f`` in Flink's shape (FLIP-465), from Spark's
function registry.

Flink answers two columns, ``info name`` and ``info value``: whether the
function is a system one and whether it is temporary; for a function a user
made, its class name, language and resource URIs; with ``EXTENDED`` its kind,
requirements, determinism, constant folding and signature. HiveServer2
sessions keep Spark's answer (one column, ``function_desc``).

Spark knows a function's class, not the language it was declared in: a JVM
class answers ``JAVA``, a SQL function ``SQL``. The signature is the one
Spark's usage text gives (``upper(str)``), or ``f(...)`` when it has none.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sparkgate.service.operation.operation import Execution
from sparkgate.service.spark.jobs import invalid
from sparkgate.service.statements.kinds import DescribeFunction
from sparkgate.service.statements.results import table_result
from sparkgate.sql.quoting import quote_identifier as quote

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sparkgate.service.session.session import Session

__all__ = ["FunctionInfo", "describe_function", "function_info"]

log = logging.getLogger(__name__)

# Spark's groups of built-in functions (ExpressionInfo.getGroup) by Flink's kinds.
_KIND_OF_GROUP = {
    "agg_funcs": "AGGREGATE",
    "window_funcs": "AGGREGATE",
    "generator_funcs": "TABLE",
    "table_funcs": "TABLE",
}
# JVM classes of user functions by Flink's kinds, the first the class extends.
_KIND_OF_BASE = (
    ("org.apache.hadoop.hive.ql.udf.generic.GenericUDTF", "TABLE"),
    ("org.apache.hadoop.hive.ql.udf.generic.GenericUDAFResolver", "AGGREGATE"),
    ("org.apache.hadoop.hive.ql.exec.UDAF", "AGGREGATE"),
    ("org.apache.spark.sql.expressions.UserDefinedAggregateFunction", "AGGREGATE"),
)
_NONDETERMINISTIC = "org.apache.spark.sql.catalyst.expressions.Nondeterministic"
_SQL_FUNCTION = "org.apache.spark.sql.catalyst.catalog.SQLFunction"


@dataclass(frozen=True)
class FunctionInfo:
    """What Spark knows of one function, in Flink's terms."""

    name: str
    system: bool
    temporary: bool
    class_name: str
    language: str
    resources: tuple[tuple[str, str], ...]
    kind: str
    deterministic: bool
    signature: str

    def rows(self, extended: bool) -> list[list[str | None]]:
        rows: list[list[str | None]] = [
            ["is system function", _flag(self.system)],
            ["is temporary", _flag(self.temporary)],
        ]
        if not self.system:
            uris = ", ".join(
                f"ResourceUri{{resourceType={kind}, uri='{uri}'}}" for kind, uri in self.resources
            )
            rows += [
                ["class name", self.class_name],
                ["function language", self.language],
                ["resource uris", f"[{uris}]"],
            ]
        if extended:
            rows += [
                ["kind", self.kind],
                ["requirements", "[]"],
                ["is deterministic", _flag(self.deterministic)],
                ["supports constant folding", "true"],
                ["signature", self.signature],
            ]
        return rows


def _flag(value: bool) -> str:
    return "true" if value else "false"


def describe_function(session: Session, statement: DescribeFunction) -> Execution | None:
    """Flink's two columns on Flink-protocol sessions; None (Spark's answer) otherwise."""
    if not session.flink_shapes:
        return None
    info = function_info(session.spark, statement.function)
    if info is None:
        raise invalid(
            f"Function with the identifier '{'.'.join(statement.function)}' doesn't exist."
        )
    return table_result(["info name", "info value"], info.rows(statement.extended))


def function_info(spark: SparkSession, name: tuple[str, ...]) -> FunctionInfo | None:
    """What Spark's registry holds for function ``name``; None when there is none."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    text = ".".join(quote(part) for part in name)
    try:
        found = spark.catalog.getFunction(text)
    except Exception:
        log.debug("no function %s", text, exc_info=True)
        return None
    catalog = spark._jsparkSession.sessionState().catalog()
    identifier = _identifier(jvm, name)
    temporary = found.catalog is None and bool(catalog.isTemporaryFunction(identifier))
    system = found.catalog is None and not temporary
    try:
        expression = catalog.lookupFunctionInfo(identifier)
        group = str(expression.getGroup() or "")
    except Exception:
        log.debug("no expression info for %s", text, exc_info=True)
        group = ""
    class_name = str(found.className or "")
    resources: tuple[tuple[str, str], ...] = ()
    if found.catalog is not None:
        resources = _resources(catalog, identifier)
    loaded = _load_class(jvm, class_name)
    return FunctionInfo(
        name=str(found.name),
        system=system,
        temporary=temporary,
        class_name=class_name,
        language="SQL" if _extends(jvm, loaded, _SQL_FUNCTION) else "JAVA",
        resources=resources,
        kind=_kind(jvm, group, loaded),
        deterministic=not _extends(jvm, loaded, _NONDETERMINISTIC),
        signature=_signature(str(found.name), found.description),
    )


def _identifier(jvm: Any, name: tuple[str, ...]) -> Any:
    option = jvm.scala.Option.apply
    database = name[-2] if len(name) > 1 else None
    catalog = name[-3] if len(name) > 2 else None
    return jvm.org.apache.spark.sql.catalyst.FunctionIdentifier(
        name[-1], option(database), option(catalog)
    )


def _resources(catalog: Any, identifier: Any) -> tuple[tuple[str, str], ...]:
    """A catalog function's resources (its jars) as (type, URI)."""
    try:
        listed = catalog.getFunctionMetadata(identifier).resources()
    except Exception:
        log.debug("no metadata for function %s", identifier, exc_info=True)
        return ()
    found = []
    for i in range(listed.size()):
        resource = listed.apply(i)
        found.append((str(resource.resourceType().resourceType()).upper(), str(resource.uri())))
    return tuple(found)


def _load_class(jvm: Any, name: str) -> Any:
    if not name:
        return None
    try:
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        return jvm.java.lang.Class.forName(name, False, loader)
    except Exception:
        log.debug("class %s does not load", name, exc_info=True)
        return None


def _extends(jvm: Any, loaded: Any, base: str) -> bool:
    if loaded is None:
        return False
    try:
        return bool(jvm.java.lang.Class.forName(base).isAssignableFrom(loaded))
    except Exception:  # the base class is not on the classpath
        return False


def _kind(jvm: Any, group: str, loaded: Any) -> str:
    if group in _KIND_OF_GROUP:
        return _KIND_OF_GROUP[group]
    for base, kind in _KIND_OF_BASE:
        if _extends(jvm, loaded, base):
            return kind
    return "SCALAR"


def _signature(name: str, usage: str | None) -> str:
    """The call form before `` - `` in Spark's usage text (``upper(str)``)."""
    for line in (usage or "").splitlines():
        head = line.strip().split(" - ", 1)[0].strip()
        if head and head != line.strip():
            return head
    return f"{name}(...)"
