"""The compiled plan: a JSON document of nodes and edges, after Flink's (FLIP-190, FLIP-292).

A plan describes what an INSERT or a statement set runs: table scans,
stateless calculations (Spark SQL expressions), the stateful operators
(deduplicate, group aggregate, join, rank) with a ``state`` list that gives
each input's state its TTL and TTL policy (seed 001: the update events
``OnCreate | OnRead | OnWrite | OnReadWrite``, processing or event time), and
the sinks. Ids are numbered in a stable depth-first order, so two compiles
of one statement give the same document and a diff of two plans is
meaningful.

Compatibility: ``planVersion`` says which layout a document has. Later
versions only add fields, each optional with the default the earlier
layout meant, so every plan a sparkgate wrote runs on every later one; a
plan of a newer version than this one reads is refused. A node without
``state`` (written by hand, or trimmed) runs with the session's
``table.exec.state.ttl``, as Flink runs plans compiled before FLIP-292.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from sparkgate.api.config import format_duration, parse_duration
from sparkgate.api.errors import PlanError
from sparkgate.sql.quoting import quote_identifier

__all__ = [
    "NODE_TYPES",
    "PLAN_VERSION",
    "STATEFUL_TYPES",
    "TTL_TIMES",
    "TTL_UPDATES",
    "Edge",
    "Node",
    "Plan",
    "StateSpec",
    "format_ttl",
    "table_field",
]

PLAN_VERSION = 1
TTL_UPDATES = ("OnCreate", "OnRead", "OnWrite", "OnReadWrite")
TTL_TIMES = ("PROCESSING_TIME", "EVENT_TIME")
# Flink's SQL operators update a state's TTL when it is created or written
# (StateTtlConfig.UpdateType.OnCreateAndWrite), in processing time.
DEFAULT_TTL_UPDATE = "OnWrite"
DEFAULT_TTL_TIME = "PROCESSING_TIME"

SCAN = "stream-exec-table-source-scan_1"
VALUES = "stream-exec-values_1"
WATERMARK = "stream-exec-watermark-assigner_1"
CALC = "stream-exec-calc_1"
UNION = "stream-exec-union_1"
DEDUPLICATE = "stream-exec-deduplicate_1"
GROUP_AGGREGATE = "stream-exec-group-aggregate_1"
JOIN = "stream-exec-join_1"
RANK = "stream-exec-rank_1"
SINK = "stream-exec-sink_1"

# The states of each stateful node type, by input.
STATEFUL_TYPES: Mapping[str, tuple[str, ...]] = {
    DEDUPLICATE: ("deduplicateState",),
    GROUP_AGGREGATE: ("groupAggregateState",),
    JOIN: ("leftState", "rightState"),
    RANK: ("rankState",),
}
NODE_TYPES = (SCAN, VALUES, WATERMARK, CALC, UNION, DEDUPLICATE, GROUP_AGGREGATE, JOIN, RANK, SINK)


def table_field(identifier: Sequence[str], options: Mapping[str, str]) -> dict[str, Any]:
    """A scan's or sink's ``table``: the table's name, and the options of the
    statement's OPTIONS hint on it when there is one."""
    table: dict[str, Any] = {"identifier": list(identifier)}
    if options:
        table["options"] = dict(options)
    return table


def format_ttl(ttl: timedelta) -> str:
    """Flink's form of a state TTL in a plan: ``"3600000 ms"``."""
    return f"{int(ttl.total_seconds() * 1000)} ms"


@dataclass(frozen=True)
class StateSpec:
    """One input's state of a stateful node: its TTL (zero: kept forever) and policy."""

    index: int
    name: str
    ttl: timedelta
    ttl_update: str = DEFAULT_TTL_UPDATE
    ttl_time: str = DEFAULT_TTL_TIME

    @property
    def ttl_ms(self) -> int:
        return int(self.ttl.total_seconds() * 1000)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "ttl": format_ttl(self.ttl),
            "name": self.name,
            "ttlUpdate": self.ttl_update,
            "ttlTime": self.ttl_time,
        }

    def describe(self) -> str:
        if self.ttl_ms <= 0:
            return f"{self.name}: kept forever"
        return (
            f"{self.name}: ttl={format_duration(self.ttl)} "
            f"update={self.ttl_update} time={self.ttl_time}"
        )


