"""sparkgate's Arrow extension of Flink's REST result fetch, as both sides speak it.

A fetch with ``rowFormat=ARROW`` answers an Arrow IPC stream (``ARROW_MEDIA_TYPE``)
whose page metadata travels in ``X-Sparkgate-*`` headers; changelog pages carry
each row's short kind in an extra ``ROW_KIND_COLUMN``. The endpoint writes these
and the SQL client reads them: one declaration for both.
"""

from __future__ import annotations

__all__ = [
    "ARROW_MEDIA_TYPE",
    "ARROW_ROW_FORMAT",
    "COLUMNS_HEADER",
    "COLUMNS_METADATA_KEY",
    "IS_QUERY_RESULT_HEADER",
    "JOB_ID_HEADER",
    "NEXT_RESULT_URI_HEADER",
    "RESULT_KIND_HEADER",
    "RESULT_TYPE_HEADER",
    "ROW_FORMAT_PARAMETER",
    "ROW_KIND_COLUMN",
]

ARROW_MEDIA_TYPE = "application/vnd.apache.arrow.stream"
ROW_FORMAT_PARAMETER = "rowFormat"
ARROW_ROW_FORMAT = "ARROW"

RESULT_TYPE_HEADER = "X-Sparkgate-Result-Type"
NEXT_RESULT_URI_HEADER = "X-Sparkgate-Next-Result-Uri"
RESULT_KIND_HEADER = "X-Sparkgate-Result-Kind"
IS_QUERY_RESULT_HEADER = "X-Sparkgate-Is-Query-Result"
JOB_ID_HEADER = "X-Sparkgate-Job-Id"
COLUMNS_HEADER = "X-Sparkgate-Columns"

COLUMNS_METADATA_KEY = b"sparkgate.columns"
ROW_KIND_COLUMN = "$row_kind"
"""Added to Arrow pages of changelog results: each row's short kind (``+I``, ``-U``...)."""
