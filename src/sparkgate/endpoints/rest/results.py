"""One fetched page as a response: Flink's JSON body, or sparkgate's Arrow stream.

The JSON body's key order is the one on Flink's wire (see the transcripts):
``resultType, isQueryResult, jobID?, resultKind, results{columns, rowFormat,
data}, nextResultUri?``; NOT_READY bodies hold only ``resultType`` and
``nextResultUri``.

``rowFormat=ARROW`` answers ``application/vnd.apache.arrow.stream``: the page's
record batches as one IPC stream, the page's facts in ``X-Sparkgate-*``
headers, and the Flink column JSON in the header and the schema metadata.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from starlette.responses import Response

from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import ResultSet, ResultType, RowKind
from sparkgate.api.types import ResultSchema
from sparkgate.codec.arrow_wire import (
    ARROW_MEDIA_TYPE,
    ARROW_ROW_FORMAT,
    COLUMNS_HEADER,
    COLUMNS_METADATA_KEY,
    IS_QUERY_RESULT_HEADER,
    JOB_ID_HEADER,
    NEXT_RESULT_URI_HEADER,
    RESULT_KIND_HEADER,
    RESULT_TYPE_HEADER,
    ROW_KIND_COLUMN,
)
from sparkgate.codec.json_text import encode_json_data
from sparkgate.codec.rows import encode_plain_text_rows
from sparkgate.endpoints.rest.responses import json_response
from sparkgate.endpoints.rest.routes import RestApiVersion

__all__ = [
    "ARROW_MEDIA_TYPE",
    "COLUMNS_METADATA_KEY",
    "ROW_KIND_COLUMN",
    "RowFormat",
    "needs_time_zone",
    "next_result_uri",
    "render_page",
    "result_body",
]


_LTZ = "TIMESTAMP_WITH_LOCAL_TIME_ZONE"


class RowFormat(enum.Enum):
    JSON = "JSON"
    PLAIN_TEXT = "PLAIN_TEXT"
    ARROW = ARROW_ROW_FORMAT
    """sparkgate's extension: an Arrow IPC stream instead of a JSON body."""


def next_result_uri(
    version: RestApiVersion,
    session: SessionHandle,
    operation: OperationHandle,
    token: int,
    row_format: RowFormat,
) -> str:
    """Flink's form: V1 has no rowFormat; later versions repeat the one asked for."""
    uri = f"{version.url_prefix}/sessions/{session}/operations/{operation}/result/{token}"
    if version is RestApiVersion.V1:
        return uri
    return f"{uri}?rowFormat={row_format.value}"


def _slices(page: ResultSet) -> Iterator[tuple[pa.RecordBatch, Sequence[RowKind] | None]]:
    offset = 0
    for batch in page.batches:
        kinds = None
        if page.kinds is not None:
            kinds = page.kinds[offset : offset + batch.num_rows]
        offset += batch.num_rows
        yield batch, kinds


def _has_ltz(logical_type_json: Mapping[str, Any]) -> bool:
    if logical_type_json.get("type") == _LTZ:
        return True
    for value in logical_type_json.values():
        if isinstance(value, Mapping) and _has_ltz(value):
            return True
        if isinstance(value, list) and any(isinstance(v, Mapping) and _has_ltz(v) for v in value):
            return True
    return False


def needs_time_zone(schema: ResultSchema) -> bool:
    """Only TIMESTAMP_LTZ values depend on the session's zone."""
    return any(_has_ltz(c.logical_type.to_json()) for c in schema)


def result_body(
    page: ResultSet,
    row_format: RowFormat,
    next_uri: str | None,
    time_zone: str | None = None,
) -> dict[str, Any]:
    """The JSON body of one page, keys in Flink's wire order.

    For ``rowFormat=JSON`` the ``data`` value is an :class:`orjson.Fragment`
    (the rows already serialised, see :mod:`sparkgate.codec.json_text`), so
    the body must be written with ``orjson.dumps``.
    """
    if page.result_type is ResultType.NOT_READY:
        return {"resultType": page.result_type.value, "nextResultUri": next_uri}
    data: Any
    if row_format is RowFormat.PLAIN_TEXT:
        data = []
        for batch, kinds in _slices(page):
            data += encode_plain_text_rows(batch, page.schema, kinds, time_zone=time_zone or "UTC")
    else:
        data = encode_json_data(page.batches, page.schema, page.kinds, time_zone=time_zone)
    body: dict[str, Any] = {
        "resultType": page.result_type.value,
        "isQueryResult": page.is_query_result,
    }
    if page.job_id is not None:
        body["jobID"] = page.job_id
    body["resultKind"] = page.result_kind.value
    body["results"] = {
        "columns": page.schema.to_json(),
        "rowFormat": row_format.value,
        "data": data,
    }
    if next_uri is not None:
        body["nextResultUri"] = next_uri
    return body


def _arrow_stream(page: ResultSet) -> bytes:
    columns_json = json.dumps(page.schema.to_json()).encode()
    batches = []
    for batch, kinds in _slices(page):
        if page.kinds is not None:
            short = pa.array([k.value for k in (kinds or ())], type=pa.string())
            batch = batch.append_column(ROW_KIND_COLUMN, short)
        batches.append(batch)
    if batches:
        schema = batches[0].schema
    else:
        # No rows, no Arrow types to copy: the names with the null type; the
        # real types are in the column JSON.
        schema = pa.schema([pa.field(name, pa.null()) for name in page.schema.names])
    schema = schema.with_metadata({**(schema.metadata or {}), COLUMNS_METADATA_KEY: columns_json})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema) as writer:
        for batch in batches:
            writer.write_batch(batch.replace_schema_metadata(schema.metadata))
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def _arrow_response(page: ResultSet, next_uri: str | None) -> Response:
    headers = {RESULT_TYPE_HEADER: page.result_type.value}
    if next_uri is not None:
        headers[NEXT_RESULT_URI_HEADER] = next_uri
    body = b""
    if page.result_type is not ResultType.NOT_READY:
        headers[RESULT_KIND_HEADER] = page.result_kind.value
        headers[IS_QUERY_RESULT_HEADER] = "true" if page.is_query_result else "false"
        if page.job_id is not None:
            headers[JOB_ID_HEADER] = page.job_id
        # ASCII-escaped so that any column name fits an HTTP header.
        headers[COLUMNS_HEADER] = json.dumps(page.schema.to_json())
        body = _arrow_stream(page)
    return Response(body, media_type=ARROW_MEDIA_TYPE, headers=headers)


def render_page(
    page: ResultSet,
    row_format: RowFormat,
    next_uri: str | None,
    time_zone: str | None = None,
) -> Response:
    if row_format is RowFormat.ARROW:
        return _arrow_response(page, next_uri)
    return json_response(result_body(page, row_format, next_uri, time_zone))
