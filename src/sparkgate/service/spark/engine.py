"""Starting and stopping the one SparkContext of the gateway process.

The default engine needs nothing but Java: ``local[*]`` with Hive support on an
embedded Derby metastore and a warehouse under the data directory, so tables
survive restarts. Every ``spark.*`` key the user gives wins over these defaults.

Spark must not write to the user's terminal (the gateway and the client own
it). Two channels have to be closed:

* log4j: a log4j2 properties file written into the data directory and passed
  as ``-Dlog4j2.configurationFile`` sends Spark's, Hive's and Derby's logging
  to ``<data_dir>/log/spark.log``.
* the JVM's own stdout/stderr (JVM warnings, ``System.err`` prints, the
  output of Python workers, which Spark copies to the JVM's stderr): PySpark
  starts the JVM with ``bin/spark-submit`` through
  :func:`pyspark.java_gateway.launch_gateway`, which inherits the Python
  process's streams unless given ``popen_kwargs``. We launch the gateway
  ourselves with stdout/stderr going to ``<data_dir>/log/spark-console.log``
  and hand it to :class:`~pyspark.SparkContext` (its ``gateway`` argument).
  The JVM runs in a session of its own, so that a terminal's Ctrl-C or a
  signal to the process group reaches only the Python side, which stops Spark.

A third channel is on the Python side: PySpark 4 logs every SQL error that
carries a query context as JSON to stderr (``PySparkLogger``, loggers
``SQLQueryContextLogger`` and ``DataFrameQueryContextLogger``, which never
propagate). The engine swaps their stderr handlers for a null handler; the
same error still reaches the service as the raised exception.

Owning the JVM also lets :func:`stop_spark` end it, which releases the Derby
metastore's lock at once: a stopped SparkContext otherwise leaves the JVM and
the booted Derby database behind until the Python process exits.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkgate.api.errors import ConfigurationError
from sparkgate.service.spark.checks import local_cores
from sparkgate.service.spark.java import find_java, spark_home
from sparkgate.service.spark.metastore import metastore_defaults, prepare_metastore

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "LOCAL_IP_ENV",
    "available_cores",
    "build_spark_conf",
    "engine_failure",
    "is_running",
    "start_spark",
    "stop_spark",
    "ui_url",
    "uses_embedded_metastore",
    "write_log4j_config",
]

_log = logging.getLogger(__name__)

_JVM_EXIT_TIMEOUT_S = 30.0
#: Where Spark binds its UI and, in local mode, the driver's ports.
LOCAL_IP_ENV = "SPARK_LOCAL_IP"
_EXTRA_JAVA_OPTIONS = "spark.driver.extraJavaOptions"

# Levels follow Spark's own conf/log4j2.properties.template: quiet the
# components known to log alarming but harmless messages at start-up.
_LOG4J_TEMPLATE = """\
# Written by sparkgate at every start; edits are overwritten. To use your own
# configuration, put -Dlog4j2.configurationFile=... into
# spark.driver.extraJavaOptions.
rootLogger.level = info
rootLogger.appenderRef.file.ref = file

appender.file.type = RollingFile
appender.file.name = file
appender.file.fileName = {log_file}
appender.file.filePattern = {log_file}.%i
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{yyyy-MM-dd HH:mm:ss.SSS}} %p [%t] %c{{1}}: %m%n%ex
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 50MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 5

# PythonGatewayServer initialises logging as an interpreter: unless this
# logger has its own level equal to the root's, Spark prints "Setting default
# log level" to stderr and raises console appenders' threshold to WARN.
logger.pygateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.pygateway.level = info

logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = warn
logger.jetty2.name = org.sparkproject.jetty.util.component.AbstractLifeCycle
logger.jetty2.level = error
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
logger.parquet2.name = parquet
logger.parquet2.level = error
logger.hivemeta.name = org.apache.hadoop.hive.metastore.RetryingHMSHandler
logger.hivemeta.level = fatal
logger.hivefn.name = org.apache.hadoop.hive.ql.exec.FunctionRegistry
logger.hivefn.level = error
logger.datanucleus.name = DataNucleus
logger.datanucleus.level = warn
# Stopping a streaming query interrupts its thread, which may be writing a
# checkpoint file through Hadoop's shell (chmod): a WARN with a stack trace
# for an expected stop.
logger.hadoopshell.name = org.apache.hadoop.util.Shell
logger.hadoopshell.level = error
# Its "Aborting job" ERROR, also for a streaming write interrupted by a stop,
# precedes an exception it rethrows: the caller reports a real failure.
logger.fileformatwriter.name = org.apache.spark.sql.execution.datasources.FileFormatWriter
logger.fileformatwriter.level = fatal
# A task killed by a stop while it writes logs "Aborting task" at ERROR with
# the kill's stack trace; a real task failure is logged again by the Executor
# ("Exception in task") and reaches the caller, so this line adds nothing.
logger.sparkutils.name = org.apache.spark.util.Utils
logger.sparkutils.level = info
logger.sparkutils.filter.aborting.type = RegexFilter
logger.sparkutils.filter.aborting.regex = Aborting task
logger.sparkutils.filter.aborting.onMatch = DENY
logger.sparkutils.filter.aborting.onMismatch = NEUTRAL
"""


@dataclass
class _Engine:
    session: SparkSession
    # py4j gateway we launched; None when we adopted a JVM started elsewhere.
    gateway: Any
    data_dir: Path
    # Where this JVM's output starts in spark-console.log and spark.log (its death notice).
    console_offset: int = 0
    log_offset: int = 0


_lock = threading.Lock()
# The process's one Spark engine: a JVM's SparkContext is one per process too.
_engine: _Engine | None = None


def _java_option(name: str, value: str) -> str:
    """One ``-Dname=value``, quoted for Spark's launcher, which splits options
    on whitespace but honours double quotes and backslash escapes."""
    option = f"-D{name}={value}"
    if any(ch.isspace() or ch in "\"'\\" for ch in option):
        option = '"' + option.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return option


def write_log4j_config(data_dir: Path) -> Path:
    """Write ``<data_dir>/conf/log4j2.properties`` logging to ``<data_dir>/log/spark.log``."""
    log_file = data_dir / "log" / "spark.log"
    # Properties files treat backslash as an escape; forward slashes work everywhere.
    text = _LOG4J_TEMPLATE.format(log_file=log_file.as_posix())
    config = data_dir / "conf" / "log4j2.properties"
    config.parent.mkdir(parents=True, exist_ok=True)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text, encoding="utf-8")
    return config


def available_cores() -> int:
    """The cores this process may use: what ``local[*]`` gives Spark."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def build_spark_conf(
    spark_conf: Mapping[str, str],
    data_dir: Path,
    *,
    app_name: str = "sparkgate",
    cores: int | None = None,
) -> dict[str, str]:
    """The Spark configuration the engine starts with: defaults, then ``spark_conf``.

    Pure (writes nothing), so the precedence rules are testable without Spark.
    ``spark.driver.extraJavaOptions`` is the one merged key: the gateway's log
    and Derby options are appended to the user's, unless the user set the same
    system property.

    With a ``local`` master, ``spark.sql.shuffle.partitions`` defaults to the
    master's cores (``cores`` for ``local[*]``, by default
    :func:`available_cores`) instead of Spark's 200: streaming aggregations
    (which adaptive execution does not coalesce) otherwise run 200 tasks per
    micro-batch on a laptop's few cores.

    Raises:
        ConfigurationError: a key does not start with ``spark.`` (Spark would
            ignore it silently), or ``data_dir`` cannot be put into a Derby URL.
    """
    unknown = sorted(k for k in spark_conf if not k.startswith("spark."))
    if unknown:
        raise ConfigurationError(
            f"Not Spark options (keys must start with 'spark.'): {', '.join(unknown)}"
        )
    if ";" in str(data_dir):
        # ';' separates attributes in a Derby JDBC URL.
        raise ConfigurationError(f"The data directory must not contain ';': {data_dir}")

    metastore = data_dir / "metastore"
    conf: dict[str, str] = {
        "spark.master": "local[*]",
        "spark.app.name": app_name,
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(data_dir / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={metastore / 'metastore_db'};create=true"
        ),
        # Hive's session start otherwise leaves a '<uuid>_resources' dir in /tmp.
        "spark.hadoop.hive.downloaded.resources.dir": str(data_dir / "tmp" / "hive-resources"),
        "spark.hadoop.hive.exec.local.scratchdir": str(data_dir / "tmp" / "hive-scratch"),
        "spark.driver.memory": "2g",
        # Sessions share the cores (a pool each) instead of queueing behind a long
        # scan; see service/spark/pools.py.
        "spark.scheduler.mode": "FAIR",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # Flink's TIME type: columns, casts and streaming results (Spark refuses all
        # three without it, though it reads TIME literals).
        "spark.sql.timeType.enabled": "true",
        # The gateway reports progress itself; the console bar would garble the terminal.
        "spark.ui.showConsoleProgress": "false",
        # Each gateway session is a Spark session with its own cache of table relations
        # (file listings): a table another session or a gateway job wrote (a refreshed
        # materialized table, an INSERT) would stay stale there until REFRESH TABLE.
        "spark.sql.filesourceTableRelationCacheSize": "0",
        # transformWithState (the state-TTL operators of compiled plans) runs on RocksDB
        # state only; a query's checkpoint keeps the provider it started with.
        "spark.sql.streaming.stateStore.providerClass": (
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
        ),
    }
    conf.update(spark_conf)
    conf.update(metastore_defaults(conf))
    if "spark.driver.maxResultSize" not in spark_conf:
        # An oversized collect fails its statement ("bigger than
        # spark.driver.maxResultSize") instead of exhausting the driver: a quarter of it.
        heap = _memory_bytes(conf["spark.driver.memory"])
        if heap is not None:
            conf["spark.driver.maxResultSize"] = f"{max(heap // 4 >> 20, 1)}m"
    local = local_cores(conf["spark.master"], cores or available_cores())
    if local is not None and "spark.sql.shuffle.partitions" not in spark_conf:
        conf["spark.sql.shuffle.partitions"] = str(local)

    user_options = spark_conf.get(_EXTRA_JAVA_OPTIONS, "")
    ours = {
        "log4j2.configurationFile": (data_dir / "conf" / "log4j2.properties").as_uri(),
        "derby.system.home": str(metastore),
        "derby.stream.error.file": str(data_dir / "log" / "derby.log"),
    }
    added = [_java_option(k, v) for k, v in ours.items() if f"-D{k}=" not in user_options]
    conf[_EXTRA_JAVA_OPTIONS] = " ".join([user_options.strip(), *added]).strip()
    return conf


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def _memory_bytes(text: str) -> int | None:
    """A JVM memory size (``2g``, ``512m``, ``1024``: MiB as Spark reads the driver's) in
    bytes; None if it is not one."""
    match = re.fullmatch(r"\s*(\d+)\s*([kmgtp]?)b?\s*", text.lower())
    if match is None:
        return None
    number, unit = int(match.group(1)), match.group(2)
    return number * (_UNITS[unit] if unit else 1 << 20)


