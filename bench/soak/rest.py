"""A small client of the gateway's REST API (Flink's SQL Gateway protocol).

Each client loop owns one: an ``httpx.Client`` with keep-alive, a protocol
version (``v1`` .. ``v4``), and the calls the soak makes. Every non-200 answer
and every transport error becomes a :class:`~bench.soak.errors.Failure`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx
import pyarrow as pa

from bench.soak.errors import Halted, rest_failure, transport_failure

__all__ = ["JsonResult", "Rest"]

# Generous: a fetch long-polls 3 s; only a stalled gateway takes minutes.
_TIMEOUT = httpx.Timeout(300.0, connect=30.0)


@dataclass(frozen=True)
class JsonResult:
    rows: list[list[Any]]
    job_id: str | None
    pages: int
    columns: tuple[str, ...] = ()

    def record(self) -> dict[str, Any]:
        """A one-row result (DESCRIBE JOB) as column name -> value."""
        return dict(zip(self.columns, self.rows[0], strict=True)) if self.rows else {}


class Rest:
    """The REST calls of one client, on one protocol version."""

    def __init__(self, base_url: str, version: str = "v4") -> None:
        self.http = httpx.Client(base_url=base_url, timeout=_TIMEOUT)
        self.version = version

    def close(self) -> None:
        self.http.close()

    def _call(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self.http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise transport_failure(exc) from exc
        if response.status_code != 200:
            raise rest_failure(response)
        return response

    def _session_url(self, session: str) -> str:
        return f"/{self.version}/sessions/{session}"

    def open_session(self, name: str, properties: dict[str, str] | None = None) -> str:
        body = {"sessionName": name, "properties": properties or {}}
        answer = self._call("POST", f"/{self.version}/sessions", json=body)
        return str(answer.json()["sessionHandle"])

    def close_session(self, session: str) -> None:
        self._call("DELETE", self._session_url(session))

    def heartbeat(self, session: str) -> None:
        self._call("POST", f"{self._session_url(session)}/heartbeat", json={})

    def session_status(self, session: str) -> int:
        """200 while the session lives, 404 once it expired or was closed."""
        try:
            return self.http.get(self._session_url(session)).status_code
        except httpx.HTTPError as exc:
            raise transport_failure(exc) from exc

    def submit(self, session: str, statement: str) -> str:
        url = f"{self._session_url(session)}/statements"
        return str(self._call("POST", url, json={"statement": statement}).json()["operationHandle"])

    def close_operation(self, session: str, operation: str) -> None:
        self._call("DELETE", f"{self._session_url(session)}/operations/{operation}/close")

    def _first_uri(self, session: str, operation: str, row_format: str) -> str:
        uri = f"{self._session_url(session)}/operations/{operation}/result/0"
        # V1 has no rowFormat parameter (it answers JSON).
        return uri if self.version == "v1" else f"{uri}?rowFormat={row_format}"

    def json_result(self, session: str, statement: str, *, close: bool = True) -> JsonResult:
        """Submit ``statement`` and read its JSON result to the end (DECIMALs as Decimal)."""
        operation = self.submit(session, statement)
        uri: str | None = self._first_uri(session, operation, "JSON")
        rows: list[list[Any]] = []
        columns: tuple[str, ...] = ()
        job_id: str | None = None
        pages = 0
        while uri is not None:
            body = json.loads(self._call("GET", uri).content, parse_float=Decimal)
            pages += 1
            results = body.get("results", {})
            rows.extend(row["fields"] for row in results.get("data", []))
            columns = tuple(str(c["name"]) for c in results.get("columns", [])) or columns
            job_id = body.get("jobID") or job_id
            uri = body.get("nextResultUri")
        if close:
            self.close_operation(session, operation)
        return JsonResult(rows, job_id, pages, columns)

    def arrow_result(
        self,
        session: str,
        statement: str,
        on_table: Callable[[pa.Table], None],
        halt: threading.Event,
    ) -> int:
        """Submit ``statement``, hand each non-empty Arrow page to ``on_table``; pages read.

        Stops with :class:`Halted` (cancelling the statement) once ``halt`` is set.
        """
        operation = self.submit(session, statement)
        uri: str | None = self._first_uri(session, operation, "ARROW")
        pages = 0
        while uri is not None:
            if halt.is_set():
                self.close_operation(session, operation)
                raise Halted()
            page = self._call("GET", uri)
            pages += 1
            if page.content:  # NOT_READY has no body
                table = pa.ipc.open_stream(page.content).read_all()
                if table.num_rows:  # an empty page has null-typed columns
                    on_table(table)
            uri = page.headers.get("x-sparkgate-next-result-uri")
        self.close_operation(session, operation)
        return pages

    def readiness(self, timeout_s: float = 10.0) -> tuple[int, dict[str, Any]]:
        """``/health/ready``: its status and body."""
        try:
            answer = self.http.get("/health/ready", timeout=timeout_s)
        except httpx.HTTPError as exc:
            raise transport_failure(exc) from exc
        try:
            body = answer.json()
        except ValueError:
            body = {}
        return answer.status_code, body if isinstance(body, dict) else {}
