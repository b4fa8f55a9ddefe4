"""The gateway service's options, each declared once with default and description.

Keys follow Flink's SQL Gateway (FLIP-91) where Flink has the same option.
``spark.*`` keys are not options of ours: they pass straight to Spark as
session defaults.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sparkgate.api.config import (
    ConfigOption,
    bool_option,
    choice_option,
    duration_option,
    int_option,
    list_option,
    path_option,
    string_option,
)
from sparkgate.api.session_options import DML_SYNC, RUNTIME_MODE

__all__ = [
    "CATALOG_STORE_FILE_PATH",
    "CATALOG_STORE_KIND",
    "CHECKPOINTING_INTERVAL",
    "CTAS_ATOMICITY",
    "DATA_DIR",
    "DEFAULT_FRESHNESS_CONTINUOUS",
    "DEFAULT_FRESHNESS_FULL",
    "DML_SYNC",
    "FRESHNESS_THRESHOLD",
    "JOBSTORE_EXPIRATION_TIME",
    "JOBSTORE_MAX_CAPACITY",
    "JOB_STATUS_HOOKS",
    "OPERATION_LOG_ENABLED",
    "PIPELINE_NAME",
    "PLAN_FORCE_RECOMPILE",
    "RESULT_BATCH_ROWS",
    "RESULT_BUFFER_ROWS",
    "RESULT_PARTITION_WINDOW",
    "RUNTIME_MODE",
    "SAVEPOINT_PATH",
    "SERVICE_OPTIONS",
    "SESSION_CHECK_INTERVAL",
    "SESSION_IDLE_TIMEOUT",
    "SESSION_MAX_NUM",
    "STATE_TTL",
    "WORKER_KEEPALIVE_TIME",
    "WORKER_THREADS_MAX",
    "WORKER_THREADS_MIN",
    "WORKFLOW_SCHEDULER_TYPE",
]

SESSION_IDLE_TIMEOUT = duration_option(
    "sql-gateway.session.idle-timeout",
    timedelta(minutes=5),
    "A session is closed when it has not been accessed for this long. "
    "Zero or a negative value disables expiry.",
)

SESSION_CHECK_INTERVAL = duration_option(
    "sql-gateway.session.check-interval",
    timedelta(minutes=1),
    "How often idle sessions are looked for. Zero or a negative value disables the check.",
)

SESSION_MAX_NUM = int_option(
    "sql-gateway.session.max-num",
    1_000_000,
    "The maximum number of open sessions; opening one more fails.",
    min_value=1,
)

WORKER_THREADS_MAX = int_option(
    "sql-gateway.worker.threads.max",
    500,
    "Maximum number of worker threads that run operations.",
    min_value=1,
)

WORKER_THREADS_MIN = int_option(
    "sql-gateway.worker.threads.min",
    5,
    "Minimum number of worker threads kept alive while idle.",
    min_value=0,
)

WORKER_KEEPALIVE_TIME = duration_option(
    "sql-gateway.worker.keepalive-time",
    timedelta(minutes=5),
    "How long a worker thread above the minimum may stay idle before it ends.",
    min_value=timedelta(0),
)

DATA_DIR = path_option(
    "sql-gateway.data-dir",
    "~/.sparkgate",
    "Directory for the gateway's own files: the embedded metastore and warehouse, pid "
    "files (`run/gateway-<pid>.json`, one per running gateway; `gateway stop` and "
    "`stop-all` act on the gateways of this directory), logs, the job store (`jobs/`: "
    "SHOW JOBS history and job definitions, kept across restarts) and the checkpoints and "
    "savepoints of streaming jobs.",
)

RESULT_BUFFER_ROWS = int_option(
    "sql-gateway.result.buffer-rows",
    100_000,
    "Maximum rows held in one operation's result buffer; when it is full, "
    "reading from Spark pauses until a client fetches.",
    min_value=1,
)

RESULT_BATCH_ROWS = int_option(
    "sql-gateway.result.batch-rows",
    10_000,
    "Rows per Arrow batch read from Spark.",
    min_value=1,
)

RESULT_PARTITION_WINDOW = int_option(
    "sql-gateway.result.partition-window",
    0,
    "Partitions of a result computed per Spark job while it streams to clients; "
    "Spark holds one window's rows on the driver. 0 means twice Spark's default "
    "parallelism.",
    min_value=0,
)

OPERATION_LOG_ENABLED = bool_option(
    "sql-gateway.operation.log.enabled",
    True,
    "Whether each operation keeps a log that clients can fetch.",
)

# Session options (Flink's keys): gateway-wide defaults here, per session with SET.
# RUNTIME_MODE and DML_SYNC are declared in sparkgate.api.session_options (the client
# and the endpoints read them too) and imported above.

CHECKPOINTING_INTERVAL = duration_option(
    "execution.checkpointing.interval",
    timedelta(seconds=1),
    "Micro-batch trigger interval of streaming queries and jobs; every micro-batch "
    "commits a checkpoint under the data directory.",
    min_value=timedelta(milliseconds=1),
)

SAVEPOINT_PATH = string_option(
    "execution.savepoint.path",
    "",
    "A savepoint (from STOP JOB ... WITH SAVEPOINT) the next streaming INSERT starts from.",
)

PIPELINE_NAME = string_option(
    "pipeline.name",
    "",
    "The name of the next job (SHOW JOBS); by default the INSERT statement's text.",
)

JOBSTORE_EXPIRATION_TIME = duration_option(
    "jobstore.expiration-time",
    timedelta(hours=1),
    "How long SHOW JOBS keeps listing a job after it ended (also after a gateway "
    "restart: jobs are stored under `<data-dir>/jobs/`).",
    min_value=timedelta(0),
)

JOBSTORE_MAX_CAPACITY = int_option(
    "jobstore.max-capacity",
    1000,
    "How many ended jobs SHOW JOBS keeps at most; the oldest make room first.",
    min_value=0,
)

JOB_STATUS_HOOKS = list_option(
    "sql-gateway.job.status-hooks",
    (),
    "Job status hooks to run, by name, comma-separated: plug-ins registered under the "
    "entry-point group `sparkgate.job_status_hooks`. The gateway calls each when a job is "
    "created and when it finishes, fails or is canceled (FLIP-218), whichever session "
    "submitted the job. An unknown name stops the gateway at start-up.",
)

CTAS_ATOMICITY = bool_option(
    "table.rtas-ctas.atomicity-enabled",
    False,
    "Whether CREATE TABLE AS is atomic (FLIP-303): true writes the rows into a staging table "
    "and the table appears only when the job finishes (a failure or cancel leaves nothing); "
    "false creates the table when the job starts and drops it if the job fails or is "
    "canceled. REPLACE TABLE AS is always staged: a failed one leaves the old table as it was.",
)

STATE_TTL = duration_option(
    "table.exec.state.ttl",
    timedelta(0),
    "The state TTL of a streaming statement's stateful operators (deduplication, group "
    "aggregation, regular join, top-N), as in Flink: state of a key untouched for this long "
    "is deleted. Written into every stateful node of a compiled plan (COMPILE PLAN), where "
    "each input's TTL and policy can then be edited; a streaming query or INSERT with a "
    "positive value, or with a STATE_TTL hint, runs on the gateway's TTL-aware operators. "
    "0 ms keeps state as Spark does (until a watermark evicts it, or forever).",
    min_value=timedelta(0),
)

PLAN_FORCE_RECOMPILE = bool_option(
    "table.plan.force-recompile",
    False,
    "Whether COMPILE PLAN overwrites an existing plan file (Flink's option); when false, "
    "an existing file is an error unless the statement says IF NOT EXISTS.",
)

CATALOG_STORE_KIND = choice_option(
    "table.catalog-store.kind",
    "file",
    "Where catalogs made with CREATE CATALOG are kept (FLIP-295): `file` stores each as "
    "`<name>.json` (mode 0600, secrets included: the gateway needs them to connect) so they "
    "are back after a restart; `generic_in_memory` keeps them until the gateway stops.",
    ("file", "generic_in_memory"),
)

CATALOG_STORE_FILE_PATH = string_option(
    "table.catalog-store.file.path",
    "",
    "The directory of the `file` catalog store; empty means `<data-dir>/catalogs`.",
)

WORKFLOW_SCHEDULER_TYPE = string_option(
    "workflow-scheduler.type",
    "embedded",
    "The workflow scheduler that refreshes materialized tables in FULL mode (FLIP-448): a "
    "plug-in of the entry-point group `sparkgate.workflow_schedulers`; its options are "
    "`workflow-scheduler.<type>.*`. `embedded` runs in the gateway and keeps its workflows "
    "in `<data-dir>/scheduler/workflows.sqlite`, so schedules survive restarts.",
)

FRESHNESS_THRESHOLD = duration_option(
    "materialized-table.refresh-mode.freshness-threshold",
    timedelta(minutes=30),
    "A materialized table without REFRESH_MODE is refreshed CONTINUOUS when its FRESHNESS "
    "is below this, else FULL (by the workflow scheduler).",
    min_value=timedelta(seconds=1),
)

DEFAULT_FRESHNESS_CONTINUOUS = duration_option(
    "materialized-table.default-freshness.continuous",
    timedelta(minutes=3),
    "The FRESHNESS of a CONTINUOUS materialized table that gives none (and of one that "
    "gives neither FRESHNESS nor REFRESH_MODE): its job's trigger interval.",
    min_value=timedelta(seconds=1),
)

DEFAULT_FRESHNESS_FULL = duration_option(
    "materialized-table.default-freshness.full",
    timedelta(hours=1),
    "The FRESHNESS of a FULL materialized table that gives none: its refresh period.",
    min_value=timedelta(seconds=1),
)

SERVICE_OPTIONS: tuple[ConfigOption[Any], ...] = (
    SESSION_IDLE_TIMEOUT,
    SESSION_CHECK_INTERVAL,
    SESSION_MAX_NUM,
    WORKER_THREADS_MAX,
    WORKER_THREADS_MIN,
    WORKER_KEEPALIVE_TIME,
    DATA_DIR,
    RESULT_BUFFER_ROWS,
    RESULT_BATCH_ROWS,
    RESULT_PARTITION_WINDOW,
    OPERATION_LOG_ENABLED,
    RUNTIME_MODE,
    DML_SYNC,
    CHECKPOINTING_INTERVAL,
    SAVEPOINT_PATH,
    PIPELINE_NAME,
    JOBSTORE_EXPIRATION_TIME,
    JOBSTORE_MAX_CAPACITY,
    JOB_STATUS_HOOKS,
    CTAS_ATOMICITY,
    STATE_TTL,
    PLAN_FORCE_RECOMPILE,
    CATALOG_STORE_KIND,
    CATALOG_STORE_FILE_PATH,
    WORKFLOW_SCHEDULER_TYPE,
    FRESHNESS_THRESHOLD,
    DEFAULT_FRESHNESS_CONTINUOUS,
    DEFAULT_FRESHNESS_FULL,
)
