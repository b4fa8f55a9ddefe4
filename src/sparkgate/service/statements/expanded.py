"""A view's query expanded as Flink's SHOW CREATE VIEW prints it.

Flink keeps a view's query as its validator expanded it: every table by its
full name, every column by its table's alias (`` `orders`.`user` ``, the
table then named ``FROM `c`.`db`.`orders` AS `orders```), one clause a line;
``*`` stays ``*`` (and a table only read by it keeps no alias it was not
given). The structure comes from Spark's parser (the parsed plan of the
view's text); each expression is its own text, re-spelled as Flink prints it
(:func:`~sparkgate.sql.flink_expression.flink_expression`).

Expanded: SELECT blocks (a select list, ``WHERE``, ``GROUP BY``) over one table
or one subquery in parentheses, nested to any depth. Anything else (joins, set
operations, CTEs, DISTINCT, ORDER BY, LIMIT, HAVING, grouping sets, ``GROUP BY
ALL``, ``* EXCEPT``, ``STREAM(t)``, lambdas, subqueries in expressions) is not:
the caller prints the query as written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sparkgate.service.catalog import quote_name
from sparkgate.service.spark.plans import parse_plan, scala_strings
from sparkgate.sql.flink_expression import flink_expression
from sparkgate.sql.lexer import TokenKind, tokenize
from sparkgate.sql.quoting import quote_identifier

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["expanded_query"]

#: A table's full name as printed, and its columns, from the name as written.
TableLookup = Callable[[tuple[str, ...]], tuple[tuple[str, ...], Sequence[str]]]


_GROUPING_SETS = frozenset({"Rollup", "Cube", "GroupingSets"})


class _NotExpanded(Exception):
    """A form this module does not expand."""


@dataclass(frozen=True)
class _Block:
    text: str
    names: tuple[str, ...]  # the output columns' names


def expanded_query(spark: SparkSession, query: str, tables: TableLookup) -> str | None:
    """``query`` expanded as Flink prints a view's query; None when it has a form
    that is not expanded, or does not parse."""
    try:
        return _Expander(query, tables).block(parse_plan(spark, query)).text
    except Exception:  # a form not expanded, Spark's parse error, a table gone
        return None


def _kind(node: Any) -> str:
    return str(node.nodeName())


def _lower(parts: Sequence[str]) -> list[str]:
    return [p.lower() for p in parts]


def _attribute(node: Any) -> tuple[str, ...]:
    """A column reference's name parts; () for any other expression."""
    return scala_strings(node.nameParts()) if _kind(node) == "UnresolvedAttribute" else ()


class _Expander:
    def __init__(self, query: str, tables: TableLookup) -> None:
        self.query = query
        self.tables = tables

    def block(self, node: Any) -> _Block:
        kind = _kind(node)
        if kind == "Project":
            items, groups = node.projectList(), None
        elif kind == "Aggregate":
            items, groups = node.aggregateExpressions(), node.groupingExpressions()
        else:
            raise _NotExpanded(kind)
        child = node.child()
        where = None
        if _kind(child) == "Filter":
            where, child = child.condition(), child.child()
        source, alias, columns, named = self.source(child)
        by_name = {c.lower(): c for c in columns}
        qualified: list[bool] = []

        def qualify(name: str) -> str | None:
            found = by_name.get(name.lower())
            if found is None:
                return None
            qualified.append(True)
            return quote_name((alias, found))

        texts: list[str] = []
        names: list[str] = []
        for i in range(items.size()):
            item = items.apply(i)
            item_kind = _kind(item)
            if item_kind == "UnresolvedStar":
                target = item.target()
                if target.isDefined() and _lower(scala_strings(target.get())) != [alias.lower()]:
                    raise _NotExpanded("a star of another table")
                texts.append(f"{quote_identifier(alias)}.*" if target.isDefined() else "*")
                qualified.extend([True] if target.isDefined() else [])
                names += columns
            elif item_kind == "Alias":
                name = str(item.name())
                expression = self.expression(item.child(), qualify)
                texts.append(f"{expression} AS {quote_identifier(name)}")
                names.append(name)
            elif "Star" in item_kind:
                raise _NotExpanded(item_kind)  # * EXCEPT (...), * REPLACE (...)
            else:
                expression = item.child() if item_kind == "UnresolvedAlias" else item
                texts.append(self.expression(expression, qualify))
                # A column keeps its name; an expression is named as Flink names it.
                parts = _attribute(expression)
                # Calcite numbers by output column, after * is expanded.
                unnamed = f"EXPR${len(names)}"
                names.append(by_name.get(parts[-1].lower(), parts[-1]) if parts else unnamed)
        condition = None if where is None else self.expression(where, qualify)
        keys: list[str] = []
        if groups is not None and groups.size():
            grouped = [groups.apply(i) for i in range(groups.size())]
            if any(_kind(g) in _GROUPING_SETS for g in grouped):
                raise _NotExpanded("grouping sets")  # their text is the whole clause
            if any(_kind(g) == "Literal" or _lower(_attribute(g)) == ["all"] for g in grouped):
                raise _NotExpanded("GROUP BY ALL or a position")
            keys = [self.expression(g, qualify) for g in grouped]
        if named or qualified:
            source += f" AS {quote_identifier(alias)}"
        text = f"SELECT {', '.join(texts)}\nFROM {source}"
        if condition is not None:
            text += f"\nWHERE {condition}"
        if keys:
            text += f"\nGROUP BY {', '.join(keys)}"
        return _Block(text, tuple(names))

    def source(self, node: Any) -> tuple[str, str, Sequence[str], bool]:
        """The FROM clause's text without its alias, the alias, its columns, and
        whether the alias is printed anyway (written, or a subquery's)."""
        alias = None
        if _kind(node) == "SubqueryAlias":
            alias, node = str(node.alias()), node.child()
        if _kind(node) == "UnresolvedRelation":
            if node.isStreaming():
                raise _NotExpanded("STREAM(t)")  # the expansion would read it in batch
            written = scala_strings(node.multipartIdentifier())
            full, columns = self.tables(written)
            return quote_name(full), alias or written[-1], columns, alias is not None
        if alias is None:
            raise _NotExpanded(_kind(node))
        inner = self.block(node)
        return f"({inner.text})", alias, inner.names, True

    def expression(self, node: Any, qualify: Callable[[str], str | None]) -> str:
        origin = node.origin()
        if not (origin.startIndex().isDefined() and origin.stopIndex().isDefined()):
            raise _NotExpanded("an expression without its text")
        text = self.query[origin.startIndex().get() : origin.stopIndex().get() + 1]
        tokens = tokenize(text)
        if any(t.kind is TokenKind.WORD and t.upper == "SELECT" for t in tokens):
            raise _NotExpanded("a subquery in an expression")
        if any(t.text == "->" for t in tokens):
            raise _NotExpanded("a lambda")  # its parameters are not the table's columns
        return flink_expression(text, qualify)
