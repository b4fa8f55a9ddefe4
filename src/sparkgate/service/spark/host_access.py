"""Spark SQL that reaches past the engine into the gateway's host, found in plans.

Four kinds of statement act on the host as the gateway's OS user: script
transformation (``SELECT TRANSFORM(...) USING 'sh -c ...'`` runs a program),
reflection (``reflect``, ``java_method``, ``try_reflect``, and Hive's reflect
UDFs made with ``CREATE FUNCTION``, call any static Java method, such as
``System.exit``), ``INSERT OVERWRITE [LOCAL] DIRECTORY`` (replaces whatever a
directory holds) and ``ADD FILE`` / ``ADD ARCHIVE`` (ship host files to every
task). They are off unless ``sql-gateway.security.allowed-host-statements``
lists them, with or without authentication.

They are found in Spark's plans, not in the text: the parsed plan of every
statement (its JSON rendering, which the parser's cache already holds), and
the analyzed plan of queries that read views or functions, whose bodies the
parsed plan does not show.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sparkgate.service.spark.confinement import PathRoots, analyzed_paths, plan_nodes, simple_name
from sparkgate.service.spark.jvm_cache import jvm_constant

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "ALLOWED_HOST_STATEMENTS_KEY",
    "HOST_STATEMENTS",
    "HostStatement",
    "check_analyzed",
    "found_in",
    "refusal",
    "remove_reflection",
]

#: The option (options.ALLOWED_HOST_STATEMENTS) that allows them, named by every refusal.
ALLOWED_HOST_STATEMENTS_KEY = "sql-gateway.security.allowed-host-statements"


@dataclass(frozen=True)
class HostStatement:
    """One kind: its option value, what a user reads, and how a plan shows it."""

    name: str
    description: str
    classes: frozenset[str] = frozenset()  # plan node / expression classes (simple names)
    functions: frozenset[str] = frozenset()  # unresolved function names (parsed plans)
    function_classes: frozenset[str] = frozenset()  # CREATE FUNCTION ... AS '<class>'


_REFLECT_FUNCTIONS = frozenset({"reflect", "java_method", "try_reflect"})

HOST_STATEMENTS: Mapping[str, HostStatement] = {
    s.name: s
    for s in (
        HostStatement(
            "transform",
            "Script transformation (TRANSFORM ... USING) runs a program on the gateway's host",
            classes=frozenset({"ScriptTransformation", "HiveScriptTransformationExec"}),
        ),
        HostStatement(
            "reflection",
            "Reflection (reflect, java_method, try_reflect) calls Java methods in the engine",
            classes=frozenset({"CallMethodViaReflection"}),
            functions=_REFLECT_FUNCTIONS,
            function_classes=frozenset(
                {
                    "org.apache.hadoop.hive.ql.udf.generic.GenericUDFReflect",
                    "org.apache.hadoop.hive.ql.udf.generic.GenericUDFReflect2",
                    "org.apache.hadoop.hive.ql.udf.UDFReflect",
                    "org.apache.spark.sql.catalyst.expressions.CallMethodViaReflection",
                }
            ),
        ),
        HostStatement(
            "insert-directory",
            "INSERT OVERWRITE [LOCAL] DIRECTORY replaces what a directory holds",
            classes=frozenset(
                {"InsertIntoDir", "InsertIntoDataSourceDirCommand", "InsertIntoHiveDirCommand"}
            ),
        ),
        HostStatement(
            "add-file",
            "ADD FILE and ADD ARCHIVE ship the gateway host's files to Spark's tasks",
            classes=frozenset({"AddFilesCommand", "AddArchivesCommand"}),
        ),
    )
}


def _function_name(parts: Any) -> str:
    """``'[system, builtin, reflect]'`` (how a plan's JSON renders a name) -> ``reflect``."""
    text = str(parts).strip("[]")
    return text.rsplit(",", 1)[-1].strip().strip("`").lower()


def found_in(plan_json: Any) -> tuple[str, ...]:
    """The kinds of host statement a plan (parsed or analyzed, as JSON) contains."""
    found: list[str] = []
    for node in plan_nodes(plan_json):
        simple = simple_name(str(node.get("class", "")))
        for kind in HOST_STATEMENTS.values():
            if kind.name in found:
                continue
            if (
                simple in kind.classes
                or (
                    simple == "UnresolvedFunction"
                    and _function_name(node.get("nameParts", "")) in kind.functions
                )
                or str(node.get("className", "")) in kind.function_classes
            ):
                found.append(kind.name)
    return tuple(found)


def refusal(found: Iterable[str], allowed: Collection[str]) -> str | None:
    """The error message for the first kind found that is not allowed; None if all are."""
    for name in found:
        if name not in allowed:
            kind = HOST_STATEMENTS[name]
            return (
                f"{kind.description} and is off in this gateway. An administrator can allow "
                f"it with the option {ALLOWED_HOST_STATEMENTS_KEY}: {name}"
            )
    return None


def check_analyzed(
    df: DataFrame, allowed: Collection[str], roots: PathRoots | None = None
) -> str | None:
    """The refusal for ``df``'s analyzed plan (view bodies included), if any: a
    host statement not ``allowed``, or a file outside ``roots`` a view reads (the
    parsed plan showed the statement's own; see :mod:`.confinement`)."""
    if len(allowed) == len(HOST_STATEMENTS) and roots is None:
        return None
    analyzed = df._jdf.queryExecution().analyzed()
    plan = json.loads(str(analyzed.toJSON()))
    message = refusal(found_in(plan), allowed)
    if message is None and roots is not None and _reads_a_view(plan):
        message = roots.refusal(df.sparkSession, analyzed_paths(analyzed))
    return message


def _reads_a_view(plan: Any) -> bool:
    return any(simple_name(str(node.get("class", ""))) == "View" for node in plan_nodes(plan))


def remove_reflection(spark: SparkSession) -> None:
    """Drop the reflection functions from ``spark``'s own function registry, so
    that nothing this session analyzes (views, plans, streams) can call them."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    registry = spark._jsparkSession.sessionState().functionRegistry()
    for identifier in jvm_constant(jvm, "reflect-functions", _reflect_identifiers):
        registry.dropFunction(identifier)


def _reflect_identifiers(jvm: Any) -> list[Any]:
    """The functions' JVM identifiers (immutable), made once per JVM."""
    some = jvm.scala.Some
    make = jvm.org.apache.spark.sql.catalyst.FunctionIdentifier
    return [make(name, some("builtin"), some("system")) for name in sorted(_REFLECT_FUNCTIONS)]
