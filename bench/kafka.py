"""The ``kafka`` workload: Kafka pipelines through sparkgate against the same
pipelines written directly in PySpark Structured Streaming, in one process.

A single-node broker (``sparkgate.server.broker``) gets ``kafka_records`` JSON
records, written by the in-process Spark with the same Kafka connector. Then,
alternating sparkgate (REST, a streaming ``INSERT`` job) and in-process PySpark
(``readStream ... writeStream`` with ``trigger(availableNow=True)``), each
reading the topic from its start to the end it has when it starts:

* ``files``: the records into Parquet files (a filesystem table);
* ``upsert``: a ``GROUP BY`` of them into an upsert-kafka topic (each
  micro-batch's changed groups written as upserts).

Records per second of each (after one untimed run each), and sparkgate's over
PySpark's. Then latency: a
streaming ``SELECT`` over REST (default trigger) on the topic while single
records are produced; a record's latency is the time its row reaches the
client after its Kafka timestamp (the same clock), p50 and p99.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.recovery import rows_of
from bench.stats import percentile
from bench.targets.base import BenchError
from bench.targets.inprocess import InProcessTarget
from bench.targets.rest import API, RestClient, RestTarget

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bench.workloads import Context

__all__ = ["run_kafka"]

log = logging.getLogger(__name__)

Result = dict[str, Any]

_COLUMNS = "id BIGINT, name STRING, amount DOUBLE"
_GROUPS = 1000


@contextlib.contextmanager
def _broker() -> Iterator[str]:
    from sparkgate.server.broker import broker_jars, start_broker

    jars = broker_jars(Path.home() / ".sparkgate" / "packages" / "kafka-broker")
    with start_broker(jars) as broker:
        yield broker.bootstrap


def _produce(spark: SparkSession, bootstrap: str, topic: str, rows: int, start: int = 0) -> None:
    frame = spark.range(start, start + rows).selectExpr(
        "to_json(named_struct('id', id, 'name', concat('n', id), 'amount', id * 1.5)) AS value"
    )
    frame.write.format("kafka").option("kafka.bootstrap.servers", bootstrap).option(
        "topic", topic
    ).save()


def _direct(spark: SparkSession, bootstrap: str, topic: str, out: Path, kind: str) -> float:
    """Seconds of the pipeline in PySpark Structured Streaming, to its end."""
    source = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr(f"from_json(CAST(value AS STRING), '{_COLUMNS}') AS r")
        .selectExpr("r.*")
    )
    began = time.monotonic()
    if kind == "files":
        writer = source.selectExpr("id", "name").writeStream.format("parquet")
        writer = writer.option("path", str(out / "data"))
    else:
        sink_topic = f"direct-{uuid.uuid4().hex[:8]}"

        def upsert(batch: Any, _batch_id: int) -> None:
            batch.selectExpr(
                "to_json(named_struct('k', k)) AS key",
                "to_json(named_struct('k', k, 'n', n, 'total', total)) AS value",
            ).write.format("kafka").option("kafka.bootstrap.servers", bootstrap).option(
                "topic", sink_topic
            ).save()

        grouped = source.selectExpr(f"id % {_GROUPS} AS k", "amount").groupBy("k")
        aggregated = grouped.agg({"*": "count", "amount": "sum"}).toDF("k", "n", "total")
        writer = aggregated.writeStream.outputMode("update").foreachBatch(upsert)
    query = (
        writer.option("checkpointLocation", str(out / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return time.monotonic() - began


_POLL_S = 0.5


def _epoch(shown: str) -> float:
    """DESCRIBE JOB's local time (``2026-01-02T03:04:05.678``) in seconds since the epoch."""
    whole, _, millis = shown.partition(".")
    return time.mktime(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + int(millis or 0) / 1000


def _gateway(client: RestClient, bootstrap: str, topic: str, out: Path, kind: str) -> float:
    """Seconds of the same pipeline as a sparkgate job, from submit to the end
    time DESCRIBE JOB gives it."""
    session = str(client.json("POST", f"{API}/sessions", {"sessionName": "kafka"})["sessionHandle"])
    tag = uuid.uuid4().hex[:8]
    try:
        rows_of(
            client,
            session,
            f"CREATE TABLE src_{tag} ({_COLUMNS}) WITH ('connector' = 'kafka', 'topic' = "
            f"'{topic}', 'properties.bootstrap.servers' = '{bootstrap}', "
            "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', "
            "'format' = 'json')",
        )
        if kind == "files":
            rows_of(
                client,
                session,
                f"CREATE TABLE out_{tag} (id BIGINT, name STRING) WITH ('connector' = "
                f"'filesystem', 'path' = '{out / 'data'}', 'format' = 'parquet')",
            )
            insert = f"INSERT INTO out_{tag} SELECT id, name FROM src_{tag}"
        else:
            rows_of(
                client,
                session,
                f"CREATE TABLE out_{tag} (k BIGINT, n BIGINT, total DOUBLE, PRIMARY KEY (k) "
                f"NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'gw-{tag}', "
                f"'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'json', "
                "'value.format' = 'json')",
            )
            insert = (
                f"INSERT INTO out_{tag} SELECT id % {_GROUPS}, count(*), sum(amount) "
                f"FROM src_{tag} GROUP BY id % {_GROUPS}"
            )
        submitted = time.time()
        [[job_id]] = rows_of(client, session, insert, {"execution.runtime-mode": "streaming"})
        deadline = time.monotonic() + 1800
        while True:
            # The job's own end time is the measure: the polls can be rare, so
            # that they take no CPU from the pipeline on a small machine.
            [row] = rows_of(client, session, f"DESCRIBE JOB '{job_id}'")
            if row[2] in ("FINISHED", "FAILED", "CANCELED"):
                break
            if time.monotonic() > deadline:
                raise BenchError(f"kafka/{kind}: job {job_id} did not end")
            time.sleep(_POLL_S)
        if row[2] != "FINISHED":
            raise BenchError(f"kafka/{kind}: job {job_id} {row[2]}")
        return _epoch(str(row[4])) - submitted
    finally:
        client.json("DELETE", f"{API}/sessions/{session}")


def _latency(
    client: RestClient, spark: SparkSession, bootstrap: str, topic: str, count: int
) -> list[float]:
    """Milliseconds from each record's Kafka timestamp to its row at the client."""
    session = str(
        client.json("POST", f"{API}/sessions", {"sessionName": "latency"})["sessionHandle"]
    )
    latencies: list[float] = []
    try:
        rows_of(
            client,
            session,
            f"CREATE TABLE live ({_COLUMNS}, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' "
            f"VIRTUAL) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
            f"'properties.bootstrap.servers' = '{bootstrap}', 'scan.startup.mode' = "
            "'latest-offset', 'format' = 'json')",
        )
        body = {
            "statement": "SELECT id, unix_millis(ts) FROM live",
            "executionConfig": {"execution.runtime-mode": "streaming"},
        }
        operation = client.json("POST", f"{API}/sessions/{session}/statements", body)
        base = f"{API}/sessions/{session}/operations/{operation['operationHandle']}"
        uri: str | None = f"{base}/result/0?rowFormat=JSON"
        time.sleep(5)  # the query has started and read its starting offsets
        seen = 0
        while seen < count and uri:
            _produce(spark, bootstrap, topic, 1, start=10_000_000 + seen)
            deadline = time.monotonic() + 60
            got = False
            while not got and uri:
                page = client.json("GET", uri)
                now_ms = time.time() * 1000
                for row in (page.get("results") or {}).get("data", []):
                    latencies.append(now_ms - float(row["fields"][1]))
                    got = True
                nxt = page.get("nextResultUri")
                uri = "/" + nxt.lstrip("/") if nxt else None
                if time.monotonic() > deadline:
                    raise BenchError("kafka/latency: a record did not arrive in 60 s")
            seen += 1
        client.json("DELETE", f"{base}/close")
    finally:
        client.json("DELETE", f"{API}/sessions/{session}")
    return latencies


def run_kafka(ctx: Context) -> Result:
    rest = next((t for t in ctx.targets if isinstance(t, RestTarget)), None)
    inprocess = next((t for t in ctx.targets if isinstance(t, InProcessTarget)), None)
    if rest is None or inprocess is None:
        return {"skipped": "needs the REST and in-process targets"}
    from sparkgate.service.spark import packages

    s = ctx.settings
    spark = inprocess.spark
    work = Path(tempfile.mkdtemp(prefix="bench-kafka-"))
    result: Result = {"records": s.kafka_records}
    try:
        packages.ensure(spark, packages.KAFKA, Path.home() / ".sparkgate" / "packages")
        with _broker() as bootstrap:
            topic = f"records-{uuid.uuid4().hex[:8]}"
            _produce(spark, bootstrap, topic, s.kafka_records)
            client = rest.acquire()
            try:
                for kind in ("files", "upsert"):
                    times: dict[str, list[float]] = {"sparkgate": [], "pyspark": []}
                    # One untimed run each first: the first read loads and compiles
                    # the connector's classes in each JVM.
                    for run in range(-1, s.kafka_repeats):
                        order = (
                            ("sparkgate", "pyspark") if run % 2 == 0 else ("pyspark", "sparkgate")
                        )
                        for who in order:
                            out = work / f"{kind}-{who}-{run}"
                            if who == "sparkgate":
                                seconds = _gateway(client, bootstrap, topic, out, kind)
                            else:
                                seconds = _direct(spark, bootstrap, topic, out, kind)
                            if run >= 0:
                                times[who].append(seconds)
                            log.info("kafka/%s %s: %.1f s", kind, who, seconds)
                            shutil.rmtree(out, ignore_errors=True)
                    gateway = s.kafka_records / statistics.median(times["sparkgate"])
                    direct = s.kafka_records / statistics.median(times["pyspark"])
                    result[kind] = {
                        "sparkgate_records_per_s": gateway,
                        "pyspark_records_per_s": direct,
                        "ratio": gateway / direct,
                        "runs": s.kafka_repeats,
                    }
                latencies = _latency(client, spark, bootstrap, topic, s.kafka_latency_records)
                result["latency"] = {
                    "p50_ms": percentile(latencies, 50),
                    "p99_ms": percentile(latencies, 99),
                    "records": len(latencies),
                }
            finally:
                rest.release(client)
    except Exception as exc:
        log.error("kafka failed: %s", exc)
        result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return result
