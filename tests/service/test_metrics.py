"""The gateway's Prometheus metrics, counted as a user's statements run."""

from __future__ import annotations

import re

from prometheus_client.parser import text_string_to_metric_families

from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService

from .conftest import error_text, run, unique_name


def samples(service: SparkGatewayService) -> dict[str, float]:
    """Every sample as 'name{label="value",...}' -> value."""
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(service.render_metrics().decode()):
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            out[f"{sample.name}{{{labels}}}"] = sample.value
    return out


def value(found: dict[str, float], pattern: str) -> float:
    return sum(v for k, v in found.items() if re.fullmatch(pattern, k))


def test_statements_rows_and_sessions_are_counted(service: SparkGatewayService) -> None:
    before = samples(service)
    handle = service.open_session(SessionEnvironment())
    try:
        assert len(run(service, handle, "SELECT id FROM range(250)")) == 250
        assert "no_such_table_metrics" in error_text(
            service, handle, "SELECT * FROM no_such_table_metrics"
        )
        during = samples(service)
    finally:
        service.close_session(handle)
    after = samples(service)
    done = r'sparkgate_statement_duration_seconds_count\{kind="SparkQuery",outcome="%s"\}'
    assert value(during, done % "finished") - value(before, done % "finished") >= 1
    assert value(during, done % "error") - value(before, done % "error") >= 1
    rows = r"sparkgate_rows_fetched_total\{\}"
    assert value(during, rows) - value(before, rows) >= 250
    assert value(during, r"sparkgate_bytes_fetched_total\{\}") > value(
        before, r"sparkgate_bytes_fetched_total\{\}"
    )
    opened = r"sparkgate_sessions_open\{\}"
    assert value(during, opened) == value(after, opened) + 1
    assert r"sparkgate_engine_restarts_total{}" in after
    assert r"sparkgate_failed_logins_total{}" in after


def test_materialized_table_refreshes_are_counted(service: SparkGatewayService) -> None:
    manual = r'sparkgate_materialized_table_refreshes_total\{trigger="manual"\}'
    before = value(samples(service), manual)
    handle = service.open_session(SessionEnvironment())
    mt = unique_name("metered_mt")
    try:
        run(service, handle, f"CREATE MATERIALIZED TABLE {mt} REFRESH_MODE = FULL AS SELECT 1 AS x")
        run(
            service,
            handle,
            f"ALTER MATERIALIZED TABLE {mt} REFRESH",
            config={"table.dml-sync": "true"},
        )
        assert value(samples(service), manual) == before + 1
    finally:
        run(service, handle, f"DROP MATERIALIZED TABLE IF EXISTS {mt}")
        service.close_session(handle)
