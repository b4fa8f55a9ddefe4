"""Request parsing: bodies, handles and tokens, with Flink's wire field names.

Parsing is strict about types (a wrong JSON type is a 400 naming the field)
and lenient about unknown fields, so newer clients keep working. Bodies are
read incrementally and refused as soon as they pass the size limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from starlette.requests import Request

from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.endpoints.rest.errors import RestError

__all__ = [
    "Body",
    "check_content_type",
    "parse_json_object",
    "parse_operation_handle",
    "parse_session_handle",
    "parse_token",
    "read_body",
]


def _bad_request(message: str) -> RestError:
    return RestError(400, message)


def check_content_type(request: Request) -> None:
    """A request with a body must say it is JSON, or 415.

    Browsers send form and ``text/plain`` bodies across origins without asking
    first (no CORS preflight): refusing them keeps other sites' pages from
    posting statements to a gateway their visitor can reach.
    """
    declared = request.headers.get("content-type")
    if declared is None:
        length = request.headers.get("content-length", "0")
        if length.strip() in ("", "0") and "transfer-encoding" not in request.headers:
            return  # no body at all
        media = ""
    else:
        media = declared.split(";", 1)[0].strip().lower()
    if media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    ):
        return
    raise RestError(
        415,
        f"Unsupported media type {media or '(none)'}: request bodies must be JSON "
        "(Content-Type: application/json).",
    )


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, or a 413 once it passes ``limit`` bytes (never read past it)."""
    too_large = RestError(
        413,
        f"Request body too large: the limit is {limit} bytes "
        "(sql-gateway.endpoint.rest.max-body-size).",
    )
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json_object(raw: bytes) -> Body:
    """An empty body is ``{}``; anything else must be a JSON object."""
    if not raw.strip():
        return Body({})
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _bad_request(f"Request body is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise _bad_request(
            f"Request body must be a JSON object, not {_json_type(value)}."
        ) from None
    return Body(value)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


class Body:
    """Typed access to the fields of a JSON request body."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data

    def _get(self, name: str, required: bool) -> Any:
        value = self.data.get(name)
        if value is None and required:
            raise _bad_request(f"Field '{name}' is required.")
        return value

    def string(self, name: str, *, required: bool = False) -> str | None:
        value = self._get(name, required)
        if value is not None and not isinstance(value, str):
            raise _bad_request(f"Field '{name}' must be a string, not {_json_type(value)}.")
        return value

    def required_string(self, name: str) -> str:
        value = self.string(name, required=True)
        assert value is not None
        return value

    def integer(self, name: str, *, required: bool = False) -> int | None:
        value = self._get(name, required)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad_request(f"Field '{name}' must be an integer, not {_json_type(value)}.")
        return value

    def boolean(self, name: str, *, required: bool = False) -> bool | None:
        value = self._get(name, required)
        if value is not None and not isinstance(value, bool):
            raise _bad_request(f"Field '{name}' must be a boolean, not {_json_type(value)}.")
        return value

    def string_map(self, name: str) -> dict[str, str]:
        value = self._get(name, False)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise _bad_request(f"Field '{name}' must be an object, not {_json_type(value)}.")
        for key, item in value.items():
            if not isinstance(item, str):
                raise _bad_request(
                    f"Field '{name}' must map strings to strings; '{key}' is {_json_type(item)}."
                )
        return dict(value)

    def timeout_ms(self, name: str) -> float | None:
        """Flink's executionTimeout: milliseconds, 0 or absent for no limit."""
        value = self.integer(name)
        if value is None or value == 0:
            return None
        if value < 0:
            raise _bad_request(f"Field '{name}' must not be negative, got {value}.")
        return value / 1000.0


def parse_session_handle(text: str) -> SessionHandle:
    try:
        return SessionHandle.parse(text)
    except ValueError as exc:
        raise _bad_request(str(exc)) from None


def parse_operation_handle(text: str) -> OperationHandle:
    try:
        return OperationHandle.parse(text)
    except ValueError as exc:
        raise _bad_request(str(exc)) from None


def parse_token(text: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise _bad_request(f"Invalid fetch token {text!r}: expecting a non-negative integer.")
    return int(text)
