"""Confinement of the files remote SQL may name: ``sql-gateway.security.allowed-paths``.

Spark SQL reaches any file the gateway's OS user can: ``SELECT * FROM
text.`/etc/passwd```, a table ``LOCATION '/etc'``, ``ADD JAR '/home/x/y.jar'``.
With confinement on (by default whenever authentication is), every path a
statement names must lie under an allowed root, else the statement is refused
before Spark runs it. The paths are found in Spark's plans, not in the text:

- the parsed plan: file relations (``format.`path```, read or written), table
  and namespace locations and ``path``/``paths`` options (CREATE / REPLACE
  TABLE [AS SELECT], CREATE TABLE LIKE, CREATE DATABASE, ALTER ... SET
  LOCATION, ADD PARTITION), CREATE TEMPORARY VIEW ... USING, INSERT
  OVERWRITE DIRECTORY, LOAD DATA, ADD JAR/FILE/ARCHIVE, CREATE FUNCTION
  ... USING JAR; ``LOAD DATA LOCAL`` is refused outright;
- the analyzed plan, for what the parsed one cannot show: the file relations
  in a view's body, and statements naming their table with ``IDENTIFIER()``.

Paths are qualified as Spark does (Hadoop's ``Path`` and file system: a
relative path is under the gateway's working directory) and, on the local file
system, resolved through symbolic links; a glob counts by the directory it
starts in. A root is allowed with everything below it.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from sparkgate.service.spark.jvm_cache import sql_conf

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "ALLOWED_PATHS_KEY",
    "ANYWHERE",
    "PathRoots",
    "PathUse",
    "analyzed_paths",
    "needs_analysis",
    "parsed_paths",
    "plan_nodes",
    "simple_name",
]

#: The option naming the roots (options.ALLOWED_PATHS), named by every refusal.
ALLOWED_PATHS_KEY = "sql-gateway.security.allowed-paths"
#: The value that turns confinement off.
ANYWHERE = "*"


@dataclass(frozen=True)
class PathUse:
    """A path a statement names, and what for (words of the refusal)."""

    path: str
    use: str
    #: ``format.`path``` relations: a table of that two-part name wins over the path.
    relation: tuple[str, str] | None = None
    #: Refused whatever the path (LOAD DATA LOCAL).
    refused: str | None = None


# -- the parsed plan -------------------------------------------------------------

_TABLE_COMMANDS = frozenset(
    {"CreateTable", "ReplaceTable", "CreateTableAsSelect", "ReplaceTableAsSelect"}
)
_FILE_COMMANDS = {
    "AddJarsCommand": "ADD JAR",
    "AddFilesCommand": "ADD FILE",
    "AddArchivesCommand": "ADD ARCHIVE",
}
# Plans whose table names are expressions, resolved by the analyzer only.
_IDENTIFIER_NODES = frozenset(
    {"PlanWithUnresolvedIdentifier", "ExpressionWithUnresolvedIdentifier"}
)

# Names Spark resolves as data sources (``name.`path```): asked of Spark once per name.
_sources: dict[str, bool] = {}
_sources_lock = threading.Lock()


def simple_name(class_name: Any) -> str:
    """``org.x.Project`` -> ``Project``: a plan node's class, as its simple name."""
    return str(class_name).rsplit(".", 1)[-1]


