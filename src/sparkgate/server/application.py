"""The script runner: the driver program of a deployed SQL script (application mode).

``spark-submit`` runs it (:mod:`sparkgate.service.applications`) with
``--home DIR``, which holds ``script.sql`` and ``session.json`` (the session's
properties). It reports its Spark application id in ``DIR/application-id``,
makes a gateway service on the application's own Spark session, runs the
script's statements one by one in one session (each statement's rows go to
its log) and waits for the jobs they started to end. Its exit code says how
it went; its last line, on failure, says why
(``sparkgate-application: <error>``).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from sparkgate.api.config import Configuration
from sparkgate.api.errors import GatewayError
from sparkgate.api.results import ResultType
from sparkgate.api.session import SessionEnvironment
from sparkgate.sql.splitter import split_statements

__all__ = ["main"]

log = logging.getLogger(__name__)

_POLL_S = 0.5


def _run(home: Path) -> None:
    from pyspark.sql import SparkSession

    from sparkgate.service.gateway import SparkGatewayService

    spark = SparkSession.builder.getOrCreate()
    (home / "application-id").write_text(spark.sparkContext.applicationId, encoding="utf-8")
    properties = json.loads((home / "session.json").read_text(encoding="utf-8"))
    config = Configuration({"sql-gateway.data-dir": str(home / "data")})
    service = SparkGatewayService(config, spark=spark)
    service.start()
    try:
        session = service.open_session(
            SessionEnvironment(session_name="application", config=properties)
        )
        script = (home / "script.sql").read_text(encoding="utf-8")
        for statement in split_statements(script):
            if not statement.strip():
                continue
            print(f"> {statement.strip()}", flush=True)
            operation = service.execute_statement(session, statement)
            token: int | None = 0
            while token is not None:
                page = service.fetch_results(session, operation, token, 1000, wait=1.0)
                for row in page.rows():
                    print(" | ".join("NULL" if v is None else str(v) for v in row), flush=True)
                token = None if page.result_type is ResultType.EOS else page.next_token
            service.close_operation(session, operation)
        while any(not job.status.is_terminal for job in service.list_jobs()):
            time.sleep(_POLL_S)
        failed = [job for job in service.list_jobs() if job.status.value == "FAILED"]
        if failed:
            raise GatewayError(f"job {failed[0].name} failed: {failed[0].cause}")
    finally:
        service.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sparkgate-application")
    parser.add_argument("--home", type=Path, required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        _run(args.home)
    except GatewayError as exc:
        print(f"sparkgate-application: {exc}", flush=True)
        return 1
    except Exception as exc:
        log.exception("The script failed")
        print(f"sparkgate-application: {type(exc).__name__}: {exc}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
