"""Flink's connector DDL: ``CREATE TABLE t (...) WITH ('connector' = ...)``.

Spark has no ``WITH (...)`` table clause, so a CREATE TABLE whose column list
is followed by one is Flink's and the gateway takes it; anything else (``USING``,
``AS SELECT``, ...) is left to Spark. Columns are physical (``name TYPE``),
computed (``name AS expr``), metadata (``name TYPE METADATA [FROM 'key']
[VIRTUAL]``) or the watermark (``WATERMARK FOR col AS expr``). A ``LIKE source
[(like options)]`` clause starts the table from another's definition.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sparkgate.api.errors import SqlParseError, UnsupportedStatementError
from sparkgate.sql.flink_expression import flink_expression
from sparkgate.sql.lexer import Token, TokenKind, unquote
from sparkgate.sql.quoting import quote_identifier
from sparkgate.sql.reader import TokenReader

__all__ = [
    "LIKE_FEATURES",
    "Column",
    "PrimaryKey",
    "Schema",
    "TableDefinition",
    "TableLike",
    "Watermark",
    "parse_connector_create",
    "parse_connector_table",
    "parse_item",
    "parse_schema",
    "read_items",
]

_AFTER_TYPE = frozenset({"METADATA", "NOT", "NULL", "COMMENT", "PRIMARY"})
_UNITS = {
    "MILLISECOND": "milliseconds",
    "SECOND": "seconds",
    "MINUTE": "minutes",
    "HOUR": "hours",
    "DAY": "days",
}


@dataclass(frozen=True)
class Column:
    """A physical column (``type`` set), a computed one (``expression`` set) or a
    metadata column (``type`` and ``metadata``, the connector's key, set)."""

    name: str
    type: str | None = None
    expression: str | None = None
    metadata: str | None = None
    not_null: bool = False  # declared NOT NULL (a key column is NOT NULL anyway)
    #: A metadata column only read (``VIRTUAL``): not part of what an INSERT writes.
    virtual: bool = False
    comment: str | None = None  # COMMENT '...' after the column

    @property
    def type_text(self) -> str:
        """The declared type on one line, in upper case, as Flink prints it."""
        return " ".join((self.type or "").split()).upper()

    @property
    def is_physical(self) -> bool:
        return self.expression is None and self.metadata is None

    @property
    def is_proctime(self) -> bool:
        return (self.expression or "").replace(" ", "").upper() == "PROCTIME()"


@dataclass(frozen=True)
class Watermark:
    column: str
    expression: str

    @property
    def delay(self) -> str:
        """The delay as Spark's ``withWatermark`` writes it, e.g. ``5 seconds``.

        Flink's bounded out-of-orderness forms: ``ts`` or ``ts - INTERVAL 'n' unit``.
        """
        bound = self._bound()
        if bound is None:
            return "0 seconds"
        count, unit = bound
        return f"{count} {_UNITS[unit]}"

    @property
    def flink_text(self) -> str:
        """The expression as Flink prints it back (``ts - INTERVAL '1' SECONDS`` is
        `` `ts` - INTERVAL '1' SECOND``); one it cannot read, as written."""
        try:
            bound = self._bound()
        except SqlParseError:
            return flink_expression(self.expression)
        column = quote_identifier(self.column)
        if bound is None:
            return column
        count, unit = bound
        return f"{column} - INTERVAL '{count}' {unit}"

    def _bound(self) -> tuple[str, str] | None:
        """The out-of-orderness as (count, Flink's unit word in the singular), or None
        for the column alone."""
        src = TokenReader(self.expression, "a watermark")
        column = src.take(TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER)
        if column is None or unquote(column).lower() != self.column.lower():
            raise self._unsupported()
        if src.at_end:
            return None
        minus = src.take(TokenKind.OPERATOR)
        if minus is None or minus.text != "-" or not src.accept("INTERVAL"):
            raise self._unsupported()
        amount = src.take(TokenKind.STRING)
        unit = src.word()
        if amount is None or unit is None or src.i + 1 != len(src.tokens):
            raise self._unsupported()
        count = unquote(amount).strip()
        if not all(part.isdigit() for part in count.split(".", 1)):
            raise self._unsupported()
        if unit.rstrip("S") not in _UNITS:
            raise SqlParseError(f"Unsupported interval unit in watermark: {src.tokens[-1].text}")
        return count, unit.rstrip("S")

    def _unsupported(self) -> SqlParseError:
        return SqlParseError(
            f"Unsupported watermark expression '{self.expression}': expected "
            f"{self.column} or {self.column} - INTERVAL 'n' SECOND|MINUTE|HOUR|DAY"
        )


class PrimaryKey(NamedTuple):
    """A primary key's columns, and its constraint's name when the DDL gave one
    (``CONSTRAINT name PRIMARY KEY (...)``; Flink names it ``PK_<columns>`` else)."""

    columns: tuple[str, ...]
    name: str | None = None


@dataclass(frozen=True)
class TableDefinition:
    """What the WITH clause declared; stored as JSON in the table's properties."""

    name: tuple[str, ...]
    columns: tuple[Column, ...]
    options: Mapping[str, str]
    watermark: Watermark | None = None
    if_not_exists: bool = False
    temporary: bool = False
    comment: str | None = None
    primary_key: tuple[str, ...] = field(default=())
    partition_keys: tuple[str, ...] = field(default=())
    #: The primary key constraint's name as the DDL gave it (None: Flink's ``PK_<columns>``).
    constraint: str | None = None

    @property
    def constraint_name(self) -> str:
        """The primary key constraint's name as Flink prints it."""
        return self.constraint or "PK_" + "_".join(self.primary_key)

    @property
    def connector(self) -> str:
        return self.options.get("connector", "")

    @property
    def physical(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.is_physical)

    def to_json(self) -> str:
        return json.dumps(
            {
                "columns": [
                    {
                        "name": c.name,
                        "type": c.type,
                        "expression": c.expression,
                        "metadata": c.metadata,
                        **({"not_null": True} if c.not_null else {}),
                        **({"virtual": True} if c.virtual else {}),
                        **({"comment": c.comment} if c.comment is not None else {}),
                    }
                    for c in self.columns
                ],
                "options": dict(self.options),
                "watermark": None
                if self.watermark is None
                else {"column": self.watermark.column, "expression": self.watermark.expression},
                "primary_key": list(self.primary_key),
                "partition_keys": list(self.partition_keys),
                **({"constraint": self.constraint} if self.constraint else {}),
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, name: tuple[str, ...], text: str) -> TableDefinition:
        data = json.loads(text)
        mark = data.get("watermark")
        return cls(
            name=name,
            columns=tuple(Column(**c) for c in data["columns"]),
            options=dict(data["options"]),
            watermark=None if mark is None else Watermark(**mark),
            primary_key=tuple(data.get("primary_key", ())),
            partition_keys=tuple(data.get("partition_keys", ())),
            constraint=data.get("constraint"),
        )


def parse_item(src: TokenReader, item: list[Token]) -> Column | Watermark | PrimaryKey:
    """One item of a column list: a column, the watermark or the primary key's columns."""
    first = item[0].upper if item[0].kind is TokenKind.WORD else None
    if first == "WATERMARK" and len(item) > 3 and item[1].upper == "FOR":
        if item[3].upper != "AS" or len(item) < 5:
            raise SqlParseError("expected WATERMARK FOR column AS expression")
        return Watermark(unquote(item[2]), src.source(item[4:]))
    if first in ("PRIMARY", "CONSTRAINT"):
        names = [
            unquote(t) for t in item if t.kind in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER)
        ]
        upper = [n.upper() for n in names]
        start = upper.index("KEY") + 1 if "KEY" in upper else 0
        keys = [n for n in names[start:] if n.upper() not in ("NOT", "ENFORCED")]
        named = first == "CONSTRAINT" and len(names) > 1 and upper[1] != "PRIMARY"
        return PrimaryKey(tuple(keys), names[1] if named else None)
    name = unquote(item[0])
    comment = None
    if len(item) > 3 and item[-2].upper == "COMMENT" and item[-1].kind is TokenKind.STRING:
        comment, item = unquote(item[-1]), item[:-2]
    column = _column(src, name, item)
    return column if comment is None else dataclasses.replace(column, comment=comment)


def _column(src: TokenReader, name: str, item: list[Token]) -> Column:
    """A column of a column list, its comment aside."""
    if len(item) < 2:
        raise SqlParseError(f"column {name} needs a type or AS expression")
    if item[1].upper == "AS" and item[1].kind is TokenKind.WORD:
        return Column(name, expression=src.source(item[2:]))
    rest = item[1:]
    cut = len(rest)
    depth = 0  # inside ARRAY<...>, ROW(...): a field's NOT NULL is the type's
    for j, tok in enumerate(rest):  # METADATA / NOT NULL / COMMENT '...' follow the type
        if tok.kind is TokenKind.LPAREN or (tok.kind is TokenKind.OPERATOR and tok.text == "<"):
            depth += 1
        elif tok.kind is TokenKind.RPAREN or (tok.kind is TokenKind.OPERATOR and tok.text == ">"):
            depth -= 1
        elif depth == 0 and tok.kind is TokenKind.WORD and tok.upper in _AFTER_TYPE:
            cut = j
            break
    if cut == 0:
        raise SqlParseError(f"column {name} needs a type")
    column_type = src.source(rest[:cut])
    if cut < len(rest) and rest[cut].upper == "METADATA":
        # name TYPE METADATA [FROM 'key'] [VIRTUAL]: the key defaults to the name.
        key = name
        tail = rest[cut + 1 :]
        if len(tail) >= 2 and tail[0].upper == "FROM" and tail[1].kind is TokenKind.STRING:
            key = unquote(tail[1])
            tail = tail[2:]
        virtual = bool(tail) and tail[0].upper == "VIRTUAL"
        if virtual:
            tail = tail[1:]
        if tail:
            raise SqlParseError(f"expected METADATA [FROM 'key'] [VIRTUAL] for column {name}")
        return Column(name, type=column_type, metadata=key, virtual=virtual)
    words = [tok.upper for tok in rest[cut:] if tok.kind is TokenKind.WORD]
    return Column(name, type=column_type, not_null=words[:2] == ["NOT", "NULL"])


def parse_connector_table(text: str) -> TableDefinition | None:
    """The definition if ``text`` is Flink's ``CREATE TABLE ... WITH (...)``, else None."""
    found = parse_connector_create(text)
    return found[0] if found is not None else None


def parse_connector_create(text: str) -> tuple[TableDefinition, TableLike | None] | None:
    """Flink's ``CREATE TABLE [(...)] [WITH (...)] [LIKE source [(like options)]]``:
    the table's own definition and its LIKE clause; None for Spark's DDL. A bare
    ``CREATE TABLE t LIKE s`` is both (:attr:`TableLike.alone`)."""
    src = TokenReader(text, "CREATE TABLE")
    if not src.accept("CREATE"):
        return None
    temporary = src.accept("TEMPORARY")
    if not src.accept("TABLE"):
        return None
    if_not_exists = src.accept("IF", "NOT", "EXISTS")
    try:
        name = src.name()
    except SqlParseError:
        return None
    items = src.group() if src.kind() is TokenKind.LPAREN else None
    comment: str | None = None
    partition_keys: tuple[str, ...] = ()
    while not src.at_end and src.word() not in ("WITH", "LIKE"):
        if items is not None and src.accept("COMMENT") and src.kind() is TokenKind.STRING:
            comment = unquote(src.tokens[src.i])
            src.i += 1
        elif src.word() == "DISTRIBUTED" and src.word(1) in ("BY", "INTO"):
            raise UnsupportedStatementError(
                "DISTRIBUTED BY / DISTRIBUTED INTO is not supported: none of the gateway's "
                "connectors writes buckets (Flink's SupportsBucketing). A Spark table takes "
                "CLUSTERED BY (columns) INTO n BUCKETS"
            )
        elif items is not None and src.accept("PARTITIONED", "BY"):
            keys = src.group()
            if any(len(key) != 1 for key in keys):
                raise SqlParseError("PARTITIONED BY expects column names")
            partition_keys = tuple(unquote(key[0]) for key in keys)
        else:
            return None  # USING, OPTIONS, AS SELECT, ...: Spark's own DDL
    options: dict[str, str] = {}
    with_clause = src.word() == "WITH" and src.kind(1) is TokenKind.LPAREN
    if with_clause:
        src.accept("WITH")
        for item in src.group():
            if len(item) != 3 or item[1].kind is not TokenKind.EQUALS:
                raise SqlParseError("WITH expects 'key' = 'value' pairs")
            key = unquote(item[0]) if item[0].kind is TokenKind.STRING else src.source(item[0:1])
            if key in options:
                raise SqlParseError(f"duplicate option '{key}' in WITH")
            options[key] = unquote(item[2])
    like = _like(src) if src.word() == "LIKE" else None
    if like is None and not with_clause:
        return None
    if like is not None and items is None and not with_clause and not like.written:
        if not src.at_end:
            return None  # Spark's CREATE TABLE t LIKE s USING ... LOCATION ...
        # Flink's over a connector table, else Spark's: the source says which.
        like = dataclasses.replace(like, alone=True)
    if not src.at_end:
        clause = "LIKE" if like is not None else "WITH (...)"
        raise SqlParseError(f"unexpected input after {clause} in CREATE TABLE")
    schema = _schema(src, items or [], whole=like is None)
    if not schema.columns and like is None:
        raise SqlParseError("CREATE TABLE needs at least one column")
    if like is None:  # else they may be the source's columns: checked once merged
        _check_partition_keys(schema.columns, partition_keys)
    definition = TableDefinition(
        name=name,
        columns=schema.columns,
        options=options,
        watermark=schema.watermark,
        if_not_exists=if_not_exists,
        temporary=temporary,
        comment=comment,
        primary_key=schema.primary_key,
        partition_keys=partition_keys,
        constraint=schema.constraint,
    )
    return definition, like


def _check_watermark_column(columns: Sequence[Column], watermark: Watermark | None) -> None:
    if watermark is not None and watermark.column not in {c.name for c in columns}:
        raise SqlParseError(f"watermark column {watermark.column} is not a column")


def _check_partition_keys(columns: Sequence[Column], keys: Sequence[str]) -> None:
    physical = {c.name.lower() for c in columns if c.is_physical}
    for key in keys:
        if key.lower() not in physical:
            raise SqlParseError(f"partition column {key} is not a physical column")


#: The features of a source table a LIKE clause merges (Flink's like options).
LIKE_FEATURES = (
    "CONSTRAINTS",
    "DISTRIBUTION",
    "GENERATED",
    "METADATA",
    "OPTIONS",
    "PARTITIONS",
    "WATERMARKS",
)
_LIKE_STRATEGIES = ("INCLUDING", "EXCLUDING", "OVERWRITING")
# Features with nothing to overwrite: one key, one partitioning.
_NOT_OVERWRITTEN = ("CONSTRAINTS", "PARTITIONS", "DISTRIBUTION")


@dataclass(frozen=True)
class TableLike:
    """Flink's ``LIKE source [(like options)]`` (FLIP-110): the table a CREATE
    TABLE starts from, and how each feature of it is merged with the statement's
    own: ``INCLUDING`` (a duplicate is an error), ``EXCLUDING`` or
    ``OVERWRITING`` (the statement's wins). Unwritten, as in Flink: ``INCLUDING
    ALL OVERWRITING OPTIONS``. Physical columns always come first, from the source."""

    source: tuple[str, ...]
    strategies: Mapping[str, str] = field(default_factory=dict)
    #: Whether like options were written (``LIKE s (...)``).
    written: bool = False
    #: ``CREATE TABLE t LIKE s`` and nothing else: Spark's statement too, which
    #: copies a Spark table.
    alone: bool = False

    def strategy(self, feature: str) -> str:
        default = "OVERWRITING" if feature == "OPTIONS" else "INCLUDING"
        return self.strategies.get(feature, default)

    def merged(self, base: TableDefinition, own: TableDefinition) -> TableDefinition:
        """``own`` (the statement's definition) over ``base`` (the source's)."""
        own_columns = {c.name.lower(): c for c in own.columns}
        columns: list[Column] = []
        for column in base.columns:
            mine = own_columns.pop(column.name.lower(), None)
            if column.is_physical:
                if mine is not None:
                    raise SqlParseError(
                        f"A column named '{column.name}' already exists in the base table."
                    )
                columns.append(column)
                continue
            feature = "GENERATED" if column.expression is not None else "METADATA"
            strategy = self.strategy(feature)
            kind = "generated" if feature == "GENERATED" else "metadata"
            if mine is not None and strategy == "INCLUDING":
                raise SqlParseError(
                    f"A {kind} column named '{column.name}' already exists in the base table. "
                    f"You might want to specify EXCLUDING {feature} or OVERWRITING {feature}."
                )
            if mine is not None:
                columns.append(mine)
            elif strategy != "EXCLUDING":
                columns.append(column)
        columns += [c for c in own.columns if c.name.lower() in own_columns]
        watermark = self._merged_watermark(base, own)
        _check_watermark_column(columns, watermark)
        partition_keys = self._merged_partitions(base, own)
        _check_partition_keys(columns, partition_keys)
        return dataclasses.replace(
            own,
            columns=tuple(columns),
            options=self._merged_options(base, own),
            watermark=watermark,
            **self._merged_key(base, own),
            partition_keys=partition_keys,
        )

    def _merged_options(self, base: TableDefinition, own: TableDefinition) -> dict[str, str]:
        strategy = self.strategy("OPTIONS")
        if strategy == "EXCLUDING":
            return dict(own.options)
        if strategy == "INCLUDING":
            for key in own.options:
                if key in base.options:
                    raise SqlParseError(
                        f"There already exists an option ['{key}' -> '{base.options[key]}'] in "
                        "the base table. You might want to specify EXCLUDING OPTIONS or "
                        "OVERWRITING OPTIONS."
                    )
        return {**base.options, **own.options}

    def _merged_watermark(self, base: TableDefinition, own: TableDefinition) -> Watermark | None:
        strategy = self.strategy("WATERMARKS")
        if strategy == "EXCLUDING" or base.watermark is None:
            return own.watermark
        if own.watermark is None:
            return base.watermark
        if strategy == "INCLUDING":
            raise SqlParseError(
                f"There already exists a watermark spec for column '{base.watermark.column}' "
                "in the base table. You might want to specify EXCLUDING WATERMARKS or "
                "OVERWRITING WATERMARKS."
            )
        return own.watermark

    def _merged_key(self, base: TableDefinition, own: TableDefinition) -> dict[str, Any]:
        if self.strategy("CONSTRAINTS") == "EXCLUDING" or not base.primary_key:
            return {"primary_key": own.primary_key, "constraint": own.constraint}
        if own.primary_key:
            raise SqlParseError(
                "The base table already has a primary key. You might want to specify "
                "EXCLUDING CONSTRAINTS."
            )
        return {"primary_key": base.primary_key, "constraint": base.constraint}

    def _merged_partitions(self, base: TableDefinition, own: TableDefinition) -> tuple[str, ...]:
        if self.strategy("PARTITIONS") == "EXCLUDING" or not base.partition_keys:
            return own.partition_keys
        if own.partition_keys:
            raise SqlParseError(
                "The base table already has partitions defined. You might want to specify "
                "EXCLUDING PARTITIONS."
            )
        return base.partition_keys


def _like(src: TokenReader) -> TableLike:
    """``LIKE source [(like options)]``, the reader at LIKE."""
    src.accept("LIKE")
    source = src.name()
    if src.kind() is not TokenKind.LPAREN:
        return TableLike(source)
    words = [t for item in src.group() for t in item]  # the options need no commas
    strategies: dict[str, str] = {}
    for at in range(0, len(words), 2):
        strategy = words[at].upper
        feature = words[at + 1].upper if at + 1 < len(words) else ""
        if strategy not in _LIKE_STRATEGIES or feature not in (*LIKE_FEATURES, "ALL"):
            raise SqlParseError(
                "LIKE options are {INCLUDING | EXCLUDING} ALL or {INCLUDING | EXCLUDING | "
                "OVERWRITING} {" + " | ".join(LIKE_FEATURES) + "}, e.g. LIKE t (EXCLUDING "
                f"OPTIONS); not: {' '.join(t.text for t in words[at : at + 2])}"
            )
        if feature == "ALL":
            if strategy == "OVERWRITING":
                raise SqlParseError("Illegal merging strategy 'OVERWRITING' for 'ALL' option.")
            strategies = dict.fromkeys(LIKE_FEATURES, strategy)
        elif strategy == "OVERWRITING" and feature in _NOT_OVERWRITTEN:
            raise SqlParseError(f"Illegal merging strategy 'OVERWRITING' for '{feature}' option.")
        else:
            strategies[feature] = strategy
    return TableLike(source, strategies, written=True)


@dataclass(frozen=True)
class Schema:
    """A CREATE TABLE column list: columns, watermark and primary key.

    ``names_only`` marks CTAS's ``(c, b, a)`` form (FLIP-463): the query's own
    columns, in that order; the columns then have neither type nor expression.
    """

    columns: tuple[Column, ...]
    watermark: Watermark | None = None
    primary_key: tuple[str, ...] = ()
    names_only: bool = False
    constraint: str | None = None


def read_items(
    src: TokenReader, items: list[list[Token]]
) -> tuple[list[Column], Watermark | None, PrimaryKey | None]:
    """The columns, the watermark and the primary key (None: not given) of a column list."""
    columns: list[Column] = []
    watermark: Watermark | None = None
    primary_key: PrimaryKey | None = None
    for item in items:
        parsed = parse_item(src, item)
        if isinstance(parsed, Watermark):
            watermark = parsed
        elif isinstance(parsed, PrimaryKey):
            primary_key = parsed
        else:
            columns.append(parsed)
    return columns, watermark, primary_key


def _schema(src: TokenReader, items: list[list[Token]], *, whole: bool = True) -> Schema:
    """``whole``: the list is all the table's columns (not those added to a LIKE's)."""
    columns, watermark, key = read_items(src, items)
    if watermark is not None:
        if whole:
            _check_watermark_column(columns, watermark)
        watermark.delay  # noqa: B018 - validates the expression now, not at query time
    if key is None:
        return Schema(tuple(columns), watermark)
    return Schema(tuple(columns), watermark, key.columns, constraint=key.name)


def parse_schema(text: str) -> Schema:
    """The parenthesised column list ``text`` of a CREATE TABLE (AS)."""
    src = TokenReader(text, "CREATE TABLE")
    items = src.group()
    if not src.at_end:
        raise SqlParseError("unexpected input after the column list in CREATE TABLE")
    names = (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER)
    if items and all(len(item) == 1 and item[0].kind in names for item in items):
        return Schema(tuple(Column(unquote(item[0])) for item in items), names_only=True)
    return _schema(src, items)
