"""The REST executor: a session on a gateway that speaks Flink's SQL Gateway REST API.

It talks to sparkgate or to Flink's own SQL Gateway alike. Like Flink's SQL
client it first asks ``GET /v1/api_versions`` and then speaks the highest
version both sides know. Rows come back as PLAIN_TEXT fields, exactly what
the embedded executor produces. sparkgate's progress extension (``GET
.../operations/<op>/progress``) is used when the gateway has it; a gateway
without it simply shows no progress.
"""

from __future__ import annotations

import json
import logging
import re
import ssl
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
import pyarrow as pa

from sparkgate.api.errors import (
    ExecutionError,
    GatewayError,
    OperationNotFoundError,
    SessionNotFoundError,
)
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import ResultKind, ResultType, RowKind
from sparkgate.api.service import OperationProgress
from sparkgate.api.types import ResultSchema
from sparkgate.client.executor import ConnectionLostError, Page, TextRow
from sparkgate.client.plans import LocalPlan, local_plan
from sparkgate.client.textrows import needs_time_zone, render_batches
from sparkgate.client.timezone import ZONE_QUERY, SessionTimeZone
from sparkgate.codec.arrow_wire import (
    ARROW_ROW_FORMAT,
    COLUMNS_HEADER,
    IS_QUERY_RESULT_HEADER,
    JOB_ID_HEADER,
    NEXT_RESULT_URI_HEADER,
    RESULT_KIND_HEADER,
    RESULT_TYPE_HEADER,
    ROW_FORMAT_PARAMETER,
    ROW_KIND_COLUMN,
)
from sparkgate.sql.quoting import quote_string

__all__ = ["KNOWN_VERSIONS", "RestExecutor", "parse_error_chain"]

log = logging.getLogger(__name__)

KNOWN_VERSIONS = ("V1", "V2", "V3", "V4")
"""REST API versions this client speaks, oldest first."""

_CAUSED_BY = "Caused by: "
_SERVER_SIDE_MARKERS = ("<Exception on server side:", "End of exception on server side>")
_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")
_TOKEN = re.compile(r"/result/(\d+)")
_GATEWAY_WRAPPER = re.compile(r"^[\w.$]*SqlGatewayException: Failed to [\w ]+\.$")
_MAX_POLL_SLEEP = 0.2
_SHORT_KINDS = {kind.value: kind for kind in RowKind}


def parse_error_chain(errors: Sequence[str]) -> tuple[str, ...]:
    """The cause chain, outermost first, from a Flink REST error body's ``errors``.

    Flink puts a Java stack trace in the last entry: its first line is the
    outermost exception, each ``Caused by:`` line one cause further in.
    Frames (``at ...``) are dropped; multi-line messages are kept.
    """
    texts = [e for e in errors if e and e.strip()]
    if not texts:
        return ()
    trace = next((e for e in reversed(texts) if _CAUSED_BY in e), texts[-1])
    causes: list[str] = []
    current: list[str] = []
    in_frames = False
    for line in trace.splitlines():
        if line.strip() in _SERVER_SIDE_MARKERS:
            continue  # Flink's frame around the trace, not a message
        if line.startswith(_CAUSED_BY):
            if current:
                causes.append("\n".join(current).strip())
            current, in_frames = [line[len(_CAUSED_BY) :]], False
        elif _FRAME.match(line):
            in_frames = True
        elif not in_frames:
            current.append(line)
    if current:
        causes.append("\n".join(current).strip())
    chain = tuple(c for c in causes if c)
    # Flink's gateway wraps every failure in "SqlGatewayException: Failed to <action>.":
    # the endpoint's framing, not a cause of the statement's failure.
    while len(chain) > 1 and _GATEWAY_WRAPPER.match(chain[0]):
        chain = chain[1:]
    if len(texts) > 1 and trace is texts[-1] and not chain:
        return tuple(texts)
    return chain or (trace.strip(),)


def _negotiate(offered: Sequence[str]) -> str:
    common = [v for v in KNOWN_VERSIONS if v in offered]
    if not common:
        raise ConnectionLostError(
            f"The gateway speaks REST API versions {', '.join(offered) or 'none'}; "
            f"this client knows {', '.join(KNOWN_VERSIONS)}."
        )
    return common[-1]


