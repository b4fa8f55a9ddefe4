"""SQL scripts deployed as Spark applications of their own (Flink's application mode).

``POST /v4/sessions/:session_handle/scripts`` hands a script (inline, or a
``scriptUri``: a file path, ``file:``, ``http(s):``) to :class:`ScriptDeployer`.
It ``spark-submit``s sparkgate's script runner (``sparkgate.server.application``)
with the gateway's Spark settings and the request's ``spark.*`` options (those
a session may set), to the gateway's ``spark.master``, in the deploy mode of
its ``spark.submit.deployMode`` (client unless set; Spark runs Python drivers
in cluster mode on YARN and Kubernetes, not on a standalone master). The runner makes a
gateway service on its own Spark session, runs the script's statements in
one session (the request's other options are its properties) and waits for
the jobs they started. The deploy answers the Spark application id once the
application's driver runs; the application is a job of the job manager
(SHOW JOBS, DESCRIBE JOB, STOP JOB), RUNNING while it runs and FINISHED or
FAILED as it ends. Its files (the script, its log) are under
``<data-dir>/applications/<job id>/``.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from sparkgate.api.errors import ExecutionError, SqlParseError
from sparkgate.service.spark.java import spark_home

if TYPE_CHECKING:
    from pyspark import SparkContext

    from sparkgate.service.job.manager import JobManager

__all__ = ["ScriptDeployer"]

log = logging.getLogger(__name__)

_RUNNER = "sparkgate.server.application"
_MAX_SCRIPT_BYTES = 16 << 20
_START_TIMEOUT_S = 180.0
_ID_FILE = "application-id"
_LOG_FILE = "application.log"


def _spark_submit() -> Path:
    return spark_home() / "bin" / "spark-submit"


def _runner() -> str:
    spec = importlib.util.find_spec(_RUNNER)
    if spec is None or spec.origin is None:
        raise ExecutionError(f"The script runner {_RUNNER} is not installed")
    return spec.origin


def read_script(script: str | None, uri: str | None) -> str:
    """The script's text: given inline, or read from ``uri``."""
    if script is not None and script.strip():
        if uri:
            raise SqlParseError("Give either a script or a scriptUri, not both")
        return script
    if not uri:
        raise SqlParseError("A script to deploy is missing: give script or scriptUri")
    parts = urllib.parse.urlsplit(uri)
    try:
        if parts.scheme in ("", "file"):
            path = Path(urllib.parse.unquote(parts.path) if parts.scheme else uri)
            with path.open("rb") as handle:
                data = handle.read(_MAX_SCRIPT_BYTES + 1)
        elif parts.scheme in ("http", "https"):
            with urllib.request.urlopen(uri, timeout=30) as response:
                data = response.read(_MAX_SCRIPT_BYTES + 1)
        else:
            raise SqlParseError(
                f"Unsupported scriptUri scheme {parts.scheme!r}: use a file path, file:, "
                "http: or https:"
            )
    except OSError as exc:
        raise ExecutionError(f"Could not read the script {uri}: {exc}") from exc
    if len(data) > _MAX_SCRIPT_BYTES:
        raise SqlParseError(f"The script {uri} is larger than {_MAX_SCRIPT_BYTES >> 20} MB")
    return data.decode("utf-8")


class ScriptDeployer:
    """Deploys scripts as Spark applications, each a job of ``jobs``."""

    def __init__(self, jobs: JobManager, data_dir: Path, spark_conf: Mapping[str, str]) -> None:
        self._jobs = jobs
        self._root = data_dir / "applications"
        self._spark_conf = dict(spark_conf)

    def deploy(
        self,
        sc: SparkContext,
        script: str,
        properties: Mapping[str, str],
        options: Mapping[str, str],
        user: str | None,
    ) -> str:
        """Start the application; its Spark application id once its driver runs.

        ``properties`` are the deploying session's, ``options`` the request's
        ``executionConfig`` (over them).
        """
        merged = {**properties, **options}
        spark = {**self._spark_conf, **{k: v for k, v in merged.items() if k.startswith("spark.")}}
        session = {k: v for k, v in merged.items() if not k.startswith("spark.")}
        name = merged.get("pipeline.name") or f"script-{uuid.uuid4().hex[:8]}"
        home = self._root / uuid.uuid4().hex
        home.mkdir(parents=True, mode=0o700)
        (home / "script.sql").write_text(script, encoding="utf-8")
        (home / "session.json").write_text(json.dumps(session), encoding="utf-8")
        deploy_mode = spark.pop("spark.submit.deployMode", "client")
        command = [
            str(_spark_submit()),
            "--master",
            spark.pop("spark.master", "local[*]"),
            "--deploy-mode",
            deploy_mode,
            "--name",
            name,
        ]
        spark.setdefault("spark.pyspark.python", sys.executable)
        spark.setdefault("spark.pyspark.driver.python", sys.executable)
        for key, value in sorted(spark.items()):
            command += ["--conf", f"{key}={value}"]
        command += [_runner(), "--home", str(home)]
        env = {
            **os.environ,
            "SPARK_HOME": str(_spark_submit().parent.parent),
            "PYSPARK_PYTHON": spark["spark.pyspark.python"],
        }
        env.pop("SPARK_CONF_DIR", None)
        log.info("Deploying script %s as a Spark application (%s mode)", name, deploy_mode)
        with open(home / _LOG_FILE, "ab") as out:
            process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=home,
                env=env,
                start_new_session=True,
            )
        app_id = self._started(process, home)

        def run() -> None:
            code = process.wait()
            if code != 0:
                raise ExecutionError(
                    f"The application {app_id} ended with exit code {code}: {_last_error(home)}"
                )

        def cancel() -> None:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)

        self._jobs.submit_batch(
            sc,
            script,
            name,
            run,
            options={"spark.app.id": app_id, "application.log": str(home / _LOG_FILE)},
            user=user,
            cancel=cancel,
        )
        return app_id

    def _started(self, process: subprocess.Popen[bytes], home: Path) -> str:
        """The application id the runner reports once its driver runs."""
        deadline = time.monotonic() + _START_TIMEOUT_S
        id_file = home / _ID_FILE
        while True:
            if id_file.exists() and id_file.read_text().strip():
                return id_file.read_text().strip()
            if process.poll() is not None:
                raise ExecutionError(
                    f"The application did not start (exit code {process.returncode}): "
                    f"{_last_error(home)}"
                )
            if time.monotonic() > deadline:
                os.killpg(process.pid, signal.SIGKILL)
                raise ExecutionError(
                    f"The application did not start within {_START_TIMEOUT_S:.0f} s; "
                    f"see {home / _LOG_FILE}"
                )
            time.sleep(0.1)


def _last_error(home: Path) -> str:
    """The runner's own error line, else the last lines of the application's log."""
    try:
        lines = (home / _LOG_FILE).read_text(errors="replace").splitlines()
    except OSError:
        return "no log"
    for line in reversed(lines):
        if line.startswith("sparkgate-application: "):
            return line.split(": ", 1)[1]
    useful = [line for line in lines if line.strip() and not line.startswith("\t")]
    return " | ".join(useful[-3:]) or "no output"
