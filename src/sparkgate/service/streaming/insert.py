"""``INSERT INTO|OVERWRITE [TABLE] t [PARTITION (k = v, ...)] [(c, ...)] <query>``.

The gateway writes INSERTs into connector tables and streaming INSERTs itself,
so it takes apart what Spark would otherwise: the target, the static partition
values and the column list. As in Flink and Spark, the query's columns go by
position to the listed columns (without a list, to every column that has no
static value); static partition columns get their value, other columns NULL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sparkgate.api.catalog import quote_identifier
from sparkgate.api.errors import ExecutionError
from sparkgate.sql.lexer import (
    Token,
    TokenKind,
    dotted_name,
    group_items,
    statement_tokens,
    unquote,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["InsertStatement", "align", "parse_insert"]

_QUERY_STARTS = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "FROM"})


@dataclass(frozen=True)
class InsertStatement:
    target: tuple[str, ...]
    overwrite: bool
    query: str
    # Static partition values as SQL expressions; None marks a dynamic partition column.
    partition: Mapping[str, str | None] = field(default_factory=dict)
    columns: tuple[str, ...] | None = None


def _is_query_start(tokens: list[Token], i: int) -> bool:
    while i < len(tokens) and tokens[i].kind is TokenKind.LPAREN:
        i += 1
    return i < len(tokens) and tokens[i].upper in _QUERY_STARTS


def parse_insert(text: str) -> InsertStatement | None:
    """The parts of an INSERT; None for Spark's other forms (BY NAME, REPLACE WHERE,
    IF NOT EXISTS, INSERT OVERWRITE DIRECTORY), which Spark runs as written."""
    tokens = statement_tokens(text)
    if (
        len(tokens) < 4
        or tokens[0].upper != "INSERT"
        or tokens[1].upper not in ("INTO", "OVERWRITE")
    ):
        return None
    overwrite = tokens[1].upper == "OVERWRITE"
    i = 3 if tokens[2].upper == "TABLE" else 2
    target, i = dotted_name(tokens, i)
    if not target or target[0].upper() == "DIRECTORY" or i >= len(tokens):
        return None
    partition: dict[str, str | None] = {}
    if tokens[i].upper == "PARTITION":
        if i + 1 >= len(tokens) or tokens[i + 1].kind is not TokenKind.LPAREN:
            return None
        items, i = group_items(tokens, i + 1)
        for item in items:
            key = unquote(item[0])
            if len(item) == 1:
                partition[key] = None
            elif len(item) > 2 and item[1].kind is TokenKind.EQUALS:
                partition[key] = text[item[2].start : item[-1].end]
            else:
                return None
    columns: tuple[str, ...] | None = None
    if i < len(tokens) and tokens[i].kind is TokenKind.LPAREN and not _is_query_start(tokens, i):
        items, i = group_items(tokens, i)
        if any(len(item) != 1 for item in items):
            return None
        columns = tuple(unquote(item[0]) for item in items)
    if i >= len(tokens) or not _is_query_start(tokens, i):
        return None
    return InsertStatement(
        target, overwrite, text[tokens[i].start : tokens[-1].end], partition, columns
    )


def align(
    frame: DataFrame, insert: InsertStatement, columns: Sequence[tuple[str, str]], table: str
) -> DataFrame:
    """``frame`` as the target's rows: its ``(name, Spark type)`` columns, in order."""
    by_lower = {name.lower(): name for name, _ in columns}
    for name in [*insert.partition, *(insert.columns or ())]:
        if name.lower() not in by_lower:
            raise ExecutionError(
                f"Unknown target column '{name}' in INSERT INTO {table}; columns: "
                + ", ".join(by_lower.values())
            )
    static = {k.lower(): v for k, v in insert.partition.items() if v is not None}
    listed = (
        [c.lower() for c in insert.columns]
        if insert.columns is not None
        else [name.lower() for name, _ in columns if name.lower() not in static]
    )
    if len(frame.columns) != len(listed):
        raise ExecutionError(
            f"Column count mismatch: the query has {len(frame.columns)} columns, the INSERT "
            f"into {table} takes {len(listed)} ({', '.join(by_lower[c] for c in listed)})"
        )
    source = dict(zip(listed, frame.columns, strict=True))
    exprs = []
    for name, spark_type in columns:
        key = name.lower()
        if key in static:
            value = static[key]
        elif key in source:
            value = quote_identifier(source[key])
        else:
            value = "NULL"
        exprs.append(f"CAST({value} AS {spark_type}) AS {quote_identifier(name)}")
    return frame.selectExpr(*exprs)