def ui_url() -> str | None:
    """The Spark UI's address, e.g. ``http://127.0.0.1:4040``; None when off or stopped."""
    engine = _engine
    if engine is None:
        return None
    url: str | None = engine.session.sparkContext.uiWebUrl
    return url


def uses_embedded_metastore(spark_conf: Mapping[str, str]) -> bool:
    """Whether Spark will use the data directory's embedded Derby metastore.

    Derby lets one process boot a database at a time: a second process on the
    same data directory waits, then fails ("Another instance of Derby may
    have already booted the database"). Not so with an in-memory catalog, a
    metastore service or a metastore database of the user's.
    """
    catalog = spark_conf.get("spark.sql.catalogImplementation", "hive").strip().lower()
    return catalog == "hive" and not any(
        spark_conf.get(key, "").strip()
        for key in (
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            "spark.hadoop.hive.metastore.uris",
            "spark.hive.metastore.uris",
        )
    )


def is_running() -> bool:
    """Whether :func:`start_spark` has started Spark and it has not been stopped."""
    return _engine is not None


def start_spark(
    spark_conf: Mapping[str, str], data_dir: Path, *, app_name: str = "sparkgate"
) -> SparkSession:
    """Start Spark (once per process) and return its root session.

    A second call returns the running session and ignores its arguments: the
    SparkContext's configuration is fixed once the JVM runs.

    Raises:
        JavaNotFoundError: no Java 17 or 21.
        ConfigurationError: see :func:`build_spark_conf`.
    """
    global _engine
    with _lock:
        if _engine is not None:
            if _engine.data_dir != data_dir.expanduser().resolve():
                _log.warning(
                    "Spark is already running with data dir %s; ignoring %s",
                    _engine.data_dir,
                    data_dir,
                )
            return _engine.session

        java = find_java()
        # Spark's launcher prefers JAVA_HOME over PATH; point it at the Java we
        # checked, which matters when JAVA_HOME was rejected and PATH won.
        if os.environ.get("JAVA_HOME") != str(java.home):
            _log.debug("Setting JAVA_HOME=%s for Spark", java.home)
            os.environ["JAVA_HOME"] = str(java.home)
        # Python workers (UDFs, mapInArrow) would otherwise run `python3` from PATH,
        # which may lack pyspark/pyarrow or be another version.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        logging.getLogger("py4j").setLevel(logging.WARNING)
        _silence_pyspark_error_loggers()
        _demote_py4j_root_records()

        data_dir = data_dir.expanduser().resolve()
        conf = build_spark_conf(spark_conf, data_dir, app_name=app_name)
        # Spark's UI (no authentication) binds to $SPARK_LOCAL_IP, else every
        # interface, and the driver's ports follow it too. A local engine
        # serves this machine only, as the gateway's endpoints do by default.
        if local_cores(conf["spark.master"], 1) is not None and LOCAL_IP_ENV not in os.environ:
            os.environ[LOCAL_IP_ENV] = "127.0.0.1"
            # The UI's printed URL, which would otherwise say "localhost"
            # (possibly ::1, where nothing listens).
            os.environ.setdefault("SPARK_PUBLIC_DNS", "127.0.0.1")
        for sub in ("log", "metastore", "warehouse", "tmp"):
            (data_dir / sub).mkdir(parents=True, exist_ok=True)
        write_log4j_config(data_dir)
        prepare_metastore(conf, java.path, spark_home() / "jars", data_dir / "tmp")

        console_log = data_dir / "log" / "spark-console.log"
        offsets = [_size(console_log), _size(data_dir / "log" / "spark.log")]
        session, gateway = _launch(conf, console_log)
        _engine = _Engine(session, gateway, data_dir, *offsets)
        _log.info(
            "Spark %s started (master %s, Java %s, data dir %s)",
            session.version,
            conf["spark.master"],
            java.version,
            data_dir,
        )
        return session


