"""Job status hooks found by name through the `sparkgate.job_status_hooks` entry
points, and called so that a failing hook breaks nothing."""

from __future__ import annotations

import logging
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkgate.api.errors import ConfigurationError
from sparkgate.api.jobs import JobInfo, JobStatus, JobStatusHook, NoopJobStatusHook
from sparkgate.service.job.hooks import load_hooks, run_hooks

PLUGIN = """
from sparkgate.api.jobs import NoopJobStatusHook

EVENTS = []


class Recorder(NoopJobStatusHook):
    def on_created(self, job):
        EVENTS.append(("created", job.job_id))


def make_recorder():
    return Recorder()


INSTANCE = Recorder()
NOT_A_HOOK = object()
"""


@pytest.fixture
def plugin(tmp_path: Path) -> Iterator[str]:
    """A distribution with job status hooks, installed on sys.path as pip would."""
    module = f"job_hook_plugin_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(PLUGIN))
    dist = tmp_path / "job_hook_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: job-hook-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[sparkgate.job_status_hooks]\n"
        f"recorder = {module}:Recorder\n"
        f"factory = {module}:make_recorder\n"
        f"instance = {module}:INSTANCE\n"
        f"broken = {module}_missing:Hook\n"
        f"not-a-hook = {module}:NOT_A_HOOK\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        yield module
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(module, None)


def job(status: JobStatus, cause: str | None = None) -> JobInfo:
    return JobInfo("j1", "j", status, "INSERT ...", False, time.time(), cause=cause)


def test_hooks_load_by_name_from_classes_factories_and_instances(plugin: str) -> None:
    hooks = load_hooks(["recorder", "factory", "instance"])
    assert all(isinstance(h, JobStatusHook) for h in hooks)
    assert [type(h).__name__ for h in hooks] == ["Recorder"] * 3
    run_hooks(hooks, job(JobStatus.CREATED))
    assert sys.modules[plugin].EVENTS == [("created", "j1")] * 3


def test_an_unknown_hook_name_is_a_configuration_error(plugin: str) -> None:
    with pytest.raises(ConfigurationError, match=r"Unknown job status hook 'recorer'.*'recorder'"):
        load_hooks(["recorer"])


def test_a_hook_that_does_not_load_is_a_configuration_error(plugin: str) -> None:
    with pytest.raises(ConfigurationError, match=r"'broken'.*failed to load"):
        load_hooks(["broken"])
    with pytest.raises(ConfigurationError, match=r"'not-a-hook'.*not a JobStatusHook"):
        load_hooks(["not-a-hook"])


def test_no_names_no_hooks() -> None:
    assert load_hooks([]) == []


class Exploding(NoopJobStatusHook):
    def on_failed(self, job: JobInfo, cause: str) -> None:
        raise RuntimeError("hook broke")


class Recording(NoopJobStatusHook):
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def on_created(self, job: JobInfo) -> None:
        self.seen.append(("created", job.status.value))

    def on_finished(self, job: JobInfo) -> None:
        self.seen.append(("finished", job.status.value))

    def on_failed(self, job: JobInfo, cause: str) -> None:
        self.seen.append(("failed", cause))

    def on_canceled(self, job: JobInfo) -> None:
        self.seen.append(("canceled", job.status.value))


def test_each_status_calls_its_method_and_a_failing_hook_is_logged_and_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recording = Recording()
    hooks = [Exploding(), recording]
    caplog.set_level(logging.ERROR, "sparkgate.service.job.hooks")
    for status, cause in [
        (JobStatus.CREATED, None),
        (JobStatus.RUNNING, None),  # not a hook's business
        (JobStatus.FAILED, "boom"),
        (JobStatus.FINISHED, None),
        (JobStatus.CANCELED, None),
    ]:
        run_hooks(hooks, job(status, cause))
    assert recording.seen == [
        ("created", "CREATED"),
        ("failed", "boom"),
        ("finished", "FINISHED"),
        ("canceled", "CANCELED"),
    ]
    [record] = caplog.records
    assert "Exploding failed on job j1 (FAILED): RuntimeError: hook broke" in record.getMessage()


def test_a_gateway_naming_an_unknown_hook_does_not_start() -> None:
    from sparkgate.api.config import Configuration
    from sparkgate.service.gateway import SparkGatewayService

    config = Configuration({"sql-gateway.job.status-hooks": "no-such-hook"})
    with pytest.raises(ConfigurationError, match="Unknown job status hook 'no-such-hook'"):
        SparkGatewayService(config)
