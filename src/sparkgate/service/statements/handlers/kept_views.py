"""Views a catalog's objects keep (``generic_in_memory``): their bodies, and
Flink's ``ALTER VIEW`` of them (Spark's catalog there has no views).

See :mod:`sparkgate.service.catalogs.objects`."""

from __future__ import annotations

from collections.abc import Sequence

from sparkgate.api.errors import ExecutionError
from sparkgate.service.catalog import quote_name
from sparkgate.service.catalogs import objects
from sparkgate.service.catalogs.spark import qualified_name
from sparkgate.service.spark.jobs import invalid, to_execution_error
from sparkgate.service.spark.plans import (
    function_spans,
    parse_plan,
    read_spans,
    scala_strings,
    unnamed_columns,
)
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import SparkCommand
from sparkgate.service.statements.metadata import flink_shapes
from sparkgate.service.streaming import resolve

__all__ = ["alter_kept_view", "temporary_view", "view_body"]


def temporary_view(context: StatementContext, name: str) -> bool:
    """A temporary view (not a temporary connector table) of that name exists."""
    if name in context.session.context.temporary_tables:
        return False
    spark = context.session.spark
    return bool(spark._jsparkSession.sessionState().catalog().getTempView(name).isDefined())


def view_body(
    context: StatementContext,
    home: tuple[str, str],
    query: str,
    columns: Sequence[str],
    comment: str | None,
) -> objects.KeptView:
    """What is kept of a view of ``query`` made in catalog and database ``home``:
    its query with every table named in full, its columns its query's (or
    ``columns``, as many)."""
    session = context.session
    spark = session.spark
    text = _qualified_query(context, query)
    try:
        with resolve.resolved(
            spark, text, temporary=session.context.temporary_tables, streaming=False, trigger_s=1.0
        ) as resolution:
            query_columns = [str(n) for n in spark.sql(resolution.text).schema.fieldNames()]
        unnamed = unnamed_columns(spark, query) if flink_shapes(session) else {}
    except ExecutionError:
        raise
    except Exception as exc:
        raise to_execution_error(exc) from exc
    named = list(columns) or [unnamed.get(i, n) for i, n in enumerate(query_columns)]
    if len(named) != len(query_columns):
        raise invalid(
            f"The view's {len(named)} column names do not match its query's "
            f"{len(query_columns)} columns"
        )
    return objects.KeptView(text, home, tuple(named), tuple(query_columns), query, comment)


def _qualified_query(context: StatementContext, query: str) -> str:
    """``query`` with the tables it reads, and the functions of catalogs' objects
    it calls, named in full (catalog, database, name), so that a view reads and
    calls the same from any session; a session's temporary views keep their
    one-part names."""
    spark = context.session.spark
    spans: list[tuple[int, int, str]] = []
    for span in read_spans(spark, query):
        read = span.read
        if read.inline or (len(read.name) == 1 and temporary_view(context, read.name[0])):
            continue
        named = quote_name(qualified_name(spark, read.name))
        spans.append((span.start, span.end, f"STREAM({named})" if read.stream else named))
    functions = resolve.kept_functions(spark, query)
    if functions:
        for call in function_spans(spark, query):
            kept = functions.get(tuple(p.lower() for p in call.name))
            if kept is not None:
                spans.append((call.start, call.end, quote_name(kept[0])))
    pieces, last = [], 0
    for start, end, named in sorted(spans):
        pieces += [query[last:start], named]
        last = end
    return "".join(pieces) + query[last:]


def alter_kept_view(context: StatementContext, statement: SparkCommand) -> bool:
    """``ALTER VIEW v RENAME TO w`` or ``ALTER VIEW v AS query`` of a kept view:
    whether it was one (and is changed)."""
    if statement.keywords[:2] != ("ALTER", "VIEW"):
        return False
    spark = context.session.spark
    try:
        plan = parse_plan(spark, statement.text)
        kind = str(plan.nodeName())
        name = scala_strings(plan.child().multipartIdentifier())
    except Exception:
        return False  # Spark says what is wrong with it
    if kind not in ("RenameTable", "AlterViewAs"):
        return False
    located = objects.locate(spark, name)
    if located is None:
        return False
    kept, (catalog, database, view) = located
    found = kept.get(database, view)
    if found is None or found.kind != "view":
        raise invalid(f"View with identifier '{catalog}.{database}.{view}' does not exist.")
    stored = objects.KeptView.from_json(found.body)
    if kind == "AlterViewAs":
        query = str(plan.originalText())
        body = view_body(context, (catalog, database), query, (), stored.comment)
        kept.put(objects.CatalogObject(database, found.name, "view", body.to_json()))
        return True
    new = scala_strings(plan.newName())
    # A one-part new name stays in the view's database, as Spark's RENAME TO.
    target = (catalog, database, new[0]) if len(new) == 1 else qualified_name(spark, new)
    if len(target) != 3 or target[0].lower() != catalog.lower():
        raise invalid(f"A view of catalog {catalog} is renamed within {catalog}")
    new_database, new_view = target[1], target[2]
    taken = kept.get(new_database, new_view) is not None or spark.catalog.tableExists(
        quote_name(target)
    )
    if taken:
        raise invalid(
            f"Table (or view) {new_database}.{new_view} already exists in Catalog {catalog}.",
            kind="TableAlreadyExistException",
        )
    kept.put(objects.CatalogObject(new_database, new_view, "view", found.body))
    kept.remove(database, view)
    return True
