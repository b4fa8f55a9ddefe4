"""Shared pytest fixtures, and the test tiers.

Service tests share one SparkSession for the whole run: starting the JVM
costs seconds, so a fresh session per test would dominate the suite's time.

Every test gets tier markers (declared in pyproject.toml) from its directory
and the fixtures it uses, so ``pytest -m unit`` runs in seconds:

- ``service``: it uses the shared Spark session (``spark``, or a fixture
  that builds on it), or its module starts Spark itself;
- ``e2e``: it starts a real gateway (or benchmark) process;
- ``clients``: it drives a real third-party client;
- ``defaults``: it is in tests/defaults (and starts a real gateway: ``e2e`` too);
- ``unit``: none of these: no JVM. A unit test that starts Spark anyway fails
  at once (see :func:`_refuse_spark_in_unit_tests`), so a wrong tier cannot
  slow ``-m unit`` down unnoticed.

A module may set its tier itself (``pytestmark = pytest.mark.service``);
then nothing is derived for its tests.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# A real OpenLDAP server, a real PostgreSQL server and a real Kafka broker
# (session scope), for every test that asks for one.
from tests.kafka_broker import kafka as kafka
from tests.ldap_server import slapd as slapd
from tests.postgres import postgres as postgres
from tests.processes import MASTER_ENV
from tests.tls import certificates as certificates

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["TIERS", "spark"]

TIERS = ("unit", "service", "e2e", "clients", "defaults")

_TESTS = Path(__file__).resolve().parent

# Fixtures that are (or build on) the shared Spark session. ``make_executor``
# asks for the client service by name at run time, so its closure hides it.
_SPARK_FIXTURES = frozenset({"spark", "make_executor"})
# Spark-backed fixtures a test may ask for by name at run time, the name a parameter.
_SPARK_FIXTURES_BY_NAME = frozenset({"hs2", "hs2_plain", "endpoint", "client_service"})
# Fixtures that start a real gateway process.
_PROCESS_FIXTURES = frozenset({"gateway_process", "default_gateway"})
# Directories whose every test starts a real process.
_PROCESS_DIRECTORIES = frozenset({"e2e", "bench", "defaults"})
# Modules (relative to tests/) and the tiers every test in them has beyond the derived ones.
_MODULE_TIERS: dict[str, tuple[str, ...]] = {
    # Starts its own Spark (engine start-up and its failures), not the shared one.
    "service/test_engine.py": ("service",),
    # The real `sparkgate` SQL client in a terminal, on a gateway process or embedded Spark.
    "client/test_repl.py": ("e2e",),
    # PyHive, SQLAlchemy, impyla, beeline and dbt-spark; half of them on a real gateway process.
    "hiveserver2/test_clients.py": ("clients",),
    "e2e/test_flink_client.py": ("clients",),  # py-flink-sql-gateway
    "e2e/test_flink_jdbc_driver.py": ("clients",),  # Flink's JDBC driver
    "e2e/test_documented_commands.py": ("clients",),  # beeline, as the docs say
    "e2e/test_table_as_select_e2e.py": ("clients",),  # beeline on a PostgreSQL catalog
    "e2e/test_secure_deployment.py": ("clients",),  # curl, PyHive, impyla, beeline, dbt
    "e2e/test_cluster.py": ("clients",),  # PyHive on a Spark cluster
}
# Module-local fixtures that start a real gateway process.
_MODULE_PROCESS_FIXTURES = {"hiveserver2/test_clients.py": frozenset({"gateway"})}


def _fixtures(item: pytest.Item) -> frozenset[str]:
    """The fixtures ``item`` uses: its closure, and fixtures it names in a parameter."""
    names = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        names |= {v for v in callspec.params.values() if isinstance(v, str)} & (
            _SPARK_FIXTURES_BY_NAME
        )
    return frozenset(names)


def _tiers(relative: str, fixtures: frozenset[str]) -> set[str]:
    tiers = set(_MODULE_TIERS.get(relative, ()))
    directory = relative.split("/", 1)[0]
    if directory == "defaults":
        tiers.add("defaults")
    if directory in _PROCESS_DIRECTORIES or fixtures & (
        _PROCESS_FIXTURES | _MODULE_PROCESS_FIXTURES.get(relative, frozenset())
    ):
        tiers.add("e2e")
    if fixtures & (_SPARK_FIXTURES | _SPARK_FIXTURES_BY_NAME):
        tiers.add("service")
    return tiers or {"unit"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(tier) for tier in TIERS):
            continue  # the module chose its tier
        try:
            relative = item.path.resolve().relative_to(_TESTS).as_posix()
        except ValueError:
            continue  # not one of ours
        fixtures = _fixtures(item)
        for tier in sorted(_tiers(relative, fixtures)):
            item.add_marker(tier)


# -- the unit tier starts no Spark --------------------------------------------------

_in_unit_test = False


def _starts_spark(args: Sequence[str]) -> bool:
    """Whether a command line starts a JVM for Spark: spark-submit, a gateway, the
    SQL client (embedded mode starts Spark), the benchmark."""
    words = [os.path.basename(a) for a in args]
    if any(w in ("spark-submit", "spark-submit.cmd") for w in words):
        return True
    product = "sparkgate" in words or "sparkgate.cli" in words
    if product and any(w in ("gateway", "sql-client", "start", "start-foreground") for w in words):
        return True
    return "bench" in words and "-m" in words


# (event, index of the argument list): the ways a test may start a program.
_SPAWN_EVENTS = {"subprocess.Popen": 1, "os.exec": 1, "os.posix_spawn": 1, "os.spawn": 2}


def _refuse_spark_in_unit_tests(event: str, args: tuple[Any, ...]) -> None:
    """Audit hook: a program that would start Spark during a unit test is an error."""
    index = _SPAWN_EVENTS.get(event)
    if not _in_unit_test or index is None or len(args) <= index:
        return
    raw = args[index]
    command = [os.fsdecode(a) for a in (raw if isinstance(raw, (list, tuple)) else [raw])]
    if _starts_spark(command):
        raise RuntimeError(
            f"A test in the unit tier started Spark ({' '.join(command)[:200]}). "
            "Unit tests run without a JVM: use the GatewayService double (tests/doubles.py), "
            "or give the test a Spark fixture so that it is in the service tier."
        )


def pytest_configure(config: pytest.Config) -> None:
    # Audit hooks cannot be removed; this one does nothing outside unit tests.
    sys.addaudithook(_refuse_spark_in_unit_tests)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    global _in_unit_test
    _in_unit_test = item.get_closest_marker("unit") is not None
    try:
        return (yield)
    finally:
        _in_unit_test = False


# -- where the suite's time goes ------------------------------------------------

_module_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # Setup and teardown count too: a module's gateway starts in its first setup.
    module = report.nodeid.split("::", 1)[0]
    _module_seconds[module] = _module_seconds.get(module, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The slowest test modules, setup and teardown included: what a faster
    ``make test`` would have to shorten."""
    if not _module_seconds:
        return
    ranked = sorted(_module_seconds.items(), key=lambda kv: kv[1], reverse=True)
    total = sum(_module_seconds.values())
    terminalreporter.section(f"slowest modules (of {total:.0f} s in tests)")
    for module, seconds in ranked[:30]:
        terminalreporter.write_line(f"{seconds:8.1f} s  {100 * seconds / total:4.1f} %  {module}")


