"""The gateway service's options, each declared once with default and description.

Keys follow Flink's SQL Gateway (FLIP-91) where Flink has the same option.
``spark.*`` keys are not options of ours: they pass straight to Spark as
session defaults.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from sparkgate.api.config import (
    ConfigOption,
    bool_option,
    choice_option,
    duration_option,
    int_option,
    list_option,
    memory_option,
    parse_list,
    path_option,
    string_option,
)
from sparkgate.api.session_options import DML_SYNC, RUNTIME_MODE
from sparkgate.service.spark.confinement import ALLOWED_PATHS_KEY, ANYWHERE
from sparkgate.service.spark.host_access import ALLOWED_HOST_STATEMENTS_KEY, HOST_STATEMENTS

__all__ = [
    "ALLOWED_HOST_STATEMENTS",
    "AVRO_JARS",
    "CATALOG_STORE_FILE_PATH",
    "CATALOG_STORE_KIND",
    "CHECKPOINTING_DIR",
    "CHECKPOINTING_INTERVAL",
    "CONNECTOR_REPOSITORY",
    "CTAS_ATOMICITY",
    "DATA_DIR",
    "DEFAULT_FRESHNESS_CONTINUOUS",
    "DEFAULT_FRESHNESS_FULL",
    "DML_SYNC",
    "ENGINE_CHECK_INTERVAL",
    "ENGINE_RESTART_ATTEMPTS",
    "ENGINE_RESTART_BACKOFF",
    "ENGINE_RESTART_WINDOW",
    "FRESHNESS_THRESHOLD",
    "JOBSTORE_EXPIRATION_TIME",
    "JOBSTORE_MAX_CAPACITY",
    "JOB_STATUS_HOOKS",
    "KAFKA_JARS",
    "OPERATION_LOG_ENABLED",
    "PIPELINE_JOB_ID",
    "PIPELINE_NAME",
    "PLAN_FORCE_RECOMPILE",
    "RESULT_BATCH_ROWS",
    "RESULT_BUFFER_ROWS",
    "RESULT_BUFFER_SIZE",
    "RESULT_DIRECT_SIZE",
    "RESULT_MAX_BATCH_SIZE",
    "RESULT_PARTITION_WINDOW",
    "RESULT_SPOOL",
    "RESULT_SPOOL_MAX_SIZE",
    "RESULT_SPOOL_RETENTION",
    "RESULT_SPOOL_SIZE",
    "RUNTIME_MODE",
    "SAVEPOINT_DIR",
    "SAVEPOINT_PATH",
    "SERVICE_OPTIONS",
    "SESSION_CHECK_INTERVAL",
    "SESSION_IDLE_TIMEOUT",
    "SESSION_MAX_NUM",
    "SESSION_MAX_RUNNING",
    "SESSION_PERSISTENT",
    "SESSION_POOL_MIN_SHARE",
    "SESSION_POOL_WEIGHT",
    "SHUTDOWN_TIMEOUT",
    "SQL_DIALECT",
    "STATEMENT_MAX_LENGTH",
    "STATEMENT_PARSE_TIMEOUT",
    "STATE_ADVERTISED_URL",
    "STATE_LEASE",
    "STATE_TTL",
    "STATE_URL",
    "WORKER_KEEPALIVE_TIME",
    "WORKER_THREADS_MAX",
    "WORKER_THREADS_MIN",
    "WORKFLOW_SCHEDULER_TYPE",
]


def _host_statements(text: str) -> tuple[str, ...]:
    names = parse_list(text)
    unknown = [n for n in names if n not in HOST_STATEMENTS]
    if unknown:
        raise ValueError(f"expected some of {', '.join(HOST_STATEMENTS)}; not {', '.join(unknown)}")
    return names


SESSION_IDLE_TIMEOUT = duration_option(
    "sql-gateway.session.idle-timeout",
    timedelta(minutes=5),
    "A session is closed when it has not been accessed for this long. "
    "Zero or a negative value disables expiry.",
)

SESSION_PERSISTENT = bool_option(
    "sql-gateway.session.persistent",
    False,
    "Keep every open session (its properties, current catalog and database, temporary "
    "views and connector tables) under the data directory, so that a client holding a "
    "session handle continues after the gateway restarts. Statements that were running "
    "then end in an error saying so; results are not kept.",
)

STATE_URL = string_option(
    "sql-gateway.state.url",
    "",
    "A SQLAlchemy URL of a database for the gateway's own state, e.g. "
    "`postgresql+psycopg://user:password@host:5432/sparkgate` (PostgreSQL needs "
    "`sparkgate[postgres]`): the job store, the session store "
    "(`sql-gateway.session.persistent`), the catalog store (`table.catalog-store.kind: "
    "file` without a `file.path`) and the embedded scheduler's workflows live there "
    "instead of in files and SQLite under the data directory; sessions are then kept as "
    "with `sql-gateway.session.persistent`. Gateways given the same URL are one service: "
    "they share catalogs and workflows (each refresh fires once among them), forward calls "
    "on each other's sessions and take over the sessions and jobs of one that ends "
    "(docs/cluster.md). Empty: the data directory.",
)

CHECKPOINTING_DIR = string_option(
    "execution.checkpointing.dir",
    "",
    "Where streaming jobs keep their checkpoints, one directory per job (a path or a "
    "Hadoop URI: `hdfs://…`, `s3a://…`). Gateways of one service on several machines "
    "need it on storage they all reach, to resume each other's jobs. Empty: "
    "`<data-dir>/checkpoints`.",
)

SAVEPOINT_DIR = string_option(
    "execution.checkpointing.savepoint-dir",
    "",
    "Where savepoints go (STOP JOB WITH SAVEPOINT, a stop of the gateway). Empty: "
    "`<data-dir>/savepoints`.",
)

STATE_LEASE = duration_option(
    "sql-gateway.state.lease",
    timedelta(seconds=15),
    "With `sql-gateway.state.url`: a gateway whose heartbeat (written every third of "
    "this) is older than this has ended, and another gateway of the service takes over "
    "its sessions and jobs.",
    min_value=timedelta(seconds=1),
)

STATE_ADVERTISED_URL = string_option(
    "sql-gateway.state.advertised-url",
    "",
    "With `sql-gateway.state.url`: the URL at which the other gateways of the service "
    "reach this one's REST endpoint, to forward calls on sessions this one serves. "
    "Empty: `http(s)://<rest address>:<rest port>` of its REST endpoint.",
)

SHUTDOWN_TIMEOUT = duration_option(
    "sql-gateway.shutdown.timeout",
    timedelta(seconds=20),
    "On SIGTERM the gateway takes no new sessions or statements (503, readiness "
    "DOWN) and waits this long for running statements and result streams to end, "
    "then stops streaming jobs with a savepoint and exits. A second SIGTERM or "
    "Ctrl-C stops it at once.",
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

ENGINE_CHECK_INTERVAL = duration_option(
    "sql-gateway.engine.check-interval",
    timedelta(seconds=1),
    "How often the gateway checks that its Spark engine lives (the JVM process, then "
    "its SparkContext). A death is reported at the readiness probe, to new work (REST "
    "503 with Retry-After) and in the log, and a new engine is started.",
    min_value=timedelta(milliseconds=100),
)

ENGINE_RESTART_ATTEMPTS = int_option(
    "sql-gateway.engine.restart-attempts",
    3,
    "Engine starts after deaths allowed within `sql-gateway.engine.restart-window`; past "
    "them the engine stays down (readiness keeps failing) until the gateway restarts. "
    "0 never restarts the engine.",
    min_value=0,
)

ENGINE_RESTART_WINDOW = duration_option(
    "sql-gateway.engine.restart-window",
    timedelta(minutes=10),
    "The window `sql-gateway.engine.restart-attempts` counts in.",
    min_value=timedelta(seconds=1),
)

ENGINE_RESTART_BACKOFF = duration_option(
    "sql-gateway.engine.restart-backoff",
    timedelta(seconds=1),
    "Wait before a new engine starts after a death; doubled after each failed start, up to 60 s.",
    min_value=timedelta(0),
)

SESSION_POOL_WEIGHT = int_option(
    "sql-gateway.session.scheduler-pool.weight",
    1,
    "Weight of the FAIR scheduler pool each session gets (Spark runs in FAIR mode unless "
    "`spark.scheduler.mode` says otherwise): sessions share Spark's cores in proportion. "
    "A session may run in another pool, e.g. one of `spark.scheduler.allocation.file`, "
    "with `SET 'sql-gateway.session.scheduler.pool' = '<name>'` (or Spark Thrift server's "
    "`spark.sql.thriftserver.scheduler.pool`).",
    min_value=1,
)

SESSION_POOL_MIN_SHARE = int_option(
    "sql-gateway.session.scheduler-pool.min-share",
    0,
    "Cores each session's FAIR pool is given before weights count (Spark's minShare).",
    min_value=0,
)

SESSION_MAX_RUNNING = int_option(
    "sql-gateway.session.max-running-statements",
    16,
    "Statements one session may have running (submitted, not yet finished) at once; "
    "another is refused (REST 503 with Retry-After) until one ends.",
    min_value=1,
)

DENIED_SPARK_SETTINGS = list_option(
    "sql-gateway.security.denied-spark-settings",
    (
        "spark.master",
        "spark.submit.*",
        "spark.driver.*",
        "spark.executor.*",
        "spark.jars*",
        "spark.files*",
        "spark.archives*",
        "spark.plugins*",
        "spark.sql.extensions",
        "spark.sql.catalog.*",
        "spark.sql.warehouse.dir",
        "spark.sql.legacy.setCommandRejectsSparkCoreConfs",
        "spark.sql.hive.metastore.*",
    ),
    "Spark settings a session may not set (SET, session properties at open, a "
    "statement's own options), as patterns (`*` matches anything): they choose the "
    "engine, load code or reach past the session (a catalog plug-in class, the "
    "metastore). `SET` and a statement's options are refused with a 400 naming this "
    "option; given when a session opens (a JDBC URL's `;key=value`) they are kept as "
    "given and never applied. Spark itself refuses static settings. The gateway's own "
    "configuration may still set them.",
)

USER_MAX_RUNNING = int_option(
    "sql-gateway.user.max-running-statements",
    64,
    "Statements one authenticated user may have running at once across all their "
    "sessions; another is refused (REST 503 with Retry-After) until one ends. 0: no limit.",
    min_value=0,
)

USER_MAX_SESSIONS = int_option(
    "sql-gateway.user.max-sessions",
    100,
    "Sessions one authenticated user may hold open at once; another is refused (REST 503) "
    "naming this option until one closes or expires. 0: no limit.",
    min_value=0,
)

STATEMENT_MAX_LENGTH = int_option(
    "sql-gateway.statement.max-length",
    2 * 1024 * 1024,
    "The longest statement (in characters) a session may submit; a longer one is refused "
    "before anything parses it (REST: 400). Parsing time grows with length: a 9 MB "
    "statement kept a worker busy for 25 s.",
    min_value=1,
)

STATEMENT_PARSE_TIMEOUT = duration_option(
    "sql-gateway.statement.parse-timeout",
    timedelta(seconds=10),
    "How long parsing one statement may take, for the gateway's parser and for Spark's, "
    "each. A statement past it fails with an error naming this option (REST: 400 as it "
    "is submitted, or its failure on fetch, as a syntax error's). Spark's parser cannot be "
    "interrupted: its parse is left to finish in the JVM, at most two at once; past that "
    "a slow parse keeps its worker to the end and then fails the same way. 0 disables "
    "the limit.",
    min_value=timedelta(0),
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

RESULT_BUFFER_SIZE = memory_option(
    "sql-gateway.result.buffer-size",
    64 << 20,
    "Maximum bytes of Arrow data held in one operation's result buffer (besides "
    "`sql-gateway.result.buffer-rows`); one batch is always admitted into an empty buffer.",
)

RESULT_PARTITION_WINDOW = int_option(
    "sql-gateway.result.partition-window",
    0,
    "Partitions of a small result (see `sql-gateway.result.direct-size`) computed per "
    "Spark job; Spark holds one window's rows on the driver. 0 means twice Spark's "
    "default parallelism.",
    min_value=0,
)

RESULT_DIRECT_SIZE = memory_option(
    "sql-gateway.result.direct-size",
    32 << 20,
    "Results whose size Spark's plan statistics estimate at most this (reads of files "
    "and tables count ten times their size on disk) are collected a window of "
    "partitions at a time. Larger ones, and results of generators (`explode`) and "
    "Python table functions, are relayed by Spark's tasks in Arrow batches, with the "
    "client's fetch pace as backpressure: the engine then holds a few batches per "
    "running task, whatever the partition or result size. 0 relays every result.",
)

RESULT_SPOOL_SIZE = memory_option(
    "sql-gateway.result.spool-size",
    1 << 30,
    "A relayed result's partition is drained from its task into a file under the data "
    "dir (`tmp/results`), so a slow client does not hold a Spark task slot; past this "
    "many unread bytes the task waits for the client. At most two partitions per result "
    "are spooled; the files go when read, when the operation closes, and at start.",
)

RESULT_SPOOL = bool_option(
    "sql-gateway.result.spool",
    False,
    "Keep each query's result in files under the data dir (`results/`) as it streams "
    "from Spark, so that a client can fetch any page again by its token, read the "
    "result again from its first row (HiveServer2 FETCH_FIRST) and, with "
    "`sql-gateway.session.persistent`, fetch it after a restart of the gateway. A result "
    "goes when its operation or session closes, or after `spool.retention`.",
)

RESULT_SPOOL_MAX_SIZE = memory_option(
    "sql-gateway.result.spool.max-size",
    4 << 30,
    "The most bytes all kept results may take together; a result that would pass it "
    "is kept up to there only (its later pages are not replayable).",
)

RESULT_SPOOL_RETENTION = duration_option(
    "sql-gateway.result.spool.retention",
    timedelta(hours=1),
    "How long a kept result stays after it was made.",
    min_value=timedelta(seconds=1),
)

RESULT_MAX_BATCH_SIZE = memory_option(
    "sql-gateway.result.max-batch-size",
    64 << 20,
    "The largest Arrow batch (`spark.sql.execution.arrow.maxRecordsPerBatch` rows) a "
    "relayed result may carry; a statement making a bigger one fails with an error "
    "naming this option instead of exhausting the engine's memory.",
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

SQL_DIALECT = choice_option(
    "table.sql-dialect",
    "default",
    "Flink's SQL dialect: `default` or `hive`. Both are parsed by Spark's parser, which "
    "also takes Hive's syntax (`STORED AS`, `ROW FORMAT`, `PARTITIONED BY` with types); "
    "any other value is refused.",
    ("default", "hive"),
)

PIPELINE_NAME = string_option(
    "pipeline.name",
    "",
    "The name of the next job (SHOW JOBS); by default the INSERT statement's text.",
)


def _job_id(text: str) -> str:
    text = text.strip().lower()
    if text and not re.fullmatch(r"[0-9a-f]{32}", text):
        raise ValueError("a job id is 32 hexadecimal digits")
    return text


PIPELINE_JOB_ID: ConfigOption[str] = ConfigOption(
    "$internal.pipeline.job-id",
    "",
    "The id of the next job, 32 hexadecimal digits (Flink's internal option, which "
    "clients and tests set to know a job's id before it runs); an id a listed job "
    "has is refused.",
    "String",
    _job_id,
    str,
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

ALLOWED_HOST_STATEMENTS: ConfigOption[tuple[str, ...]] = ConfigOption(
    ALLOWED_HOST_STATEMENTS_KEY,
    (),
    "Spark SQL that acts on the gateway's host as its OS user, off by default (with or "
    "without authentication) and allowed by listing it here: `transform` (script "
    "transformation, `TRANSFORM ... USING`), `reflection` (`reflect`, `java_method`, "
    "`try_reflect`, Hive's reflect UDFs), `insert-directory` (`INSERT OVERWRITE [LOCAL] "
    "DIRECTORY`), `add-file` (`ADD FILE`, `ADD ARCHIVE`). Found in Spark's plans, not the "
    "text; refused with an error naming this option.",
    "List<String>",
    _host_statements,
    ";".join,
)

ALLOWED_PATHS = list_option(
    ALLOWED_PATHS_KEY,
    (),
    "Where remote SQL may read and write files by path: file relations (`text.`/dir``), "
    "table and database locations and `path` options, `CREATE TEMPORARY VIEW ... USING`, "
    "`LOAD DATA`, `ADD JAR`, function resources, connector tables' `path` and compiled plan "
    "files must lie under one of these roots (local paths or URIs such as "
    "`hdfs://nn/data`), else the statement is refused naming this option; `LOAD DATA LOCAL` "
    "is refused. Empty, the default: with authentication on, the warehouse "
    "(`spark.sql.warehouse.dir`) and `<data-dir>/files`; with it off, anywhere. "
    f"`{ANYWHERE}` allows anywhere. Found in Spark's plans, not the text.",
)

AUDIT_ENABLED = bool_option(
    "sql-gateway.audit.enabled",
    True,
    "Keep the audit log, `<data-dir>/log/audit.log`: one JSON line per refused login, "
    "session opened or closed, statement submitted (its text with secrets masked) and "
    "statement closed (outcome, rows handed out, duration), with the user and the "
    "client's address (docs/security.md).",
)
AUDIT_MAX_FILE_SIZE = memory_option(
    "sql-gateway.audit.max-file-size",
    100 * 1024 * 1024,
    "The size at which the audit log is rotated (`audit.log.1`, `.2`, ...).",
)
AUDIT_MAX_FILES = int_option(
    "sql-gateway.audit.max-files",
    10,
    "How many rotated audit logs are kept besides the current one.",
    min_value=1,
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

AUTHENTICATION = list_option(
    "sql-gateway.authentication",
    ("none",),
    "How callers prove who they are, on every endpoint: `none`, or one or more of "
    "`password` (the password file), `ldap` (a bind to the directory), `token` (a JWT as "
    "`Authorization: Bearer`) and plug-ins of the entry-point group "
    "`sparkgate.authenticators`, asked in order. `none` serves anybody as whoever they "
    "say they are: the gateway refuses to start with it on an endpoint bound beyond the "
    "loopback unless `sql-gateway.authentication.none-on-any-address` allows it.",
)

AUTHENTICATION_NONE_ANY_ADDRESS = bool_option(
    "sql-gateway.authentication.none-on-any-address",
    False,
    "Let a gateway without authentication serve endpoints bound to an address other than "
    "the loopback (anyone who reaches the port runs SQL as the gateway's OS user).",
)

ADMINS = list_option(
    "sql-gateway.authorization.admins",
    (),
    "Users who may list, use and close every user's sessions and stop every user's jobs. "
    "Others reach only their own (403 otherwise).",
)

CONNECTOR_REPOSITORY = string_option(
    "sql-gateway.connector.repository",
    "https://repo1.maven.org/maven2/",
    "The Maven repository connectors' Spark packages are resolved from (once, into "
    "`<data-dir>/packages`, the first time a table of the connector is created or read).",
)

KAFKA_JARS = list_option(
    "sql-gateway.connector.kafka.jars",
    (),
    "Jars of Spark's Kafka integration (`spark-sql-kafka-0-10`, `spark-token-provider-kafka-0-10`, "
    "`kafka-clients`, `commons-pool2`) by path, `;`-separated, for an installation that "
    "reaches no Maven repository; empty, the default: resolved from "
    "`sql-gateway.connector.repository`.",
)

AVRO_JARS = list_option(
    "sql-gateway.connector.avro.jars",
    (),
    "The jar of Spark's Avro functions (`spark-avro`, for Kafka tables in the `avro` format) "
    "by path, for an installation that reaches no Maven repository; empty, the default: "
    "resolved from `sql-gateway.connector.repository`.",
)


SERVICE_OPTIONS: tuple[ConfigOption[Any], ...] = (
    SESSION_IDLE_TIMEOUT,
    SESSION_PERSISTENT,
    STATE_URL,
    STATE_LEASE,
    CHECKPOINTING_DIR,
    SAVEPOINT_DIR,
    STATE_ADVERTISED_URL,
    SHUTDOWN_TIMEOUT,
    SESSION_CHECK_INTERVAL,
    SESSION_MAX_NUM,
    WORKER_THREADS_MAX,
    WORKER_THREADS_MIN,
    WORKER_KEEPALIVE_TIME,
    DATA_DIR,
    RESULT_BUFFER_ROWS,
    RESULT_BATCH_ROWS,
    RESULT_PARTITION_WINDOW,
    RESULT_DIRECT_SIZE,
    RESULT_MAX_BATCH_SIZE,
    RESULT_SPOOL_SIZE,
    RESULT_SPOOL,
    RESULT_SPOOL_MAX_SIZE,
    RESULT_SPOOL_RETENTION,
    RESULT_BUFFER_SIZE,
    ALLOWED_HOST_STATEMENTS,
    ALLOWED_PATHS,
    AUDIT_ENABLED,
    AUDIT_MAX_FILE_SIZE,
    AUDIT_MAX_FILES,
    STATEMENT_MAX_LENGTH,
    STATEMENT_PARSE_TIMEOUT,
    SESSION_POOL_WEIGHT,
    SESSION_POOL_MIN_SHARE,
    SESSION_MAX_RUNNING,
    USER_MAX_RUNNING,
    USER_MAX_SESSIONS,
    DENIED_SPARK_SETTINGS,
    ENGINE_CHECK_INTERVAL,
    ENGINE_RESTART_ATTEMPTS,
    ENGINE_RESTART_WINDOW,
    ENGINE_RESTART_BACKOFF,
    OPERATION_LOG_ENABLED,
    RUNTIME_MODE,
    DML_SYNC,
    CHECKPOINTING_INTERVAL,
    SAVEPOINT_PATH,
    SQL_DIALECT,
    PIPELINE_NAME,
    PIPELINE_JOB_ID,
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
    AUTHENTICATION,
    AUTHENTICATION_NONE_ANY_ADDRESS,
    ADMINS,
    CONNECTOR_REPOSITORY,
    KAFKA_JARS,
    AVRO_JARS,
)
