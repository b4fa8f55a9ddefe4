"""Flink's ``ALTER TABLE`` of connector tables: read the statement, apply it to
the stored definition.

The forms are Flink's (``SET ('k' = 'v')``, ``RESET ('k')``, ``ADD``/``MODIFY``
a column, a list of them, the watermark or the primary key, with ``FIRST`` or
``AFTER c``, ``DROP`` a column, a list, ``WATERMARK`` or ``PRIMARY KEY``,
``RENAME c TO d`` and ``RENAME TO t``). Spark's own ALTER TABLE forms
(``ADD COLUMNS``, ``SET TBLPROPERTIES``, partitions, ...) are not read here:
:func:`parse_alter_table` returns None for them and Spark runs them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sparkgate.api.errors import SqlParseError
from sparkgate.service.streaming.ddl import (
    Column,
    PrimaryKey,
    TableDefinition,
    Watermark,
    read_items,
)
from sparkgate.sql.lexer import Token, TokenKind, unquote
from sparkgate.sql.reader import TokenReader

__all__ = ["Placed", "TableAlteration", "apply_alteration", "parse_alter_table"]

# After ADD / DROP these words start Spark's forms, not Flink's.
_SPARK_ADD = frozenset({"COLUMN", "COLUMNS", "PARTITION", "IF"})
_SPARK_DROP = frozenset({"COLUMN", "COLUMNS", "PARTITION", "IF"})


@dataclass(frozen=True)
class Placed:
    """A column added or modified, and where: ``first``, after ``after``, or as it was
    (MODIFY) / last (ADD)."""

    column: Column
    first: bool = False
    after: str | None = None


@dataclass(frozen=True)
class TableAlteration:
    """One ``ALTER TABLE`` of Flink's forms; exactly one change is set."""

    name: tuple[str, ...]
    if_exists: bool = False
    rename_to: tuple[str, ...] | None = None
    set_options: Mapping[str, str] | None = field(default=None, hash=False)
    reset_options: tuple[str, ...] | None = None
    modify: bool = False  # ADD (False) or MODIFY (True) of what follows
    columns: tuple[Placed, ...] = ()
    watermark: Watermark | None = None
    primary_key: PrimaryKey | None = None
    drop_columns: tuple[str, ...] = ()
    drop_watermark: bool = False
    drop_primary_key: bool = False
    rename_column: tuple[str, str] | None = None

    @property
    def changes_schema(self) -> bool:
        return bool(
            self.columns
            or self.watermark
            or self.primary_key is not None
            or self.drop_columns
            or self.drop_watermark
            or self.drop_primary_key
            or self.rename_column
        )


def parse_alter_table(text: str) -> TableAlteration | None:
    """The alteration if ``text`` is one of Flink's ALTER TABLE forms, else None."""
    src = TokenReader(text, "ALTER TABLE")
    if not src.accept("ALTER", "TABLE"):
        return None
    if_exists = src.accept("IF", "EXISTS")
    try:
        name = src.name()
    except SqlParseError:
        return None
    base = TableAlteration(name, if_exists)
    verb = src.word()
    src.i += 1
    if verb == "RENAME":
        if src.accept("TO"):
            return _at_end(src, dataclasses.replace(base, rename_to=src.name()))
        if src.word() == "COLUMN":
            return None  # Spark's RENAME COLUMN
        old = src.identifier()
        if not src.accept("TO"):
            raise SqlParseError("expected RENAME column TO new_name in ALTER TABLE")
        return _at_end(src, dataclasses.replace(base, rename_column=(old, src.identifier())))
    if verb in ("SET", "RESET") and src.kind() is TokenKind.LPAREN:
        items = src.group()
        if verb == "RESET":
            if not items:
                raise SqlParseError("ALTER TABLE RESET does not support empty key")
            keys = tuple(_key(src, item) for item in items)
            return _at_end(src, dataclasses.replace(base, reset_options=keys))
        options: dict[str, str] = {}
        for item in items:
            if len(item) != 3 or item[1].kind is not TokenKind.EQUALS:
                raise SqlParseError("SET expects 'key' = 'value' pairs in ALTER TABLE")
            options[_key(src, item[:1])] = unquote(item[2])
        return _at_end(src, dataclasses.replace(base, set_options=MappingProxyType(options)))
    if verb in ("ADD", "MODIFY") and (verb == "MODIFY" or src.word() not in _SPARK_ADD):
        if verb == "ADD" and src.word() == "CONSTRAINT" and "PRIMARY" not in _words(src):
            return None  # Spark's CHECK constraints
        items = src.group() if src.kind() is TokenKind.LPAREN else [src.tokens[src.i :]]
        src.i = len(src.tokens)
        return _schema_change(src, base, items, modify=verb == "MODIFY")
    if verb == "DROP" and src.word() not in _SPARK_DROP:
        if src.accept("WATERMARK"):
            return _at_end(src, dataclasses.replace(base, drop_watermark=True))
        if src.accept("PRIMARY", "KEY"):
            return _at_end(src, dataclasses.replace(base, drop_primary_key=True))
        if src.word() == "CONSTRAINT":
            src.i += 1
            src.identifier()  # Flink's only constraint is the primary key
            return _at_end(src, dataclasses.replace(base, drop_primary_key=True))
        if src.kind() is TokenKind.LPAREN:
            names = tuple(_single_name(src, item) for item in src.group())
        else:
            names = (src.identifier(),)
        return _at_end(src, dataclasses.replace(base, drop_columns=names))
    return None


