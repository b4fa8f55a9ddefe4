"""JSON responses as Flink's gateway sends them (content type).

Flink's gateway also sends ``Access-Control-Allow-Origin: *`` on every answer,
which lets any web page read results; here CORS is closed unless origins are
configured (``cors.allowed-origins``, answered by Starlette's CORS middleware).

Always serialised with orjson: DECIMAL values in result rows are
``orjson.Fragment`` objects that only orjson can write.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from starlette.responses import Response

__all__ = ["JSON_MEDIA_TYPE", "json_response"]

JSON_MEDIA_TYPE = "application/json; charset=UTF-8"
"""What Flink's gateway sends (see the transcripts)."""


def json_response(
    body: Any, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    return Response(
        orjson.dumps(body),
        status_code=status,
        media_type=JSON_MEDIA_TYPE,
        headers=dict(headers or {}),
    )