@dataclass(frozen=True)
class Node:
    """A node: ``id``, ``type``, ``description``, its inputs' properties, its
    output row type, its states (stateful types) and the fields of its type."""

    id: int
    type: str
    description: str
    output_type: tuple[tuple[str, str], ...]
    inputs: int = 1
    state: tuple[StateSpec, ...] | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)

    @property
    def column_names(self) -> list[str]:
        return [name for name, _ in self.output_type]

    def table_name(self) -> tuple[str, ...]:
        """A scan's or sink's table (``table.identifier``)."""
        table = self.fields.get("table")
        identifier = table.get("identifier") if isinstance(table, dict) else None
        if not isinstance(identifier, list) or not identifier:
            raise PlanError(f"node {self.id}: table.identifier must name the table")
        return tuple(str(p) for p in identifier)

    def table_options(self) -> dict[str, str]:
        """A scan's or sink's options from the statement's OPTIONS hint
        (``table.options``); a plan file is the user's to edit: strings only."""
        table = self.fields.get("table")
        options = table.get("options", {}) if isinstance(table, dict) else {}
        if not isinstance(options, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in options.items()
        ):
            raise PlanError(f"node {self.id}: table.options must map option names to strings")
        return options

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.id, "type": self.type}
        body.update(self.fields)
        body["inputProperties"] = [
            {"requiredDistribution": {"type": "UNKNOWN"}, "damBehavior": "PIPELINED", "priority": 0}
            for _ in range(self.inputs)
        ]
        body["outputType"] = row_type(self.output_type)
        body["description"] = self.description
        if self.state is not None:
            body["state"] = [spec.to_json() for spec in self.state]
        return body


@dataclass(frozen=True)
class Edge:
    source: int
    target: int
    index: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "inputIndex": self.index,
            "shuffle": {"type": "FORWARD"},
            "shuffleMode": "PIPELINED",
        }


def row_type(columns: Sequence[tuple[str, str]]) -> str:
    """Flink's ROW type string, with Spark's type names."""
    inner = ", ".join(f"{quote_identifier(name)} {kind}" for name, kind in columns)
    return f"ROW<{inner}>"


def _parse_row_type(text: str, where: str) -> tuple[tuple[str, str], ...]:
    if not (text.startswith("ROW<") and text.endswith(">")):
        raise PlanError(f"{where}: outputType must be ROW<`name` TYPE, ...>, not {text!r}")
    body = text[4:-1]
    columns: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        if body[i] in ", ":
            i += 1
            continue
        if body[i] != "`":
            raise PlanError(f"{where}: outputType: expected a `quoted` column name at {body[i:]!r}")
        j = i + 1
        name = []
        while True:
            if j >= len(body):
                raise PlanError(f"{where}: outputType: an unclosed column name")
            if body[j] == "`":
                if j + 1 < len(body) and body[j + 1] == "`":
                    name.append("`")
                    j += 2
                    continue
                break
            name.append(body[j])
            j += 1
        depth, k = 0, j + 1
        while k < len(body) and not (depth == 0 and body[k] == ","):
            if body[k] in "<(":
                depth += 1
            elif body[k] in ">)":
                depth -= 1
            k += 1
        columns.append(("".join(name), body[j + 1 : k].strip()))
        i = k + 1
    return tuple(columns)