def plan_nodes(value: Any) -> Iterable[Mapping[str, Any]]:
    """Every node (a dict) of a plan rendered by ``toJSON``, nested ones too."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            yield item
            stack.extend(v for v in item.values() if isinstance(v, list | dict))


def _is_source(spark: SparkSession, name: str) -> bool:
    key = name.lower()
    with _sources_lock:
        if key in _sources:
            return _sources[key]
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    try:
        jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
            name, sql_conf(spark)
        )
        found = True
    except Exception:
        found = False
    with _sources_lock:
        _sources[key] = found
    return found


def _scala_strings(seq: Any) -> list[str]:
    return [str(seq.apply(i)) for i in range(seq.size())]


def _option_paths(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """The ``path`` and ``paths`` (a JSON array) of data source options."""
    found: list[str] = []
    for key, value in pairs:
        if key.lower() == "path":
            found.append(value)
        elif key.lower() == "paths":
            try:
                listed = json.loads(value)
            except ValueError:
                listed = [value]
            found.extend(str(p) for p in (listed if isinstance(listed, list) else [listed]))
    return found


def _scala_map_items(scala_map: Any) -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = []
    iterator = scala_map.iterator()
    while iterator.hasNext():
        pair = iterator.next()
        items.append((str(pair._1()), str(pair._2())))
    return items


def parsed_paths(
    spark: SparkSession, plan: Any, nodes: Sequence[Mapping[str, Any]]
) -> list[PathUse]:
    """The paths of a parsed plan: ``plan`` over py4j, ``nodes`` its ``toJSON``."""
    uses: list[PathUse] = []
    for node in plan_nodes(list(nodes)):
        kind = simple_name(node.get("class", ""))
        if kind == "UnresolvedRelation":
            head, sep, rest = str(node.get("multipartIdentifier", "")).strip("[]").partition(", ")
            if sep and rest and _is_source(spark, head):
                uses.append(PathUse(rest, f"{head} files", relation=(head, rest)))
        elif kind == "UnresolvedTableSpec" and node.get("location"):
            uses.append(PathUse(str(node["location"]), "a table location"))
        elif kind == "UnresolvedPartitionSpec" and node.get("location"):
            uses.append(PathUse(str(node["location"]), "a partition location"))
        elif kind in ("SetTableLocation", "SetNamespaceLocation", "CreateTableLike"):
            if node.get("location"):
                uses.append(PathUse(str(node["location"]), "a location"))
        elif kind == "LoadData":
            if node.get("isLocal"):
                uses.append(
                    PathUse(
                        str(node.get("path", "")),
                        "LOAD DATA LOCAL",
                        refused="LOAD DATA LOCAL reads a file of the gateway's host",
                    )
                )
            else:
                uses.append(PathUse(str(node.get("path", "")), "LOAD DATA"))
        elif kind == "CreateFunction":
            for resource in node.get("resources") or []:
                if isinstance(resource, Mapping) and resource.get("uri"):
                    uses.append(PathUse(str(resource["uri"]), "a function's resource"))
    uses.extend(_root_command_paths(plan, simple_name(nodes[0].get("class", "")) if nodes else ""))
    return uses


def _root_command_paths(plan: Any, kind: str) -> list[PathUse]:
    """Paths in fields ``toJSON`` leaves out (maps, options, URIs): the command's own."""
    if kind in _FILE_COMMANDS:
        return [PathUse(p, _FILE_COMMANDS[kind]) for p in _scala_strings(plan.paths())]
    if kind == "CreateNamespace":
        location = plan.properties().get("location")
        return (
            [PathUse(str(location.get()), "a namespace location")] if location.isDefined() else []
        )
    if kind == "CreateTempViewUsing":
        return [
            PathUse(p, "a view's files") for p in _option_paths(_scala_map_items(plan.options()))
        ]
    if kind == "InsertIntoDir":
        storage = plan.storage()
        found = [str(storage.locationUri().get())] if storage.locationUri().isDefined() else []
        found += _option_paths(_scala_map_items(storage.properties()))
        return [PathUse(p, "INSERT OVERWRITE DIRECTORY") for p in found]
    if kind in _TABLE_COMMANDS:
        options = plan.tableSpec().optionExpression().options()
        pairs = []
        for i in range(options.size()):
            pair = options.apply(i)
            pairs.append((str(pair._1()), str(pair._2().toString())))
        return [PathUse(p, "a table's files") for p in _option_paths(pairs)]
    return []


def needs_analysis(nodes: Sequence[Mapping[str, Any]]) -> bool:
    """Whether table names in the plan are expressions (``IDENTIFIER(...)``) that only
    the analyzer resolves, and with them any path they name."""
    return any(
        simple_name(n.get("class", "")) in _IDENTIFIER_NODES for n in plan_nodes(list(nodes))
    )


# -- the analyzed plan ---------------------------------------------------------------


