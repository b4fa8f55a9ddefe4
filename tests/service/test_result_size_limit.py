"""spark.driver.maxResultSize: an oversized collect fails its statement, the engine lives.

The gateway starts Spark with a quarter of the driver's memory as the limit
(tests/unit/test_engine_conf.py). Spark reads the limit from the SparkContext's
conf each time a stage's task set is made (``TaskSetManager.maxResultSize``), so
the test lowers it on the shared engine for one statement.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from sparkgate.api.errors import ExecutionError
from sparkgate.api.handles import SessionHandle
from sparkgate.api.status import OperationStatus
from sparkgate.service.gateway import SparkGatewayService

from .conftest import fetch_all, run

__all__: list[str] = []

_KEY = "spark.driver.maxResultSize"


@pytest.fixture
def one_mebibyte_limit(spark: SparkSession) -> Iterator[None]:
    conf = spark.sparkContext._jsc.sc().conf()  # the live SparkConf, not a copy
    previous = conf.getOption(_KEY)
    conf.set(_KEY, "1m")
    try:
        yield
    finally:
        if previous.isDefined():
            conf.set(_KEY, previous.get())
        else:
            conf.remove(_KEY)


@pytest.mark.usefixtures("one_mebibyte_limit")
def test_an_oversized_collect_fails_its_statement_not_the_engine(
    service: SparkGatewayService, session: SessionHandle
) -> None:
    # 4 MiB a partition, Spark's size estimate small (a string is 20 bytes to it):
    # the result is collected, a window of partitions per Spark job.
    op = service.execute_statement(
        session, "SELECT repeat('x', 1048576) AS s FROM range(0, 8, 1, 2)"
    )
    with pytest.raises(ExecutionError) as info:
        fetch_all(service, session, op)
    text = "\n".join((str(info.value), info.value.root_cause, *info.value.causes))
    assert "bigger than spark.driver.maxResultSize" in text, text
    assert service.get_operation_info(session, op).status is OperationStatus.ERROR
    # The engine and the session go on.
    assert run(service, session, "SELECT count(*) FROM range(10)") == [(10,)]