def _silence_pyspark_error_loggers() -> None:
    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        # Created here (once, at start-up) as the PySparkLogger PySpark expects:
        # it calls them with extra keyword arguments a plain Logger rejects.
        logger = PySparkLogger.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.addHandler(logging.NullHandler())
        logger.propagate = False


class _Py4jRetryFilter(logging.Filter):
    """py4j logs a connection it retries (e.g. while Spark stops) through the
    *root* logger at INFO with a traceback: turned into DEBUG, it stays in the
    log file and off the terminal."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.INFO and f"{os.sep}py4j{os.sep}" in record.pathname:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


def _demote_py4j_root_records() -> None:
    root = logging.getLogger()
    if not any(isinstance(f, _Py4jRetryFilter) for f in root.filters):
        root.addFilter(_Py4jRetryFilter())


def _launch(conf: dict[str, str], console_log: Path) -> tuple[SparkSession, Any]:
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    spark_conf = SparkConf(loadDefaults=False)
    spark_conf.setAll(list(conf.items()))

    if SparkContext._gateway is not None:
        # A JVM launched elsewhere (e.g. under spark-submit, or pyspark used
        # directly before us): JVM options and stream redirection cannot apply.
        _log.warning("Reusing a JVM not started by sparkgate; its console output is not captured")
        context = SparkContext.getOrCreate(spark_conf)
        return SparkSession(context), None

    start = console_log.stat().st_size if console_log.exists() else 0
    try:
        with console_log.open("ab") as console:
            gateway = launch_gateway(
                spark_conf,
                popen_kwargs={
                    "stdout": console,
                    "stderr": subprocess.STDOUT,
                    # Signals for the terminal's foreground job (Ctrl-C) or a
                    # process group (kill -TERM -PGID) are for the gateway, which
                    # stops Spark in order; the JVM would otherwise die first.
                    "start_new_session": True,
                },
            )
        try:
            context = SparkContext(conf=spark_conf, gateway=gateway)
            return SparkSession(context), gateway
        except BaseException:
            _shutdown_jvm(gateway)
            raise
    except Exception:
        # The reason (bad option, no memory, ...) is in the console output we hid.
        _log.error(
            "Spark failed to start; its console output (%s) said:\n%s",
            console_log,
            _tail(console_log, start),
        )
        raise


def _tail(path: Path, start: int, max_lines: int = 30) -> str:
    try:
        with path.open("rb") as f:
            f.seek(start)
            text = f.read().decode("utf-8", errors="replace")
    except OSError as exc:
        return f"(unreadable: {exc})"
    return "\n".join(text.strip().splitlines()[-max_lines:]) or "(nothing)"


def _shutdown_jvm(gateway: Any) -> None:
    """End the JVM we launched and forget it, so a later start launches a fresh one."""
    from pyspark import SparkContext

    try:
        gateway.shutdown()
    except Exception:  # already gone; nothing left to close
        _log.debug("py4j gateway shutdown failed", exc_info=True)
    proc: subprocess.Popen[bytes] | None = getattr(gateway, "proc", None)
    if proc is not None:
        # Spark's PythonGatewayServer exits when its stdin closes (that is how it
        # follows a dying Python driver); its shutdown hooks clean Spark's temp dirs.
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=_JVM_EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            _log.warning("Spark's JVM did not exit in %.0f s; killing it", _JVM_EXIT_TIMEOUT_S)
            proc.kill()
            proc.wait()
    with SparkContext._lock:
        if SparkContext._gateway is gateway:
            SparkContext._gateway = None
            SparkContext._jvm = None


def _jvm_exited(gateway: Any) -> bool:
    proc: subprocess.Popen[bytes] | None = getattr(gateway, "proc", None)
    return proc is not None and proc.poll() is not None


# What a dying JVM prints that says why (SparkUncaughtExceptionHandler, the JVM itself).
_EXIT_WAIT_S = 10.0
# Spark's own exit codes (org.apache.spark.util.SparkExitCode).
_SPARK_EXIT_CODES = {
    50: "an uncaught exception",
    52: "java.lang.OutOfMemoryError",
    53: "no local directory could be created",
}
_DEATH_NOTICES = ("java.lang.OutOfMemoryError", "java.lang.StackOverflowError")


def engine_failure() -> str | None:
    """Why the running engine can no longer serve, or None while it can.

    Cheap enough to poll every second: the JVM process's exit status, then one
    py4j call asking whether the SparkContext was stopped.
    """
    engine = _engine
    if engine is None:
        return None
    proc: subprocess.Popen[bytes] | None = getattr(engine.gateway, "proc", None)
    if proc is not None and proc.poll() is not None:
        return _exit_cause(engine, proc.returncode)
    try:
        stopped = bool(engine.session.sparkContext._jsc.sc().isStopped())
    except Exception as exc:  # the JVM does not answer: it may be on its way out
        cause = f"engine unreachable: {type(exc).__name__}: {exc}"
    else:
        if not stopped:
            return None
        cause = "SparkContext stopped"
    # A JVM exiting (System.exit, an OutOfMemoryError) stops the SparkContext in its
    # shutdown hook first: its exit status says more.
    if proc is not None:
        try:
            return _exit_cause(engine, proc.wait(timeout=_EXIT_WAIT_S))
        except subprocess.TimeoutExpired:
            pass
    return cause


def _exit_cause(engine: _Engine, code: int) -> str:
    notice = _death_notice(engine) or _SPARK_EXIT_CODES.get(code)
    how = f"engine JVM exited with {code}" if code >= 0 else f"engine JVM killed by signal {-code}"
    return f"{how}: {notice}" if notice else how


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _death_notice(engine: _Engine) -> str | None:
    logs = engine.data_dir / "log"
    for path, offset in (
        (logs / "spark-console.log", engine.console_offset),
        (logs / "spark.log", engine.log_offset),
    ):
        for line in _tail(path, offset, max_lines=2000).splitlines():
            for notice in _DEATH_NOTICES:
                if notice in line:
                    return line[line.index(notice) :].strip()
    return None


def _forget_pyspark_state() -> None:
    """PySpark's class-level handles of a SparkContext whose JVM died, so that a new
    one can start in this process."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    with SparkContext._lock:
        SparkContext._active_spark_context = None
        SparkContext._gateway = None
        SparkContext._jvm = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None


def stop_spark() -> None:
    """Stop Spark and its JVM; a no-op when Spark is not running."""
    global _engine
    with _lock:
        engine, _engine = _engine, None
        if engine is None:
            return
        try:
            engine.session.stop()
        except Exception:
            if not _jvm_exited(engine.gateway):
                raise
            _log.warning("Spark's JVM had already exited; see %s", engine.data_dir / "log")
            _forget_pyspark_state()
        finally:
            if engine.gateway is not None:
                _shutdown_jvm(engine.gateway)
        _log.info("Spark stopped")