#: ``make test-cluster`` sets it: the gateways the tests start run on a standalone cluster.
CLUSTER_ENV = "SPARKGATE_TEST_CLUSTER"


@pytest.fixture(scope="session", autouse=True)
def _test_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """With ``SPARKGATE_TEST_CLUSTER=standalone``: a Spark master and two workers
    (three cores each) on loopback, started from pyspark's own classes for the whole
    run, and every test gateway pointed at it (tests/processes.spark_options)."""
    if os.environ.get(CLUSTER_ENV, "").strip() != "standalone":
        yield
        return
    from sparkgate.server.cluster import LocalCluster

    directory = tmp_path_factory.mktemp("cluster")
    with LocalCluster(2, cores=3, memory="3g", directory=directory) as cluster:
        os.environ[MASTER_ENV] = cluster.master_url
        try:
            yield
        finally:
            os.environ.pop(MASTER_ENV, None)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """The engine's session on ``local[2]``, its data dir (metastore, warehouse,
    logs) in a tmp dir so nothing is written into the repository."""
    from sparkgate.service.spark.engine import start_spark, stop_spark

    session = start_spark(
        {
            "spark.master": "local[2]",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "4",
        },
        tmp_path_factory.mktemp("spark-data"),
        app_name="sparkgate-tests",
    )
    try:
        yield session
    finally:
        stop_spark()
