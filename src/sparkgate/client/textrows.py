"""Arrow pages to PLAIN_TEXT rows: what the embedded executor and the REST executor's
Arrow transport share, so both print exactly the characters Flink's PLAIN_TEXT has."""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from sparkgate.api.types import (
    ArrayType,
    LocalZonedTimestampType,
    LogicalType,
    MapType,
    MultisetType,
    ResultSchema,
    RowType,
)
from sparkgate.client.executor import RenderError, TextRow
from sparkgate.codec.rows import plain_text_column

__all__ = ["batches_to_text", "needs_time_zone", "render_batches"]


def needs_time_zone(logical_type: LogicalType) -> bool:
    """Whether printing values of this type depends on the session time zone."""
    if isinstance(logical_type, LocalZonedTimestampType):
        return True
    if isinstance(logical_type, (ArrayType, MultisetType)):
        return needs_time_zone(logical_type.element_type)
    if isinstance(logical_type, MapType):
        return needs_time_zone(logical_type.key_type) or needs_time_zone(logical_type.value_type)
    if isinstance(logical_type, RowType):
        return any(needs_time_zone(f.type) for f in logical_type.fields)
    return False


def batches_to_text(
    batches: Iterable[pa.RecordBatch], schema: ResultSchema, time_zone: str
) -> list[TextRow]:
    """Every row of ``batches`` as PLAIN_TEXT fields (the first ``len(schema)`` columns)."""
    rows: list[TextRow] = []
    for batch in batches:
        if not batch.num_rows:
            continue
        columns = [
            plain_text_column(batch.column(i), column.logical_type, time_zone)
            for i, column in enumerate(schema.columns)
        ]
        if columns:
            rows.extend(list(row) for row in zip(*columns, strict=True))
        else:
            rows.extend([] for _ in range(batch.num_rows))
    return rows


def render_batches(
    batches: Iterable[pa.RecordBatch], schema: ResultSchema, time_zone: str
) -> list[TextRow]:
    """:func:`batches_to_text`, any failure a :class:`RenderError` (the statement fails,
    the client goes on)."""
    try:
        return batches_to_text(batches, schema, time_zone)
    except Exception as exc:  # whatever a value did, it must not end the client
        raise RenderError(
            f"Could not show the values of this result: {type(exc).__name__}: {exc}"
        ) from exc
