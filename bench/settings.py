"""What one benchmark run uses: sizes, repeats, time budgets and Spark settings."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["BenchSettings", "SparkSettings", "settings_for"]


@dataclass(frozen=True)
class SparkSettings:
    """The Spark settings every target gets, so all of them run the same engine."""

    master: str = "local[2]"
    #: None: the engine's own default (sparkgate's 2g, Spark's 1g).
    driver_memory: str | None = "4g"
    shuffle_partitions: int = 2

    def conf(self) -> dict[str, str]:
        """``spark.*`` options shared by the in-process session, the gateway and
        the Thrift server (the Thrift server takes the driver memory as
        ``--driver-memory`` too, since it must be known before its JVM starts)."""
        conf = {
            "spark.master": self.master,
            "spark.sql.shuffle.partitions": str(self.shuffle_partitions),
            "spark.ui.enabled": "false",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.sql.execution.arrow.pyspark.enabled": "true",
        }
        if self.driver_memory is not None:
            conf["spark.driver.memory"] = self.driver_memory
        return conf


@dataclass(frozen=True)
class BenchSettings:
    mode: str
    spark: SparkSettings = field(default_factory=SparkSettings)
    # Latency workloads: warm-up runs (not counted), at least ``warmup`` of them and
    # for at least ``warmup_s`` seconds per target, then measured runs. A fresh JVM
    # compiles the statement path for a hundred runs or more (a server's steady state
    # is what its users meet), so a few runs would measure the JIT instead.
    warmup: int = 3
    warmup_s: float = 10.0
    session_repeats: int = 30
    select1_repeats: int = 30
    select100_repeats: int = 30
    set_repeats: int = 20
    # Fetch throughput.
    fetch_small_rows: int = 1_000_000
    fetch_large_rows: int = 10_000_000
    fetch_small_repeats: int = 3
    fetch_large_repeats: int = 2
    # Concurrency: (sessions at once, queries each) per level. The same number of
    # queries at both levels, so the higher one does not lengthen the run much.
    concurrency_levels: tuple[tuple[int, int], ...] = ((32, 20), (128, 5))
    # Memory.
    idle_sessions: int = 1_000
    # Large results (rows through the REST gateway, with its result defaults).
    large_result_rows: tuple[int, ...] = (50_000_000, 200_000_000)
    # In-process toArrow() holds the whole result twice (JVM and Python): the
    # larger sizes are reported as not attempted.
    large_result_inprocess_max_rows: int = 50_000_000
    # Also run it on a gateway with the engine's default driver memory.
    large_result_default_gateway: bool = True
    # Recovery: the fetch timed with and without result spooling.
    recovery_fetch_rows: int = 1_000_000
    recovery_fetch_repeats: int = 3
    # Fair sharing: short queries while one long scan runs in another session.
    # 10 M rows per task; about 40 s on two idle cores.
    # Kafka: records in the topic; runs of each pipeline per side; single records
    # timed through a streaming SELECT.
    kafka_records: int = 1_000_000
    kafka_repeats: int = 3
    kafka_latency_records: int = 50
    fair_scan_rows: int = 8_000_000_000
    fair_scan_partitions: int = 800
    # Short queries stop when the scan ends or after this long (then it is cancelled).
    fair_window_s: float = 120.0
    # Pause after submitting the scan, so its tasks hold the cores first.
    fair_settle_s: float = 2.0
    fair_idle_queries: int = 10
    # Seconds one target may spend on the repeats of one workload; at least one
    # measured run always happens, so a slow target gets fewer repeats.
    latency_budget_s: float = 20.0
    fetch_small_budget_s: float = 45.0
    fetch_large_budget_s: float = 60.0
    idle_sessions_budget_s: float = 40.0
    # Timeouts: one statement (execute + fetch), and server start-up.
    statement_timeout_s: float = 600.0
    startup_timeout_s: float = 240.0
    # No further workload starts past the soft limit (the rest are reported as
    # skipped); past the hard limit the run is aborted and the servers stopped.
    soft_limit_s: float = 30 * 60.0
    hard_limit_s: float = 40 * 60.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def settings_for(quick: bool, spark: SparkSettings) -> BenchSettings:
    if not quick:
        return BenchSettings(mode="full", spark=spark)
    return BenchSettings(
        mode="quick",
        spark=spark,
        warmup=2,
        warmup_s=2.0,
        session_repeats=10,
        select1_repeats=10,
        select100_repeats=10,
        set_repeats=6,
        fetch_small_rows=100_000,
        fetch_large_rows=1_000_000,
        fetch_small_repeats=2,
        fetch_large_repeats=1,
        concurrency_levels=((16, 5), (64, 2)),
        idle_sessions=200,
        # 5 M rows is past sql-gateway.result.direct-size (32 MiB by Spark's
        # estimate): relayed as in full mode, not collected.
        large_result_rows=(5_000_000, 10_000_000),
        large_result_inprocess_max_rows=10_000_000,
        large_result_default_gateway=False,
        recovery_fetch_rows=200_000,
        recovery_fetch_repeats=2,
        kafka_records=100_000,
        kafka_repeats=2,
        kafka_latency_records=10,
        fair_scan_rows=1_200_000_000,
        fair_scan_partitions=120,
        fair_window_s=30.0,
        fair_settle_s=1.0,
        fair_idle_queries=5,
        latency_budget_s=6.0,
        fetch_small_budget_s=10.0,
        fetch_large_budget_s=20.0,
        idle_sessions_budget_s=10.0,
        statement_timeout_s=180.0,
        startup_timeout_s=150.0,
        soft_limit_s=8 * 60.0,
        hard_limit_s=12 * 60.0,
    )
