"""Deployed scripts (``deploy_script``, Flink's application mode): real Spark applications.

Each deploy ``spark-submit``s sparkgate's script runner as an application of
its own (``local[1]``): its id comes back, it is listed as a job while it runs
and ends FINISHED or FAILED with its error; STOP JOB ends it; a bad request
harms nothing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import psutil
import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import ConfigurationError, ExecutionError, SqlParseError
from sparkgate.api.jobs import JobInfo, JobStatus
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService

from .conftest import service_on

pytestmark = pytest.mark.timeout(600)

SUBMIT = {"spark.master": "local[1]", "spark.ui.enabled": "false"}


def the_job(service: SparkGatewayService, app_id: str) -> JobInfo:
    [job] = [j for j in service.list_jobs() if j.options.get("spark.app.id") == app_id]
    return job


def ended(service: SparkGatewayService, app_id: str, timeout: float = 240) -> JobInfo:
    deadline = time.monotonic() + timeout
    while not (job := the_job(service, app_id)).status.is_terminal:
        assert time.monotonic() < deadline, job
        time.sleep(0.5)
    return job


def test_a_script_runs_as_an_application_and_is_a_job(spark: SparkSession, tmp_path: Path) -> None:
    out = tmp_path / "out"
    script = (
        f"CREATE TABLE out (id BIGINT, label STRING) WITH ('connector' = 'filesystem', "
        f"'path' = '{out}', 'format' = 'json');\n"
        "SET 'shown.in' = 'the application';\n"
        "INSERT INTO out SELECT id, concat('row ', id) FROM range(5);\n"
    )
    uri_script = tmp_path / "from-a-file.sql"
    uri_script.write_text(
        "INSERT INTO out_again SELECT 1;\n"
        f"CREATE TABLE x (a INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'x'}', "
        "'format' = 'csv');\n"
    )
    with service_on(spark, tmp_path / "data", **SUBMIT) as service:
        session = service.open_session(SessionEnvironment(session_name="deployer"))
        app_id = service.deploy_script(session, script, None, {"pipeline.name": "nightly"})
        assert app_id.startswith("local-")
        job = the_job(service, app_id)
        assert job.name == "nightly" and not job.streaming
        assert job.statement.startswith("CREATE TABLE out")
        done = ended(service, app_id)
        assert done.status is JobStatus.FINISHED, done
        rows = sorted(
            json.loads(line)["id"]
            for f in out.glob("*.json")
            for line in f.read_text().splitlines()
        )
        assert rows == [0, 1, 2, 3, 4]
        log = Path(done.options["application.log"]).read_text()
        assert "> INSERT INTO out" in log
        # A script from a file, failing in its first statement: FAILED, saying why.
        failing = service.deploy_script(session, None, str(uri_script))
        failed = ended(service, failing)
        assert failed.status is JobStatus.FAILED
        assert "out_again" in str(failed.cause)
        assert not (tmp_path / "x").exists()  # the statements after it did not run


def test_stop_job_ends_a_deployed_application(spark: SparkSession, tmp_path: Path) -> None:
    with service_on(spark, tmp_path, **SUBMIT) as service:
        session = service.open_session(SessionEnvironment(session_name="deployer"))
        app_id = service.deploy_script(
            session, "SELECT count(*) FROM range(0, 1000000000000, 1, 400);", None
        )
        job = the_job(service, app_id)
        time.sleep(2)
        service.stop_job(job.job_id)
        assert service.describe_job(job.job_id).status is JobStatus.CANCELED
        alive = [
            p
            for p in psutil.process_iter(["cmdline"])
            if any(str(tmp_path) in part for part in (p.info["cmdline"] or []))
        ]
        deadline = time.monotonic() + 60
        while alive and time.monotonic() < deadline:
            alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
            time.sleep(0.5)
        assert not alive


def test_bad_deploys_are_refused_and_leave_nothing(spark: SparkSession, tmp_path: Path) -> None:
    with service_on(spark, tmp_path, **SUBMIT) as service:
        session = service.open_session(SessionEnvironment(session_name="deployer"))
        with pytest.raises(SqlParseError, match="script"):
            service.deploy_script(session, None, None)
        with pytest.raises(SqlParseError, match="not both"):
            service.deploy_script(session, "SELECT 1;", str(tmp_path / "a.sql"))
        with pytest.raises(ExecutionError, match="Could not read the script"):
            service.deploy_script(session, None, str(tmp_path / "missing.sql"))
        with pytest.raises(SqlParseError, match="scheme"):
            service.deploy_script(session, None, "ftp://example.invalid/a.sql")
        # The session's denied Spark settings hold for its applications too.
        with pytest.raises(ConfigurationError, match=r"spark\.master"):
            service.deploy_script(session, "SELECT 1;", None, {"spark.master": "yarn"})
        assert service.list_jobs() == []
