"""What one benchmark run uses: sizes, repeats, time budgets and Spark settings."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["BenchSettings", "SparkSettings", "settings_for"]


@dataclass(frozen=True)
class SparkSettings:
    """The Spark settings every target gets, so all of them run the same engine."""

    master: str = "local[2]"
    driver_memory: str = "4g"
    shuffle_partitions: int = 2

    def conf(self) -> dict[str, str]:
        """``spark.*`` options shared by the in-process session, the gateway and
        the Thrift server (the Thrift server takes the driver memory as
        ``--driver-memory`` too, since it must be known before its JVM starts)."""
        return {
            "spark.master": self.master,
            "spark.driver.memory": self.driver_memory,
            "spark.sql.shuffle.partitions": str(self.shuffle_partitions),
            "spark.ui.enabled": "false",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.sql.execution.arrow.pyspark.enabled": "true",
        }


@dataclass(frozen=True)
class BenchSettings:
    mode: str
    spark: SparkSettings = field(default_factory=SparkSettings)
    # Latency workloads: warm-up runs (not counted), then measured runs.
    warmup: int = 3
    session_repeats: int = 30
    select1_repeats: int = 30
    set_repeats: int = 20
    # Fetch throughput.
    fetch_small_rows: int = 1_000_000
    fetch_large_rows: int = 10_000_000
    fetch_small_repeats: int = 3
    fetch_large_repeats: int = 2
    # Concurrency.
    concurrent_sessions: int = 32
    queries_per_session: int = 20
    # Memory.
    idle_sessions: int = 1_000
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
    soft_limit_s: float = 13 * 60.0
    hard_limit_s: float = 20 * 60.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def settings_for(quick: bool, spark: SparkSettings) -> BenchSettings:
    if not quick:
        return BenchSettings(mode="full", spark=spark)
    return BenchSettings(
        mode="quick",
        spark=spark,
        warmup=2,
        session_repeats=10,
        select1_repeats=10,
        set_repeats=6,
        fetch_small_rows=100_000,
        fetch_large_rows=1_000_000,
        fetch_small_repeats=2,
        fetch_large_repeats=1,
        concurrent_sessions=16,
        queries_per_session=5,
        idle_sessions=200,
        latency_budget_s=6.0,
        fetch_small_budget_s=10.0,
        fetch_large_budget_s=20.0,
        idle_sessions_budget_s=10.0,
        statement_timeout_s=180.0,
        startup_timeout_s=150.0,
        soft_limit_s=4 * 60.0,
        hard_limit_s=6 * 60.0,
    )