def analyzed_paths(plan: Any) -> list[PathUse]:
    """The files an analyzed plan reads or writes by path (not as a catalog table's):
    file relations, in view bodies and subqueries too, and file writes."""
    uses: list[PathUse] = []
    stack = [plan]
    while stack:
        node = stack.pop()
        kind = simple_name(node.getClass().getName())
        if kind == "LogicalRelation" and not node.catalogTable().isDefined():
            relation = node.relation()
            if simple_name(relation.getClass().getName()) == "HadoopFsRelation":
                roots = relation.location().rootPaths()
                uses.extend(PathUse(str(roots.apply(i)), "files") for i in range(roots.size()))
        elif kind == "InsertIntoHadoopFsRelationCommand" and not node.catalogTable().isDefined():
            uses.append(PathUse(str(node.outputPath()), "files written"))
        elif kind == "DataSourceV2Relation":
            uses.extend(PathUse(p, "files") for p in _file_table_roots(node.table()))
        children = node.children()
        stack.extend(children.apply(i) for i in range(children.size()))
        subqueries = node.subqueries()
        stack.extend(subqueries.apply(i) for i in range(subqueries.size()))
    return uses


def _file_table_roots(table: Any) -> list[str]:
    """A V2 file table's root paths (``FileTable.fileIndex``); none for other tables."""
    superclass = table.getClass().getSuperclass()
    if superclass is None or simple_name(superclass.getName()) != "FileTable":
        return []
    roots = table.fileIndex().rootPaths()
    return [str(roots.apply(i)) for i in range(roots.size())]


# -- the roots ----------------------------------------------------------------------

_GLOB = re.compile(r"[*?\[{\\]")


def _local(uri: str) -> str | None:
    """The local path of a ``file:`` URI; None for other schemes."""
    parts = urlsplit(uri)
    if parts.scheme not in ("file", ""):
        return None
    return unquote(parts.path)


def _real(local: str) -> str:
    """``local`` through symbolic links; a glob by the directory it starts in."""
    glob = _GLOB.search(local)
    if glob is not None:
        local = local[: glob.start()]
        local = local if local.endswith("/") else os.path.dirname(local)
    return os.path.realpath(local or "/")


def _under(path: str, root: str) -> bool:
    root = root.rstrip("/")
    return path == root or path.startswith(root + "/") or root == ""


@dataclass(frozen=True)
class PathRoots:
    """The allowed roots, qualified; :meth:`refusal` checks a statement's paths."""

    #: Local roots (real paths) and other file systems' (qualified URIs).
    local: tuple[str, ...]
    remote: tuple[str, ...]
    #: As configured, for messages.
    shown: tuple[str, ...]

    @classmethod
    def qualified(cls, spark: SparkSession, roots: Iterable[str]) -> PathRoots:
        local: list[str] = []
        remote: list[str] = []
        shown = tuple(roots)
        for root in shown:
            uri = qualify(spark, root)
            path = _local(uri)
            if path is not None:
                local.append(os.path.realpath(path))
            else:
                remote.append(uri.rstrip("/"))
        return cls(tuple(local), tuple(remote), shown)

    def allows(self, spark: SparkSession, path: str) -> bool:
        try:
            uri = qualify(spark, path)
        except Exception:
            return False  # a file system Spark cannot name: nothing to check it against
        local = _local(uri)
        if local is not None:
            real = _real(local)
            return any(_under(real, root) for root in self.local)
        glob = _GLOB.search(uri)
        prefix = uri[: glob.start()] if glob else uri
        return any(_under(prefix, root) for root in self.remote)

    def refusal(self, spark: SparkSession, uses: Iterable[PathUse]) -> str | None:
        """The error for the first use outside the roots; None when all are inside."""
        for use in uses:
            if use.refused is not None:
                return f"{use.refused} and is refused in this gateway ({ALLOWED_PATHS_KEY})."
            if self.allows(spark, use.path) or _is_table(spark, use.relation):
                continue
            roots = ", ".join(self.shown) or "(none)"
            return (
                f"{use.path} ({use.use}) is outside the paths this gateway lets SQL use: "
                f"{roots}. An administrator can add a root with the option {ALLOWED_PATHS_KEY}."
            )
        return None


def _is_table(spark: SparkSession, relation: tuple[str, str] | None) -> bool:
    """Whether ``format.`name``` is a table after all (Spark resolves tables first)."""
    if relation is None:
        return False
    try:
        return bool(spark.catalog.tableExists(relation[1], relation[0]))
    except Exception:
        return False


def qualify(spark: SparkSession, path: str) -> str:
    """``path`` as Spark names it: scheme and authority, absolute, ``..`` folded."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    conf = spark._jsparkSession.sessionState().newHadoopConf()
    fs = hadoop_path.getFileSystem(conf)
    return str(fs.makeQualified(hadoop_path).toUri().toString())
