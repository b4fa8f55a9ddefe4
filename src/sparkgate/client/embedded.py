"""The embedded executor: the gateway service runs in the client's own process.

It adapts any object implementing the api's ``GatewayService`` Protocol; the
command line (the composition root) builds the real service on Spark and
passes it in, tests pass the service on their shared Spark session. Pages
are encoded to Flink's PLAIN_TEXT forms with the codec the REST endpoint
uses, so both modes print the same characters.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from sparkgate.api.errors import GatewayError
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import ResultSet, ResultType, RowKind
from sparkgate.api.service import GatewayService, OperationProgress
from sparkgate.api.session import SessionEnvironment
from sparkgate.client.executor import Page
from sparkgate.client.textrows import needs_time_zone, render_batches
from sparkgate.client.timezone import ZONE_QUERY, SessionTimeZone
from sparkgate.sql.quoting import quote_string

__all__ = ["EmbeddedExecutor"]

log = logging.getLogger(__name__)


class EmbeddedExecutor:
    """A session on an in-process :class:`GatewayService`.

    The service's lifecycle belongs to whoever built it: ``close`` closes the
    session only.
    """

    def __init__(
        self,
        service: GatewayService,
        *,
        properties: Mapping[str, str] | None = None,
        jars: Sequence[str] = (),
        session_name: str = "sql-client",
    ) -> None:
        self._service = service
        self._properties = dict(properties or {})
        self._jars = tuple(jars)
        self._session_name = session_name
        self._session: SessionHandle | None = None
        self._time_zone = SessionTimeZone(self._ask_time_zone, self._settings)

    @property
    def description(self) -> str:
        info = self._service.get_gateway_info()
        return f"embedded {info.product_name} {info.version} on Spark {info.engine_version}"

    @property
    def session(self) -> SessionHandle:
        if self._session is None:
            raise GatewayError("The SQL client has no open session.")
        return self._session

    def open(self) -> None:
        if self._session is not None:
            return
        environment = SessionEnvironment(
            session_name=self._session_name,
            config=dict(self._properties),
        )
        self._session = self._service.open_session(environment)
        for jar in self._jars:
            self._service.configure_session(self._session, f"ADD JAR {quote_string(jar)}")

    def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            try:
                self._service.close_session(session)
            except GatewayError:
                log.debug("Closing session %s failed", session, exc_info=True)

    def heartbeat(self) -> None:
        self._service.heartbeat(self.session)

    def session_config(self) -> dict[str, str]:
        # Read after statements that may have changed it: so may the time zone have.
        self._time_zone.invalidate()
        return self._service.get_session_config(self.session)

    def configure(self, statement: str) -> None:
        self._service.configure_session(self.session, statement)
        self._time_zone.invalidate()

    def submit(self, statement: str) -> OperationHandle:
        return self._service.execute_statement(self.session, statement)

    def fetch(self, operation: OperationHandle, token: int, max_rows: int, wait: float) -> Page:
        result = self._service.fetch_results(self.session, operation, token, max_rows, wait)
        return self._page(result)

    def progress(self, operation: OperationHandle) -> OperationProgress | None:
        return self._service.get_operation_progress(self.session, operation)

    def cancel(self, operation: OperationHandle) -> None:
        self._service.cancel_operation(self.session, operation)

    def close_operation(self, operation: OperationHandle) -> None:
        self._service.close_operation(self.session, operation)

    def complete(self, statement: str, position: int) -> list[str]:
        return self._service.complete_statement(self.session, statement, position)

    # -- encoding ---------------------------------------------------------------
    def _settings(self) -> dict[str, str]:
        return self._service.get_session_config(self.session)

    def _ask_time_zone(self) -> str | None:
        """The zone Spark uses for this session (its default when none is set)."""
        op = self._service.execute_statement(self.session, ZONE_QUERY)
        try:
            token: int | None = 0
            while token is not None:
                result = self._service.fetch_results(self.session, op, token, 10, wait=30.0)
                for row in result.rows():
                    if row and row[0] is not None:
                        return str(row[0])
                token = result.next_token
        finally:
            self._service.close_operation(self.session, op)
        return None

    def _page(self, result: ResultSet) -> Page:
        if result.result_type is ResultType.NOT_READY:
            return Page(ResultType.NOT_READY, result.next_token)
        schema = result.schema
        zone, warning = "UTC", None
        if result.num_rows and any(needs_time_zone(t) for t in schema.types):
            zone, warning = self._time_zone.resolve()
        rows = render_batches(result.batches, schema, zone)
        kinds: Sequence[RowKind] = result.row_kinds()
        return Page(
            result.result_type,
            result.next_token,
            schema,
            rows,
            kinds,
            result.is_query_result,
            result.result_kind,
            result.job_id,
            warnings=(warning,) if warning else (),
        )
