"""Job status hooks (FLIP-218) run by the job manager: created, then finished, failed
or canceled, whichever session submitted the job and whether or not it still exists;
a failing hook breaks neither the job nor the other hooks. Plus the facade's job
methods, which reach jobs without SQL text."""

from __future__ import annotations

import contextlib
import logging
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import ExecutionError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.jobs import JobInfo, JobStatus, NoopJobStatusHook
from sparkgate.api.service import GatewayService
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService

from .conftest import make_service, run

Event = tuple[str, str, str, str | None]


class Recording(NoopJobStatusHook):
    """Every call, as (method, job id, status seen, cause)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._lock = threading.Lock()

    def _add(self, method: str, job: JobInfo, cause: str | None = None) -> None:
        with self._lock:
            self.events.append((method, job.job_id, job.status.value, cause))

    def of(self, job_id: str) -> list[tuple[str, str, str | None]]:
        with self._lock:
            return [(m, s, c) for m, j, s, c in self.events if j == job_id]

    def on_created(self, job: JobInfo) -> None:
        self._add("created", job)

    def on_finished(self, job: JobInfo) -> None:
        self._add("finished", job)

    def on_failed(self, job: JobInfo, cause: str) -> None:
        self._add("failed", job, cause)

    def on_canceled(self, job: JobInfo) -> None:
        self._add("canceled", job)


class Exploding:
    """A hook whose every method raises (registered before the recording one)."""

    def on_created(self, job: JobInfo) -> None:
        raise RuntimeError("created hook broke")

    def on_finished(self, job: JobInfo) -> None:
        raise RuntimeError("finished hook broke")

    def on_failed(self, job: JobInfo, cause: str) -> None:
        raise RuntimeError("failed hook broke")

    def on_canceled(self, job: JobInfo) -> None:
        raise RuntimeError("canceled hook broke")


@pytest.fixture(scope="module")
def job_service(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SparkGatewayService]:
    svc = make_service(spark, **{"sql-gateway.data-dir": str(tmp_path_factory.mktemp("jobs"))})
    yield svc
    svc.stop()


@pytest.fixture
def hooks(job_service: SparkGatewayService) -> Iterator[Recording]:
    recording = Recording()
    exploding = Exploding()
    job_service.add_job_status_hook(exploding)
    job_service.add_job_status_hook(recording)
    yield recording
    job_service.jobs.remove_hook(exploding)
    job_service.jobs.remove_hook(recording)


@pytest.fixture
def session(job_service: SparkGatewayService) -> Iterator[SessionHandle]:
    handle = job_service.open_session(SessionEnvironment(session_name="jobs"))
    yield handle
    with contextlib.suppress(Exception):
        job_service.close_session(handle)


def name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def new_job(service: SparkGatewayService, before: set[str]) -> JobInfo:
    [job] = [j for j in service.list_jobs() if j.job_id not in before]
    return job


def test_the_facade_has_job_methods() -> None:
    for method in ("list_jobs", "describe_job", "stop_job"):
        assert hasattr(GatewayService, method)


def test_a_batch_insert_is_created_then_finished(
    job_service: SparkGatewayService, session: SessionHandle, hooks: Recording
) -> None:
    target = name("t")
    run(job_service, session, f"CREATE TABLE {target} (id BIGINT) USING parquet")
    run(job_service, session, "SET 'pipeline.name' = 'fill'")
    [(job_id,)] = run(job_service, session, f"INSERT INTO {target} SELECT id FROM range(3)")
    # Synchronous: its hooks have run when the statement returns.
    assert hooks.of(job_id) == [("created", "CREATED", None), ("finished", "FINISHED", None)]
    info = job_service.describe_job(job_id)
    assert (info.name, info.status, info.streaming) == ("fill", JobStatus.FINISHED, False)
    assert info.statement == f"INSERT INTO {target} SELECT id FROM range(3)"
    assert job_id in [j.job_id for j in job_service.list_jobs()]


def test_a_failing_insert_is_created_then_failed_with_its_cause(
    job_service: SparkGatewayService,
    session: SessionHandle,
    hooks: Recording,
    caplog: pytest.LogCaptureFixture,
) -> None:
    target = name("t")
    run(job_service, session, f"CREATE TABLE {target} (id BIGINT) USING parquet")
    before = {j.job_id for j in job_service.list_jobs()}
    caplog.set_level(logging.ERROR, "sparkgate.service.job.hooks")
    with pytest.raises(ExecutionError, match="boom"):
        run(job_service, session, f"INSERT INTO {target} SELECT raise_error('boom') FROM range(1)")
    job = new_job(job_service, before)
    assert job.status is JobStatus.FAILED
    [created, failed] = hooks.of(job.job_id)
    assert created == ("created", "CREATED", None)
    assert failed[:2] == ("failed", "FAILED") and "boom" in str(failed[2])
    assert failed[2] == job.cause
    # The broken hook was logged, with its cause, for both calls; it broke nothing.
    messages = [r.getMessage() for r in caplog.records if job.job_id in r.getMessage()]
    assert any("RuntimeError: created hook broke" in m for m in messages)
    assert any("RuntimeError: failed hook broke" in m for m in messages)


def _streaming_job(
    service: SparkGatewayService, session: SessionHandle, source_options: str = ""
) -> str:
    src, sink = name("src"), name("hole")
    run(
        service,
        session,
        f"CREATE TABLE {src} (a INT) WITH ('connector' = 'datagen'{source_options})",
    )
    run(service, session, f"CREATE TABLE {sink} (a INT) WITH ('connector' = 'blackhole')")
    run(service, session, "SET 'execution.runtime-mode' = 'streaming'")
    [(job_id,)] = run(service, session, f"INSERT INTO {sink} SELECT a FROM {src}")
    return str(job_id)


def test_stop_job_of_a_streaming_job_is_canceled(
    job_service: SparkGatewayService, session: SessionHandle, hooks: Recording
) -> None:
    job_id = _streaming_job(job_service, session)
    assert hooks.of(job_id) == [("created", "CREATED", None)]
    assert job_service.describe_job(job_id).status is JobStatus.RUNNING
    assert run(job_service, session, f"STOP JOB '{job_id}'") == [("OK",)]
    assert hooks.of(job_id) == [("created", "CREATED", None), ("canceled", "CANCELED", None)]


def test_hooks_run_for_a_job_whose_session_was_closed(
    job_service: SparkGatewayService, session: SessionHandle, hooks: Recording
) -> None:
    submitter = job_service.open_session(SessionEnvironment(session_name="gone"))
    # 40 rows at 10 a second: still running when its session is closed below.
    job_id = _streaming_job(
        job_service, submitter, ", 'number-of-rows' = '40', 'rows-per-second' = '10'"
    )
    job_service.close_session(submitter)
    assert job_service.describe_job(job_id).status is JobStatus.RUNNING
    ended = job_service.jobs.wait(job_id, timeout=120)
    assert ended.status is JobStatus.FINISHED
    assert hooks.of(job_id) == [("created", "CREATED", None), ("finished", "FINISHED", None)]


def test_the_facade_stops_a_job_with_a_savepoint(
    job_service: SparkGatewayService, session: SessionHandle, hooks: Recording
) -> None:
    job_id = _streaming_job(job_service, session, ", 'rows-per-second' = '5'")
    stopped = job_service.stop_job(job_id, with_savepoint=True)
    assert stopped.status is JobStatus.FINISHED
    assert stopped.savepoint is not None and Path(stopped.savepoint).is_dir()
    assert job_service.describe_job(job_id) == stopped
    assert hooks.of(job_id)[-1] == ("finished", "FINISHED", None)
    with pytest.raises(ExecutionError, match="not running"):
        job_service.stop_job(job_id)
    with pytest.raises(ExecutionError, match="Could not find job 'nope'"):
        job_service.describe_job("nope")


PLUGIN = """
from sparkgate.api.jobs import NoopJobStatusHook