@dataclass(frozen=True)
class Plan:
    """A whole plan: what it was compiled from, its nodes and edges."""

    statement: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    version: int = PLAN_VERSION
    gateway_version: str = ""

    def node(self, node_id: int) -> Node:
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise PlanError(f"The plan has no node {node_id}")

    def inputs(self, node_id: int) -> list[int]:
        """The ids of a node's inputs, in input order."""
        edges = sorted((e for e in self.edges if e.target == node_id), key=lambda e: e.index)
        return [e.source for e in edges]

    @property
    def stateful(self) -> bool:
        """Whether any node keeps state (without, Spark's own execution is the same)."""
        return any(n.type in STATEFUL_TYPES for n in self.nodes)

    def sinks(self) -> list[Node]:
        return [n for n in self.nodes if n.type == SINK]

    def with_ttl(self, ttl: timedelta) -> Plan:
        """Nodes without a ``state`` list get one with ``ttl`` (a plan written
        without state metadata runs with the session's ``table.exec.state.ttl``)."""
        nodes = []
        for node in self.nodes:
            names = STATEFUL_TYPES.get(node.type)
            if names is not None and node.state is None:
                node = replace(node, state=tuple(StateSpec(i, n, ttl) for i, n in enumerate(names)))
            nodes.append(node)
        return replace(self, nodes=tuple(nodes))

    def to_json(self) -> str:
        body = {
            "planVersion": self.version,
            "sparkgateVersion": self.gateway_version,
            "statement": self.statement,
            "nodes": [n.to_json() for n in self.nodes],
            "edges": [e.to_json() for e in self.edges],
        }
        return json.dumps(body, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "the plan") -> Plan:
        """Read and check a plan's JSON: shape, version, node types, edges, TTLs."""
        try:
            body = json.loads(text)
        except ValueError as exc:
            raise PlanError(f"{source} is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise PlanError(f"{source}: a plan is a JSON object, not {type(body).__name__}")
        version = body.get("planVersion")
        if not isinstance(version, int) or isinstance(version, bool):
            raise PlanError(f"{source}: planVersion is missing or not a whole number")
        if not 1 <= version <= PLAN_VERSION:
            raise PlanError(
                f"{source}: unknown plan version {version}; this gateway reads plan "
                f"versions 1 to {PLAN_VERSION}"
            )
        raw_nodes = body.get("nodes")
        raw_edges = body.get("edges")
        if not isinstance(raw_nodes, list) or not raw_nodes:
            raise PlanError(f"{source}: 'nodes' must be a non-empty list")
        if not isinstance(raw_edges, list):
            raise PlanError(f"{source}: 'edges' must be a list")
        nodes = tuple(_node(raw, source) for raw in raw_nodes)
        ids = [n.id for n in nodes]
        if len(set(ids)) != len(ids):
            raise PlanError(f"{source}: node ids are not unique")
        edges = tuple(_edge(raw, set(ids), source) for raw in raw_edges)
        plan = cls(
            statement=str(body.get("statement", "")),
            nodes=nodes,
            edges=edges,
            version=version,
            gateway_version=str(body.get("sparkgateVersion", "")),
        )
        for node in nodes:
            # Sources read nothing; a union reads one input or more.
            wanted: int | None = 0 if node.type in (SCAN, VALUES) else node.inputs
            if node.type == UNION:
                wanted = None
            got = len(plan.inputs(node.id))
            if (wanted is not None and got != wanted) or (wanted is None and got < 1):
                raise PlanError(f"{source}: node {node.id} ({node.type}) has {got} input edge(s)")
        if not plan.sinks():
            raise PlanError(f"{source}: the plan has no sink node ({SINK})")
        return plan


def _node(raw: Any, source: str) -> Node:
    if not isinstance(raw, dict):
        raise PlanError(f"{source}: every node is a JSON object")
    node_id = raw.get("id")
    if not isinstance(node_id, int) or isinstance(node_id, bool):
        raise PlanError(f"{source}: a node without a whole-number 'id': {json.dumps(raw)[:80]}")
    where = f"{source}: node {node_id}"
    kind = raw.get("type")
    if kind not in NODE_TYPES:
        raise PlanError(f"{where}: unknown node type {kind!r}; known: {', '.join(NODE_TYPES)}")
    output = raw.get("outputType")
    if not isinstance(output, str):
        raise PlanError(f"{where}: outputType is missing")
    properties = raw.get("inputProperties", [])
    inputs = len(properties) if isinstance(properties, list) else 1
    known = {"id", "type", "inputProperties", "outputType", "description", "state"}
    fields = {k: v for k, v in raw.items() if k not in known}
    state = None
    if "state" in raw and kind in STATEFUL_TYPES:
        state = _states(raw["state"], kind, where)
    return Node(
        id=node_id,
        type=kind,
        description=str(raw.get("description", "")),
        output_type=_parse_row_type(output, where),
        inputs=inputs,
        state=state,
        fields=fields,
    )


def _states(raw: Any, kind: str, where: str) -> tuple[StateSpec, ...]:
    names = STATEFUL_TYPES[kind]
    if not isinstance(raw, list) or len(raw) != len(names):
        raise PlanError(f"{where}: 'state' must list {len(names)} state(s): {', '.join(names)}")
    specs = []
    for position, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise PlanError(f"{where}: state[{position}] is not a JSON object")
        index = entry.get("index", position)
        if index != position:
            raise PlanError(f"{where}: state[{position}].index must be {position}, not {index!r}")
        ttl_text = entry.get("ttl")
        if not isinstance(ttl_text, str | int) or isinstance(ttl_text, bool):
            raise PlanError(f"{where}: state[{position}].ttl must be a duration such as '1 h'")
        try:
            ttl = parse_duration(str(ttl_text))
        except ValueError as exc:
            raise PlanError(f"{where}: state[{position}].ttl is not a duration: {exc}") from None
        if ttl < timedelta(0):
            raise PlanError(
                f"{where}: state[{position}].ttl must not be negative: {ttl_text!r} "
                "(0 ms keeps the state forever)"
            )
        update = entry.get("ttlUpdate", DEFAULT_TTL_UPDATE)
        if update not in TTL_UPDATES:
            raise PlanError(
                f"{where}: state[{position}].ttlUpdate {update!r} is not one of "
                f"{', '.join(TTL_UPDATES)}"
            )
        time = entry.get("ttlTime", DEFAULT_TTL_TIME)
        if time not in TTL_TIMES:
            raise PlanError(
                f"{where}: state[{position}].ttlTime {time!r} is not one of {', '.join(TTL_TIMES)}"
            )
        specs.append(
            StateSpec(position, str(entry.get("name", names[position])), ttl, update, time)
        )
    return tuple(specs)


def _edge(raw: Any, ids: set[int], source: str) -> Edge:
    if not isinstance(raw, dict):
        raise PlanError(f"{source}: every edge is a JSON object")
    ends = (raw.get("source"), raw.get("target"))
    for end in ends:
        if end not in ids:
            raise PlanError(f"{source}: an edge names node {end!r}, which the plan does not have")
    index = raw.get("inputIndex", 0)
    if not isinstance(index, int):
        raise PlanError(f"{source}: an edge's inputIndex must be a whole number")
    return Edge(int(ends[0]), int(ends[1]), index)  # type: ignore[arg-type]
