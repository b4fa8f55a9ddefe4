"""The embedded engine, each start in its own Python process.

Subprocesses because the engine owns the process's one SparkContext and JVM
(the shared ``spark`` fixture holds them in this one), and because what the
engine must keep off the terminal is the process's own stdout/stderr.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__: list[str] = []

# Writes its observations to a JSON file, so the process's stdout and stderr
# carry only what Spark, the JVM, Hive or Derby would leak to a terminal.
_WRITER = """
import json, sys
from pathlib import Path
from sparkgate.service.spark.engine import start_spark, stop_spark

data_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
spark = start_spark({"spark.master": "local[2]", "spark.sql.shuffle.partitions": "7"}, data_dir)
spark.sql("CREATE TABLE kept (id INT, name STRING)")
spark.sql("INSERT INTO kept VALUES (1, 'one')")
rows = [tuple(r) for r in spark.sql("SELECT id, name FROM kept").collect()]
try:  # an error with a SQL query context, which PySpark logs to stderr by default
    spark.sql("SELECT 1 / 0").collect()
    error = None
except Exception as exc:
    error = type(exc).__name__


def noisy(x):
    print("from a python worker", file=sys.stderr)  # Spark copies it to the JVM's stderr
    return x + 1


from pyspark.sql.functions import udf
udf_rows = [r[0] for r in spark.range(2).select(udf(noisy, "long")("id")).collect()]
# What a task killed by a stop while writing logs, next to any other error of the same logger.
utils_log = spark._jvm.org.apache.logging.log4j.LogManager.getLogger("org.apache.spark.util.Utils")
utils_log.error("Aborting task")
utils_log.error("Some other failure")
out.write_text(json.dumps({
    "error": error,
    "udf_rows": udf_rows,
    "rows": rows,
    "partitions": spark.conf.get("spark.sql.shuffle.partitions"),
    "catalog": spark.conf.get("spark.sql.catalogImplementation"),
    "master": spark.sparkContext.master,
    "same_session": start_spark({}, data_dir) is spark,
}))
stop_spark()
"""

_READER = """
import json, sys
from pathlib import Path
from sparkgate.service.spark.engine import is_running, start_spark, stop_spark

data_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
conf = {"spark.master": "local[1]"}
first = [tuple(r) for r in start_spark(conf, data_dir).sql("SELECT * FROM kept").collect()]
stop_spark()
stopped = not is_running()
stop_spark()  # idempotent
# A fresh JVM in the same process can boot the same Derby metastore only if
# stop_spark() released the lock the first one held.
second = [tuple(r) for r in start_spark(conf, data_dir).sql("SELECT * FROM kept").collect()]
stop_spark()
out.write_text(json.dumps({"first": first, "second": second, "stopped": stopped}))
"""


def _run(script: str, data_dir: Path, out: Path) -> tuple[dict[str, Any], str, str]:
    done = subprocess.run(
        [sys.executable, "-c", script, str(data_dir), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    result: dict[str, Any] = json.loads(out.read_text())
    return result, done.stdout, done.stderr


def test_engine_persists_tables_keeps_console_clean_and_passes_spark_keys(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data dir"  # a space: Java options must be quoted for the launcher

    written, stdout, stderr = _run(_WRITER, data_dir, tmp_path / "written.json")
    assert written["rows"] == [[1, "one"]]
    assert written["partitions"] == "7"
    assert written["master"] == "local[2]"
    assert written["catalog"] == "hive"
    assert written["same_session"] is True
    assert written["error"] == "ArithmeticException"
    assert written["udf_rows"] == [1, 2]
    # Nothing at all on the console: no log4j banner, JVM warnings, Hive or Derby.
    assert stdout == ""
    assert stderr == ""

    # The managed table and metastore live in the data dir.
    assert (data_dir / "warehouse" / "kept").is_dir()
    assert (data_dir / "metastore" / "metastore_db").is_dir()
    spark_log = (data_dir / "log" / "spark.log").read_text()
    assert "SparkContext: Running Spark version" in spark_log
    assert "HiveMetaStore" in spark_log or "ObjectStore" in spark_log
    assert "Utils: Some other failure" in spark_log
    assert "Aborting task" not in spark_log
    assert "Booting Derby" in (data_dir / "log" / "derby.log").read_text()
    # What the JVM wrote to its stderr was captured, not lost; Spark kept our
    # root log level instead of switching to WARN with a banner.
    console_log = (data_dir / "log" / "spark-console.log").read_text()
    assert "jdk.incubator.vector" in console_log
    assert "from a python worker" in console_log
    assert "Setting default log level" not in console_log

    read, stdout, stderr = _run(_READER, data_dir, tmp_path / "read.json")
    assert read == {"first": [[1, "one"]], "second": [[1, "one"]], "stopped": True}
    assert stdout == ""
    assert stderr == ""


_BAD_START = """
import logging, sys
from pathlib import Path
from sparkgate.service.spark.engine import is_running, start_spark

logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(message)s")
try:
    start_spark({"spark.driver.memory": "lots"}, Path(sys.argv[1]))
except Exception as exc:
    sys.exit(f"raised {type(exc).__name__} running={is_running()}")
"""


def test_failed_start_logs_the_jvms_reason(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _BAD_START, str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1
    assert "raised PySparkRuntimeError running=False" in done.stderr
    # The JVM's own complaint, otherwise hidden in spark-console.log, is logged.
    assert "ERROR Spark failed to start" in done.stderr
    assert "Invalid maximum heap size: -Xmxlots" in done.stderr