def _words(src: TokenReader) -> set[str]:
    return {t.upper for t in src.tokens[src.i :] if t.kind is TokenKind.WORD}


def _at_end(src: TokenReader, alteration: TableAlteration) -> TableAlteration:
    if not src.at_end:
        raise SqlParseError("unexpected input at the end of ALTER TABLE")
    return alteration


def _key(src: TokenReader, item: list[Token]) -> str:
    if len(item) == 1 and item[0].kind is TokenKind.STRING:
        return unquote(item[0])
    return src.source(item)


def _single_name(src: TokenReader, item: list[Token]) -> str:
    if len(item) != 1 or item[0].kind not in (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER):
        raise SqlParseError("DROP expects column names in ALTER TABLE")
    return unquote(item[0])


def _schema_change(
    src: TokenReader, base: TableAlteration, items: list[list[Token]], *, modify: bool
) -> TableAlteration:
    places: list[tuple[bool, str | None]] = []  # FIRST / AFTER of each column, in order
    bare: list[list[Token]] = []
    for item in items:
        if not item:
            raise SqlParseError("expected a column, WATERMARK or PRIMARY KEY in ALTER TABLE")
        first, after = False, None
        if item[-1].kind is TokenKind.WORD and item[-1].upper == "FIRST":
            first, item = True, item[:-1]
        elif len(item) > 2 and item[-2].kind is TokenKind.WORD and item[-2].upper == "AFTER":
            after, item = unquote(item[-1]), item[:-2]
        if item[0].upper not in ("WATERMARK", "PRIMARY", "CONSTRAINT"):
            places.append((first, after))
        bare.append(item)
    columns, watermark, primary_key = read_items(src, bare)
    placed = tuple(
        Placed(column, first, after) for column, (first, after) in zip(columns, places, strict=True)
    )
    return dataclasses.replace(
        base, modify=modify, columns=placed, watermark=watermark, primary_key=primary_key
    )


def apply_alteration(definition: TableDefinition, change: TableAlteration) -> TableDefinition:
    """The definition after ``change`` (its rename aside); raises ``SqlParseError``
    naming what does not fit (a column that is not there, or already is)."""
    if change.set_options is not None:
        options = {**definition.options, **change.set_options}
        return dataclasses.replace(definition, options=options)
    if change.reset_options is not None:
        if "connector" in change.reset_options:
            raise SqlParseError("ALTER TABLE cannot RESET the 'connector' option")
        options = {k: v for k, v in definition.options.items() if k not in change.reset_options}
        return dataclasses.replace(definition, options=options)
    columns = list(definition.columns)
    watermark, key = definition.watermark, definition.primary_key
    constraint = definition.constraint

    def index(name: str) -> int:
        for i, column in enumerate(columns):
            if column.name.lower() == name.lower():
                return i
        raise SqlParseError(f"The column `{name}` does not exist in the table.")

    for placed in change.columns:
        name = placed.column.name
        if change.modify:
            at = index(name)
            columns.pop(at)
        elif any(c.name.lower() == name.lower() for c in columns):
            raise SqlParseError(f"The column `{name}` already exists in the table.")
        else:
            at = len(columns)
        if placed.first:
            at = 0
        elif placed.after is not None:
            at = index(placed.after) + 1
        columns.insert(at, placed.column)
    if change.watermark is not None:
        if change.modify == (watermark is None):
            raise SqlParseError(
                "The table has no watermark to modify."
                if change.modify
                else "The table already has a watermark: MODIFY it or DROP it first."
            )
        watermark = change.watermark
    if change.primary_key is not None:
        if change.modify == (not key):
            raise SqlParseError(
                "The table has no primary key to modify."
                if change.modify
                else "The table already has a primary key: MODIFY it or DROP it first."
            )
        for name in change.primary_key.columns:
            index(name)
        key, constraint = change.primary_key
    for name in change.drop_columns:
        at = index(name)
        dropped = columns.pop(at).name
        if watermark is not None and watermark.column.lower() == dropped.lower():
            raise SqlParseError(f"The column `{dropped}` is used by the watermark: drop it first.")
        if any(k.lower() == dropped.lower() for k in key):
            raise SqlParseError(f"The column `{dropped}` is in the primary key: drop it first.")
    if change.drop_watermark:
        if watermark is None:
            raise SqlParseError("The table has no watermark to drop.")
        watermark = None
    if change.drop_primary_key:
        if not key:
            raise SqlParseError("The table has no primary key to drop.")
        key, constraint = (), None
    if change.rename_column is not None:
        old, new = change.rename_column
        at = index(old)
        if any(c.name.lower() == new.lower() for c in columns):
            raise SqlParseError(f"The column `{new}` already exists in the table.")
        columns[at] = dataclasses.replace(columns[at], name=new)
        key = tuple(new if k.lower() == old.lower() else k for k in key)
        if watermark is not None and watermark.column.lower() == old.lower():
            raise SqlParseError(f"The column `{old}` is used by the watermark: drop it first.")
    if not columns:
        raise SqlParseError("A table needs at least one column.")
    if watermark is not None:
        index(watermark.column)
        watermark.delay  # noqa: B018 - validates the expression now
    return dataclasses.replace(
        definition,
        columns=tuple(columns),
        watermark=watermark,
        primary_key=key,
        constraint=constraint,
    )
