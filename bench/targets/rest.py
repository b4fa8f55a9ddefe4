"""sparkgate over REST (Flink SQL Gateway protocol, v4), with a plain HTTP client.

The client is the standard library's ``http.client`` on keep-alive
connections (one per session, pooled), so what is measured is the gateway,
not a client library. Every statement is a full round trip:
``POST /v4/sessions/:h/statements``, ``GET .../result/:token`` following
``nextResultUri`` to end of stream (re-asking after a short, growing pause on
``NOT_READY``), then ``DELETE .../operations/:o/close``.

Modes: ``json`` parses every response body completely with orjson;
``arrow`` asks for ``rowFormat=ARROW`` and reads the Arrow IPC stream, then
passes over every column. The ARROW body is accepted in either shape an
endpoint may choose: the response *is* an IPC stream
(``Content-Type: application/vnd.apache.arrow.stream``, the next URI in a
``*Next-Result-Uri`` header or ``Link: <...>; rel="next"``), or a JSON fetch
body whose ``results.data`` is base64 of an IPC stream (or a list of them).

Each statement also records how long each of its requests took
(``last_phases``: submit, the fetches, the fetch answering EOS, close), and
:meth:`_RestSession.ping` times one keep-alive round trip on the session's
connection (``GET /v4/api_versions``), untimed by the workloads' clocks.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import logging
import queue
import re
import threading
import time
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import orjson
import pyarrow as pa

from bench.servers import HOST, ManagedProcess, free_port, http_responds, start_rest_gateway
from bench.servers import rest_endpoint_missing as _rest_missing
from bench.settings import SparkSettings
from bench.targets.base import BenchError, Session, Target, touch_arrow

__all__ = ["RestClient", "RestTarget"]

log = logging.getLogger(__name__)

API = "/v4"
_RETRYABLE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)
_LINK_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


class RestClient:
    """One keep-alive HTTP connection; JSON in, raw bytes out."""

    def __init__(self, port: int, timeout: float) -> None:
        self._port = port
        self._timeout = timeout
        self._conn = http.client.HTTPConnection(HOST, port, timeout=timeout)

    def request(
        self, method: str, path: str, body: dict[str, Any] | None = None
    ) -> tuple[int, http.client.HTTPMessage, bytes]:
        payload = orjson.dumps(body) if body is not None else None
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        for attempt in (1, 2):
            try:
                self._conn.request(method, path, body=payload, headers=headers)
                response = self._conn.getresponse()
                return response.status, response.headers, response.read()
            except _RETRYABLE:
                # The server closed an idle keep-alive connection: one retry on a new one.
                self._conn.close()
                self._conn = http.client.HTTPConnection(HOST, self._port, timeout=self._timeout)
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def json(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        status, _headers, raw = self.request(method, path, body)
        if status >= 400:
            raise BenchError(f"{method} {path} -> HTTP {status}: {_excerpt(raw)}")
        return orjson.loads(raw) if raw else {}

    def close(self) -> None:
        self._conn.close()


def _excerpt(raw: bytes, limit: int = 600) -> str:
    text = raw.decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "..."


def _path_of(uri: str) -> str:
    parts = urlsplit(uri)
    path = parts.path if parts.path.startswith("/") else "/" + parts.path
    return path + (f"?{parts.query}" if parts.query else "")


class _RestSession:
    def __init__(self, target: RestTarget, client: RestClient, mode: str) -> None:
        self._target = target
        self._client = client
        self._mode = mode
        self._row_format = "ARROW" if mode == "arrow" else "JSON"
        answer = client.json("POST", f"{API}/sessions", {"sessionName": "bench", "properties": {}})
        self.handle = str(answer["sessionHandle"])
        #: Seconds of each request of the last statement: ``submit_s``, ``fetch_s``
        #: (every fetch before the one answering EOS, NOT_READY pauses included),
        #: ``eos_s`` (the fetch answering EOS), ``close_s``; ``eos_rows``, the rows
        #: that EOS answer carried (0: a fetch after the last page).
        self.last_phases: dict[str, float] = {}

    def execute(self, sql: str) -> int:
        phases: dict[str, float] = {}
        self.last_phases = phases
        began = time.perf_counter()
        operation = self._submit(sql)
        submitted = time.perf_counter()
        phases["submit_s"] = submitted - began
        try:
            return self._fetch_all(operation, self._deadline(), trace=phases)
        finally:
            fetched = time.perf_counter()
            self._client.json("DELETE", f"{self._base}/operations/{operation}/close")
            phases["close_s"] = time.perf_counter() - fetched
            phases["fetch_s"] = fetched - submitted - phases.get("eos_s", 0.0)

    def ping(self) -> float:
        """Seconds of one keep-alive round trip on this session's connection
        (``GET /api_versions``: answered by the endpoint alone, no service call)."""
        start = time.perf_counter()
        status, _headers, raw = self._client.request("GET", f"{API}/api_versions")
        elapsed = time.perf_counter() - start
        if status >= 400:
            raise BenchError(f"GET {API}/api_versions -> HTTP {status}: {_excerpt(raw)}")
        return elapsed

    def submit(self, sql: str) -> _RestBackground:
        return _RestBackground(self, self._submit(sql))

    @property
    def _base(self) -> str:
        return f"{API}/sessions/{self.handle}"

    def _deadline(self) -> float:
        return time.monotonic() + self._target.settings.statement_timeout_s

    def _submit(self, sql: str) -> str:
        answer = self._client.json("POST", f"{self._base}/statements", {"statement": sql})
        return str(answer["operationHandle"])

    def _fetch_all(
        self,
        operation: str,
        deadline: float,
        stop: threading.Event | None = None,
        trace: dict[str, float] | None = None,
    ) -> int:
        uri = f"{self._base}/operations/{operation}/result/0?rowFormat={self._row_format}"
        rows = 0
        pause = 0.0005
        while True:
            if stop is not None and stop.is_set():
                return rows
            if time.monotonic() > deadline:
                raise BenchError(f"no end of stream before the timeout ({uri})")
            sent = time.perf_counter()
            status, headers, raw = self._client.request("GET", uri)
            if status >= 400:
                raise BenchError(f"GET {uri} -> HTTP {status}: {_excerpt(raw)}")
            content_type = headers.get("Content-Type", "")
            if "arrow" in content_type:
                count, result_type, next_uri = self._arrow_response(headers, raw, uri)
            else:
                count, result_type, next_uri = self._json_response(raw)
            if result_type == "NOT_READY":
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
                continue
            pause = 0.0005
            rows += count
            if result_type == "EOS" or not next_uri:
                if trace is not None:
                    trace["eos_s"] = time.perf_counter() - sent
                    trace["eos_rows"] = count
                return rows
            uri = _path_of(next_uri)

    def _json_response(self, raw: bytes) -> tuple[int, str, str | None]:
        body = orjson.loads(raw)
        result_type = str(body.get("resultType", ""))
        data = (body.get("results") or {}).get("data") or []
        if isinstance(data, str) or (data and isinstance(data[0], str)):
            # ARROW carried inside the JSON body as base64.
            count = sum(_read_ipc(base64.b64decode(item)) for item in _as_list(data))
        else:
            count = len(data)
        return count, result_type, body.get("nextResultUri")

    def _arrow_response(
        self, headers: http.client.HTTPMessage, raw: bytes, uri: str
    ) -> tuple[int, str, str | None]:
        next_uri = None
        result_type = ""
        for name, value in headers.items():
            lowered = name.lower()
            if lowered.endswith("next-result-uri"):
                next_uri = value or None
            elif lowered.endswith("result-type"):
                result_type = value.upper()
            elif lowered == "link":
                match = _LINK_NEXT.search(value)
                if match:
                    next_uri = match.group(1)
        count = _read_ipc(raw) if raw else 0
        if not result_type and not raw:
            result_type = "EOS"
        if next_uri is None and result_type not in ("EOS", "NOT_READY") and raw:
            # No next link: assume Flink's token rule, token N+1 follows token N.
            match = re.search(r"/result/(\d+)", uri)
            if match:
                token = int(match.group(1)) + 1
                next_uri = uri[: match.start(1)] + str(token) + uri[match.end(1) :]
        return count, result_type or "PAYLOAD", next_uri

    def close(self) -> None:
        try:
            self._client.json("DELETE", f"{API}/sessions/{self.handle}")
        finally:
            self._target.release(self._client)


class _RestBackground:
    """A statement read to its end by :meth:`wait` (Flink clients' long poll), which
    another thread may :meth:`cancel` over a connection of its own."""

    def __init__(self, session: _RestSession, operation: str) -> None:
        self._session = session
        self._operation = operation
        self._stop = threading.Event()

    @property
    def _path(self) -> str:
        return f"{self._session._base}/operations/{self._operation}"

    def wait(self) -> int:
        return self._session._fetch_all(self._operation, self._session._deadline(), self._stop)

    def cancel(self) -> None:
        self._stop.set()
        target = self._session._target
        client = RestClient(target.port, target.settings.statement_timeout_s)
        try:
            client.json("POST", f"{self._path}/cancel")
        finally:
            client.close()

    def close(self) -> None:
        self._session._client.json("DELETE", f"{self._path}/close")


def _as_list(data: Any) -> list[str]:
    return [data] if isinstance(data, str) else list(data)


def _read_ipc(raw: bytes) -> int:
    with pa.ipc.open_stream(pa.py_buffer(raw)) as reader:
        table = reader.read_all()
    touch_arrow(table)
    return int(table.num_rows)


class RestTarget(Target):
    name = "rest"
    label = "sparkgate REST"
    modes = ("json", "arrow")

    def __init__(self, *args: Any, instance: str = "gateway", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Name of the gateway's directory in the work dir (its data dir, its log).
        self.instance = instance
        self.port = 0
        self._process: ManagedProcess | None = None
        self._launched_at = 0.0
        self._pool: queue.SimpleQueue[RestClient] = queue.SimpleQueue()
        self.extra_options: dict[str, str] = {}

    def sibling(
        self,
        instance: str,
        label: str,
        *,
        options: dict[str, str] | None = None,
        spark: SparkSettings | None = None,
    ) -> RestTarget:
        """A second gateway like this one (same ``--rest-option``s), with
        ``options`` on top and, if given, other Spark settings; not launched."""
        settings = self.settings if spark is None else replace(self.settings, spark=spark)
        other = RestTarget(settings, self.work_dir, instance=instance)
        other.label = label
        other.extra_options = {**self.extra_options, **(options or {})}
        return other

    def unavailable(self) -> str | None:
        return _rest_missing()

    def launch(self) -> None:
        self.port = free_port()
        self._launched_at = time.monotonic()
        self._process = start_rest_gateway(
            self.work_dir,
            self.settings.spark,
            self.port,
            extra_options=self.extra_options,
            name=self.instance,
        )

    def wait_ready(self) -> None:
        if self._process is None:
            raise RuntimeError("the gateway was not launched")
        port = self.port
        self._process.wait_ready(lambda: http_responds(port), self.settings.startup_timeout_s)
        session = self.open_session()
        try:
            if session.execute("SELECT 1") != 1:
                raise BenchError("SELECT 1 over REST did not return one row")
        finally:
            session.close()
        self.startup_s = time.monotonic() - self._launched_at

    def stop(self) -> None:
        while True:
            try:
                client = self._pool.get_nowait()
            except queue.Empty:
                break
            with contextlib.suppress(Exception):
                client.close()
        if self._process is not None:
            self._process.stop()

    def acquire(self) -> RestClient:
        try:
            return self._pool.get_nowait()
        except queue.Empty:
            return RestClient(self.port, self.settings.statement_timeout_s)

    def release(self, client: RestClient) -> None:
        self._pool.put(client)

    def open_session(self, mode: str | None = None) -> Session:
        client = self.acquire()
        try:
            return _RestSession(self, client, mode or self.modes[0])
        except BaseException:
            self.release(client)
            raise

    def server_pids(self) -> list[int]:
        return [self._process.pid] if self._process is not None else []

    def log_tail(self) -> str:
        return self._process.tail() if self._process is not None else ""
