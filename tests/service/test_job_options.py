"""A job keeps the options it ran under: the session's configuration with the
statement's own (REST ``executionConfig``, HiveServer2 ``confOverlay``) over
it, secret values masked, in its record of the job store too."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from sparkgate.api.handles import SessionHandle
from sparkgate.api.jobs import JobStatus
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService

from .conftest import run, service_on, unique_name


def open_session(service: SparkGatewayService) -> SessionHandle:
    return service.open_session(SessionEnvironment(session_name="options"))


def test_a_batch_job_keeps_its_statements_options_in_the_store(
    spark: SparkSession, tmp_path: Path
) -> None:
    target = unique_name("t")
    with service_on(spark, tmp_path) as first:
        session = open_session(first)
        run(first, session, f"CREATE TABLE {target} (id BIGINT) USING parquet")
        run(first, session, "SET 'table.dml-sync' = 'true'")
        run(first, session, "SET 'sink.password' = 'hunter2'")
        overlay = {"pipeline.name": "nightly", "execution.runtime-mode": "batch"}
        [(job_id,)] = run(
            first, session, f"INSERT INTO {target} SELECT id FROM range(3)", config=overlay
        )
        [(plain,)] = run(first, session, f"INSERT INTO {target} SELECT id FROM range(1)")
        options = first.describe_job(job_id).options
        assert options["pipeline.name"] == "nightly"
        assert options["execution.runtime-mode"] == "batch"
        assert options["table.dml-sync"] == "true"  # the session's, under the statement's
        assert options["sink.password"] == "******"
        # The overlay was that statement's only.
        assert "pipeline.name" not in first.describe_job(plain).options
    assert "hunter2" not in "".join(p.read_text() for p in tmp_path.rglob("*.json"))
    with service_on(spark, tmp_path) as second:
        stored = second.describe_job(job_id)
        assert stored.status is JobStatus.FINISHED
        assert dict(stored.options) == dict(options)


def test_a_streaming_job_keeps_its_runtime_mode_and_name(
    spark: SparkSession, tmp_path: Path
) -> None:
    src, sink = unique_name("src"), unique_name("hole")
    with service_on(spark, tmp_path) as service:
        session = open_session(service)
        run(service, session, f"CREATE TABLE {src} (a INT) WITH ('connector' = 'datagen')")
        run(service, session, f"CREATE TABLE {sink} (a INT) WITH ('connector' = 'blackhole')")
        overlay = {"pipeline.name": "endless", "execution.runtime-mode": "streaming"}
        [(job_id,)] = run(
            service, session, f"INSERT INTO {sink} SELECT a FROM {src}", config=overlay
        )
        try:
            job = service.describe_job(job_id)
            assert job.streaming
            assert (job.options["pipeline.name"], job.options["execution.runtime-mode"]) == (
                "endless",
                "streaming",
            )
        finally:
            service.stop_job(job_id)