class RestExecutor:
    """A session on a REST gateway at ``host:port``."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        properties: Mapping[str, str] | None = None,
        jars: Sequence[str] = (),
        session_name: str = "sql-client",
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        auth: httpx.Auth | None = None,
        scheme: str = "http",
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self._address = netloc if scheme == "http" else f"{scheme}://{netloc}"
        self._properties = dict(properties or {})
        self._jars = tuple(jars)
        self._session_name = session_name
        self._http = httpx.Client(
            base_url=f"{scheme}://{netloc}",
            timeout=timeout,
            transport=transport,
            auth=auth,
            verify=verify,
        )
        self._version: str | None = None
        self._session: SessionHandle | None = None
        self._has_progress = True
        self._arrow = False
        self._time_zone = SessionTimeZone(self._ask_time_zone, self._settings)
        self._poll_sleep: dict[OperationHandle, float] = {}
        self._sparkgate = False
        # COMPILE PLAN operations whose plan goes back to a file of this machine.
        self._compiles: dict[OperationHandle, LocalPlan] = {}

    # -- plumbing -----------------------------------------------------------------
    @property
    def version(self) -> str:
        if self._version is None:
            raise GatewayError("The REST API version is not negotiated yet.")
        return self._version

    @property
    def description(self) -> str:
        try:
            info = self._call("GET", "/info", prefix=True)
            product = f"{info.get('productName', 'gateway')} {info.get('version', '')}".strip()
        except GatewayError:
            product = "gateway"
        return f"{product} at {self._address} (REST {self.version})"

    def _url(self, path: str) -> str:
        return f"/{self.version.lower()}{path}"

    def _session_path(self, suffix: str = "") -> str:
        if self._session is None:
            raise GatewayError("The SQL client has no open session.")
        return f"/sessions/{self._session}{suffix}"

    def _call(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        *,
        prefix: bool = True,
        params: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        url = self._url(path) if prefix else path
        response = self._send(method, url, body, params)
        try:
            data = response.json() if response.content else {}
        except ValueError:
            data = {"errors": [response.text]}
        if not isinstance(data, dict):
            raise ConnectionLostError(f"Unexpected answer from {method} {url}: {data!r}")
        if response.status_code >= 400:
            raise self._error(response.status_code, method, url, data)
        return data

    def _send(
        self,
        method: str,
        url: str,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        try:
            return self._http.request(
                method, url, json=dict(body) if body is not None else {}, params=params
            )
        except httpx.TransportError as exc:
            raise ConnectionLostError(
                f"Could not reach the gateway at {self._address}: {exc}{self._tls_hint(exc)}"
            ) from exc

    def _tls_hint(self, exc: httpx.TransportError) -> str:
        """What to do when TLS is why the gateway cannot be reached."""
        if "CERTIFICATE_VERIFY_FAILED" in str(exc):
            return (
                "\nThe gateway's certificate is not signed by a CA this client trusts: "
                "pass that CA with --cacert FILE (or set SSL_CERT_FILE)."
            )
        if isinstance(exc, httpx.RemoteProtocolError) and not self._address.startswith("https:"):
            return "\nIf the gateway serves HTTPS, connect with -e https://HOST:PORT."
        return ""

    def _error(self, status: int, method: str, url: str, data: Mapping[str, Any]) -> GatewayError:
        errors = [str(e) for e in data.get("errors", [])] or [f"HTTP {status} from {method} {url}"]
        causes = parse_error_chain(errors)
        text = causes[-1] if causes else errors[-1]
        missing = self._missing(url) if status == 404 else None
        if missing == "session":
            return SessionNotFoundError(text)
        if missing == "operation":
            return OperationNotFoundError(text)
        return ExecutionError(causes[0] if causes else text, causes=causes)

    def _missing(self, url: str) -> str | None:
        """What a 404 of a session's URL is for, by asking rather than reading its text:
        the session when its heartbeat is a 404 too, else the operation the URL names."""
        parts = url.split("?", 1)[0].split("/")
        if "sessions" not in parts or parts.index("sessions") + 1 >= len(parts):
            return None
        end = parts.index("sessions") + 2
        probe = self._send("POST", "/".join([*parts[:end], "heartbeat"]))
        if probe.status_code == 404:
            return "session"
        return "operation" if "operations" in parts[end:] else None

    # -- session ------------------------------------------------------------------
    def open(self) -> None:
        if self._session is not None:
            return
        offered = self._call("GET", "/v1/api_versions", prefix=False).get("versions", [])
        self._version = _negotiate([str(v) for v in offered])
        log.info("Speaking REST API %s with %s", self._version, self._address)
        body: dict[str, Any] = {"properties": self._properties}
        if self._session_name:
            body["sessionName"] = self._session_name
        answer = self._call("POST", "/sessions", body)
        self._session = SessionHandle.parse(str(answer["sessionHandle"]))
        self._sparkgate = self._arrow = self._is_sparkgate()
        for jar in self._jars:
            self.configure(f"ADD JAR {quote_string(jar)}")

    def _is_sparkgate(self) -> bool:
        """sparkgate gateways also answer Arrow pages: no JSON on the hot path."""
        try:
            info = self._call("GET", "/info")
        except GatewayError:
            return False
        return str(info.get("productName", "")).lower() == "sparkgate"

    def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            try:
                self._call("DELETE", f"/sessions/{session}")
            except GatewayError:
                log.debug("Closing session %s failed", session, exc_info=True)
        self._http.close()

    def heartbeat(self) -> None:
        self._call("POST", self._session_path("/heartbeat"))

    def session_config(self) -> dict[str, str]:
        # Read after statements that may have changed it: so may the time zone have.
        self._time_zone.invalidate()
        return self._settings()

    def _settings(self) -> dict[str, str]:
        properties = self._call("GET", self._session_path()).get("properties", {})
        return {str(k): str(v) for k, v in properties.items()}

    def configure(self, statement: str) -> None:
        self._time_zone.invalidate()
        if self.version == "V1":  # no configure-session yet: run it as a statement
            op = self.submit(statement)
            try:
                token: int | None = 0
                while token is not None:
                    page = self.fetch(op, token, 100, 1.0)
                    token = page.next_token
            finally:
                self.close_operation(op)
            return
        self._call("POST", self._session_path("/configure-session"), {"statement": statement})

    # -- operations ------------------------------------------------------------
    def submit(self, statement: str) -> OperationHandle:
        plan = local_plan(statement) if self._sparkgate else None
        if plan is not None:
            # A plan file of this machine: the gateway reads it as a session resource.
            if plan.path.is_file():
                content = plan.path.read_text(encoding="utf-8")
                self._call(
                    "PUT", self._session_path(f"/resources/{plan.name}"), {"content": content}
                )
            statement = plan.statement
        answer = self._call("POST", self._session_path("/statements"), {"statement": statement})
        handle = OperationHandle.parse(str(answer["operationHandle"]))
        if plan is not None and plan.compiles:
            self._compiles[handle] = plan
        return handle

    def _bring_back(self, operation: OperationHandle) -> None:
        """A COMPILE PLAN ended well: its plan goes to the file of this machine."""
        plan = self._compiles.pop(operation, None)
        if plan is None:
            return
        answer = self._call("GET", self._session_path(f"/resources/{plan.name}"))
        plan.path.parent.mkdir(parents=True, exist_ok=True)
        plan.path.write_text(str(answer.get("content", "")), encoding="utf-8")
        log.info("Wrote the compiled plan %s", plan.path)

    def fetch(self, operation: OperationHandle, token: int, max_rows: int, wait: float) -> Page:
        started = time.monotonic()
        path = self._session_path(f"/operations/{operation}/result/{token}")
        page = None
        if self._arrow:
            page = self._fetch_arrow(path, token)
        if page is None:
            data = self._call("GET", path, params={"rowFormat": "PLAIN_TEXT"})
            page = self._page(data, token)
        if page.result_type is ResultType.EOS:
            self._poll_sleep.pop(operation, None)
            self._bring_back(operation)
        elif page.rows:
            self._poll_sleep[operation] = 0.0
        else:  # nothing yet: back off a little, as a long poll would
            delay = min(max(self._poll_sleep.get(operation, 0.0) * 2, 0.01), _MAX_POLL_SLEEP)
            self._poll_sleep[operation] = delay
            remaining = wait - (time.monotonic() - started)
            if remaining > 0:
                time.sleep(min(delay, remaining))
        return page

    def progress(self, operation: OperationHandle) -> OperationProgress | None:
        if not self._has_progress:
            return None
        try:
            data = self._call("GET", self._session_path(f"/operations/{operation}/progress"))
        except (ExecutionError, OperationNotFoundError, SessionNotFoundError):
            # Not a sparkgate gateway (or an older one): no progress, no retries.
            self._has_progress = False
            return None
        return _progress(data)

    def cancel(self, operation: OperationHandle) -> None:
        self._call("POST", self._session_path(f"/operations/{operation}/cancel"))

    def close_operation(self, operation: OperationHandle) -> None:
        self._poll_sleep.pop(operation, None)
        self._compiles.pop(operation, None)
        self._call("DELETE", self._session_path(f"/operations/{operation}/close"))

    def complete(self, statement: str, position: int) -> list[str]:
        if self.version == "V1":
            return []
        answer = self._call(
            "GET",
            self._session_path("/complete-statement"),
            {"statement": statement, "position": position},
        )
        return [str(c) for c in answer.get("candidates", [])]

    def _fetch_arrow(self, path: str, token: int) -> Page | None:
        """A page through sparkgate's ``rowFormat=ARROW``; None if the gateway refused it."""
        url = self._url(path)
        response = self._send("GET", url, params={ROW_FORMAT_PARAMETER: ARROW_ROW_FORMAT})
        if response.status_code == 400 and ARROW_ROW_FORMAT in response.text:
            log.info("The gateway has no Arrow row format; using PLAIN_TEXT")
            self._arrow = False
            return None
        if response.status_code >= 400:
            try:
                data = response.json()
            except ValueError:
                data = {"errors": [response.text]}
            raise self._error(response.status_code, "GET", url, data)
        headers = response.headers
        result_type = ResultType(headers.get(RESULT_TYPE_HEADER, "PAYLOAD"))
        next_token = _next_token(headers.get(NEXT_RESULT_URI_HEADER))
        if result_type is ResultType.NOT_READY:
            return Page(result_type, token if next_token is None else next_token)
        schema = ResultSchema.from_json(json.loads(headers.get(COLUMNS_HEADER, "[]")))
        batches: list[pa.RecordBatch] = []
        kinds: list[RowKind] = []
        if response.content:
            with pa.ipc.open_stream(response.content) as reader:
                for batch in reader:
                    if ROW_KIND_COLUMN in batch.schema.names:
                        index = batch.schema.get_field_index(ROW_KIND_COLUMN)
                        kinds.extend(_SHORT_KINDS[k] for k in batch.column(index).to_pylist())
                        batch = batch.remove_column(index)
                    else:
                        kinds.extend([RowKind.INSERT] * batch.num_rows)
                    batches.append(batch)
        zone, warning = "UTC", None
        if any(needs_time_zone(t) for t in schema.types) and kinds:
            zone, warning = self._time_zone.resolve()
        return Page(
            result_type,
            None if result_type is ResultType.EOS else next_token,
            schema,
            render_batches(batches, schema, zone),
            kinds,
            headers.get(IS_QUERY_RESULT_HEADER, "false") == "true",
            ResultKind(headers.get(RESULT_KIND_HEADER, "SUCCESS")),
            headers.get(JOB_ID_HEADER),
            warnings=(warning,) if warning else (),
        )

    def _ask_time_zone(self) -> str | None:
        """The zone Spark uses for this session (its default when none is set)."""
        op = self.submit(ZONE_QUERY)
        try:
            token: int | None = 0
            while token is not None:
                data = self._call(
                    "GET",
                    self._session_path(f"/operations/{op}/result/{token}"),
                    params={"rowFormat": "PLAIN_TEXT"},
                )
                page = self._page(data, token)
                for row in page.rows:
                    if row and row[0] is not None:
                        return row[0]
                if page.result_type is ResultType.NOT_READY:
                    time.sleep(_MAX_POLL_SLEEP)
                token = page.next_token
        finally:
            self.close_operation(op)
        return None

    @staticmethod
    def _page(data: Mapping[str, Any], token: int) -> Page:
        result_type = ResultType(str(data.get("resultType", "PAYLOAD")))
        next_token = _next_token(data.get("nextResultUri"))
        if result_type is ResultType.NOT_READY:
            return Page(result_type, token if next_token is None else next_token)
        results = data.get("results") or {}
        schema = ResultSchema.from_json(results.get("columns") or [])
        rows: list[TextRow] = []
        kinds: list[RowKind] = []
        for item in results.get("data") or []:
            kinds.append(RowKind[str(item.get("kind", "INSERT"))])
            rows.append([None if f is None else _text(f) for f in item.get("fields", [])])
        return Page(
            result_type,
            None if result_type is ResultType.EOS else next_token,
            schema,
            rows,
            kinds,
            bool(data.get("isQueryResult", False)),
            ResultKind(str(data.get("resultKind", "SUCCESS"))),
            data.get("jobID"),
        )


def _text(value: object) -> str:
    # PLAIN_TEXT fields are strings; a gateway answering JSON still prints sensibly.
    return value if isinstance(value, str) else str(value)


def _next_token(uri: object) -> int | None:
    if not isinstance(uri, str):
        return None
    match = _TOKEN.search(uri)
    return int(match.group(1)) if match else None


def _progress(data: Mapping[str, Any]) -> OperationProgress:
    def number(camel: str, snake: str) -> float:
        value = data.get(camel, data.get(snake, 0))
        return float(value) if isinstance(value, (int, float)) else 0.0

    return OperationProgress(
        jobs_total=int(number("jobsTotal", "jobs_total")),
        jobs_done=int(number("jobsDone", "jobs_done")),
        stages_total=int(number("stagesTotal", "stages_total")),
        stages_done=int(number("stagesDone", "stages_done")),
        tasks_total=int(number("tasksTotal", "tasks_total")),
        tasks_done=int(number("tasksDone", "tasks_done")),
        tasks_running=int(number("tasksRunning", "tasks_running")),
        elapsed=number("elapsed", "elapsed"),
    )
