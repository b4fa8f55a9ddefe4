"""The gateway's Prometheus metrics (prometheus-client), one registry per service.

Counted as things happen: statement durations by kind (submitted to ended),
rows and bytes handed to clients, failed logins. Read when scraped: sessions
open, operations by status, jobs by status, engine restarts. Served by the
REST endpoint at ``/metrics`` (docs/security.md lists them). No label carries
a user name, a statement or a handle.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client import Counter as CounterMetric
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = ["CONTENT_TYPE", "GatewayMetrics", "LiveState"]

#: The exposition format's media type (Prometheus text format 0.0.4).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Seconds: a catalog lookup is milliseconds, a batch job minutes.
_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0)


class LiveState:
    """What is read at each scrape: callables over the service's state."""

    def __init__(
        self,
        sessions: Callable[[], int],
        operations: Callable[[], Iterable[str]],
        jobs: Callable[[], Iterable[str]],
        engine_restarts: Callable[[], int],
        failed_logins: Callable[[], int],
    ) -> None:
        self.sessions = sessions
        self.operations = operations
        self.jobs = jobs
        self.engine_restarts = engine_restarts
        self.failed_logins = failed_logins


class _LiveCollector(Collector):
    def __init__(self, state: LiveState) -> None:
        self.state = state

    def collect(self) -> Iterator[Metric]:
        state = self.state
        yield GaugeMetricFamily(
            "sparkgate_sessions_open", "Sessions open now.", value=state.sessions()
        )
        yield _by_status(
            "sparkgate_operations", "Operations by status (not yet closed).", state.operations()
        )
        yield _by_status("sparkgate_jobs", "Jobs by status (those SHOW JOBS lists).", state.jobs())
        restarts = CounterMetricFamily(
            "sparkgate_engine_restarts", "Times the Spark engine was started again after dying."
        )
        restarts.add_metric([], state.engine_restarts())
        yield restarts
        logins = CounterMetricFamily(
            "sparkgate_failed_logins", "Logins refused: wrong or missing credentials."
        )
        logins.add_metric([], state.failed_logins())
        yield logins


def _by_status(name: str, documentation: str, statuses: Iterable[str]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=["status"])
    counts: Mapping[str, int] = Counter(statuses)
    for status, count in sorted(counts.items()):
        family.add_metric([status], count)
    return family


class GatewayMetrics:
    """The registry of one service and the metrics counted as things happen."""

    def __init__(self, state: LiveState) -> None:
        self.registry = CollectorRegistry(
            auto_describe=False
        )  # the live one reads state at scrape only
        self.statement_seconds = Histogram(
            "sparkgate_statement_duration_seconds",
            "Statements from submission to their end (results may still stream), by kind.",
            ["kind", "outcome"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.rows_fetched = CounterMetric(
            "sparkgate_rows_fetched",
            "Result rows handed to clients.",
            registry=self.registry,
        )
        self.bytes_fetched = CounterMetric(
            "sparkgate_bytes_fetched",
            "Result bytes handed to clients (Arrow buffers, before the wire format).",
            registry=self.registry,
        )
        self.refreshes = CounterMetric(
            "sparkgate_materialized_table_refreshes",
            "Refreshes of materialized tables submitted, by trigger: `scheduled` (the "
            "workflow scheduler's periodic ones) or `manual` (ALTER ... REFRESH, the REST call).",
            ["trigger"],
            registry=self.registry,
        )
        self.registry.register(_LiveCollector(state))

    def statement_ended(self, kind: str, outcome: str, seconds: float) -> None:
        self.statement_seconds.labels(kind=kind, outcome=outcome).observe(max(seconds, 0.0))

    def fetched(self, rows: int, nbytes: int) -> None:
        if rows:
            self.rows_fetched.inc(rows)
        if nbytes:
            self.bytes_fetched.inc(nbytes)

    def refreshed(self, periodic: bool) -> None:
        self.refreshes.labels(trigger="scheduled" if periodic else "manual").inc()

    def render(self) -> bytes:
        """The exposition text (Prometheus format 0.0.4)."""
        return generate_latest(self.registry)