EVENTS = []


class Recorder(NoopJobStatusHook):
    def on_created(self, job):
        EVENTS.append(("created", job.job_id))

    def on_finished(self, job):
        EVENTS.append(("finished", job.job_id))
"""


def test_a_hook_named_in_the_configuration_is_found_through_its_entry_point(
    spark: SparkSession, tmp_path: Path
) -> None:
    module = f"job_hook_plugin_{uuid.uuid4().hex[:8]}"
    plugin_dir = tmp_path / "site"
    dist = plugin_dir / "job_hook_recorder-1.0.dist-info"
    dist.mkdir(parents=True)
    (plugin_dir / f"{module}.py").write_text(textwrap.dedent(PLUGIN))
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: job-hook-recorder\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[sparkgate.job_status_hooks]\nrecorder = {module}:Recorder\n"
    )
    sys.path.insert(0, str(plugin_dir))
    try:
        service = make_service(
            spark,
            **{
                "sql-gateway.data-dir": str(tmp_path / "data"),
                "sql-gateway.job.status-hooks": "recorder",
            },
        )
        try:
            session = service.open_session(SessionEnvironment())
            target = name("t")
            run(service, session, f"CREATE TABLE {target} (id BIGINT) USING parquet")
            [(job_id,)] = run(service, session, f"INSERT INTO {target} SELECT 1")
            events = sys.modules[module].EVENTS
            assert events == [("created", job_id), ("finished", job_id)]
        finally:
            service.stop()
    finally:
        sys.path.remove(str(plugin_dir))
        sys.modules.pop(module, None)
