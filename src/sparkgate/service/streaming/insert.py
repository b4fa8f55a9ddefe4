"""``INSERT INTO|OVERWRITE [TABLE] t [PARTITION (k = v, ...)] [(c, ...)] <query>``.

The gateway writes INSERTs into connector tables and streaming INSERTs itself,
so it takes apart what Spark would otherwise, with Spark's parser: the target,
the static partition values (Spark's string form, as a SQL string literal) and
the column list. As in Flink and Spark, the query's columns go by
position to the listed columns (without a list, to every column that has no
static value); static partition columns get their value, other columns NULL.
An OPTIONS hint after the target's name (Flink's dynamic table options,
``INSERT INTO t /*+ OPTIONS('k' = 'v') */ ...``) is the target's options for
this INSERT.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sparkgate.api.catalog import quote_identifier
from sparkgate.api.errors import ExecutionError, SqlParseError
from sparkgate.service.spark.plans import parse_statement
from sparkgate.service.streaming.changelog import kind_of
from sparkgate.sql.dynamic_options import hint_after, without_hints

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["InsertStatement", "align", "parse_insert"]


@dataclass(frozen=True)
class InsertStatement:
    target: tuple[str, ...]
    overwrite: bool
    query: str
    # Static partition values as SQL expressions; None marks a dynamic partition column.
    partition: Mapping[str, str | None] = field(default_factory=dict)
    columns: tuple[str, ...] | None = None
    # The target's OPTIONS hint: its options for this INSERT.
    options: Mapping[str, str] = field(default_factory=dict)
    # The statement without OPTIONS hints, as Spark runs an INSERT of its own
    # tables (their options are not the gateway's to change: a hint changes nothing).
    spark_text: str = ""


def parse_insert(text: str, spark: SparkSession) -> InsertStatement | None:
    """The parts of an INSERT, by Spark's parser; None for Spark's other forms (BY NAME,
    REPLACE WHERE, IF NOT EXISTS, INSERT OVERWRITE DIRECTORY), which Spark runs as written."""
    blanked, hints = without_hints(text)
    plan = parse_statement(spark, blanked)
    insert = plan.insert if plan is not None else None
    if insert is None or insert.by_name or insert.replace_where or insert.if_not_exists:
        return None
    hint = hint_after(text, insert.target_end, hints)
    if any(s < insert.query_start and hints[s] is not hint for s in hints):
        raise SqlParseError(
            "An INSERT's OPTIONS hint follows its target table's name: "
            "INSERT INTO t /*+ OPTIONS('key' = 'value') */ ..."
        )
    query = text[insert.query_start :].rstrip().rstrip(";").rstrip()
    return InsertStatement(
        insert.target,
        insert.overwrite,
        query,
        insert.partition,
        insert.columns,
        hint.options,
        blanked,
    )


def align(
    frame: DataFrame, insert: InsertStatement, columns: Sequence[tuple[str, str]], table: str
) -> DataFrame:
    """``frame`` as the target's rows: its ``(name, Spark type)`` columns, in order
    (a changelog's kind column stays last)."""
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
    kind = kind_of(frame)
    width = len(frame.columns) - len(kind)
    if width != len(listed):
        raise ExecutionError(
            f"Column count mismatch: the query has {width} columns, the INSERT "
            f"into {table} takes {len(listed)} ({', '.join(by_lower[c] for c in listed)})"
        )
    # By position, as Spark inserts: a query may name two columns alike (``id`` and
    # ``CAST(id AS …)`` are both ``id``), which a lookup by name finds ambiguous.
    positional = [f"__sparkgate_c{i}" for i in range(width)]
    frame = frame.toDF(*positional, *kind)
    source = dict(zip(listed, positional, strict=True))
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
    return frame.selectExpr(*exprs, *kind)
