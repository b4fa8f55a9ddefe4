"""The engine's Spark configuration and log4j file, checked without starting Spark."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from sparkgate.api.errors import ConfigurationError
from sparkgate.service.spark.engine import available_cores, build_spark_conf, write_log4j_config

__all__: list[str] = []


def test_defaults_put_everything_under_the_data_dir(tmp_path: Path) -> None:
    conf = build_spark_conf({}, tmp_path, app_name="gw")
    assert conf["spark.master"] == "local[*]"
    assert conf["spark.app.name"] == "gw"
    assert conf["spark.sql.catalogImplementation"] == "hive"
    assert conf["spark.sql.warehouse.dir"] == str(tmp_path / "warehouse")
    assert conf["spark.hadoop.javax.jdo.option.ConnectionURL"] == (
        f"jdbc:derby:;databaseName={tmp_path}/metastore/metastore_db;create=true"
    )
    assert conf["spark.driver.memory"] == "2g"
    assert conf["spark.sql.execution.arrow.pyspark.enabled"] == "true"
    assert conf["spark.ui.showConsoleProgress"] == "false"
    options = shlex.split(conf["spark.driver.extraJavaOptions"])
    assert options == [
        f"-Dlog4j2.configurationFile={(tmp_path / 'conf' / 'log4j2.properties').as_uri()}",
        f"-Dderby.system.home={tmp_path / 'metastore'}",
        f"-Dderby.stream.error.file={tmp_path / 'log' / 'derby.log'}",
    ]


def test_given_spark_keys_win(tmp_path: Path) -> None:
    conf = build_spark_conf(
        {
            "spark.master": "spark://cluster:7077",
            "spark.driver.memory": "8g",
            "spark.sql.catalogImplementation": "in-memory",
            "spark.sql.shuffle.partitions": "7",
        },
        tmp_path,
    )
    assert conf["spark.master"] == "spark://cluster:7077"
    assert conf["spark.driver.memory"] == "8g"
    assert conf["spark.sql.catalogImplementation"] == "in-memory"
    assert conf["spark.sql.shuffle.partitions"] == "7"


def test_java_options_are_appended_to_the_users(tmp_path: Path) -> None:
    conf = build_spark_conf({"spark.driver.extraJavaOptions": "-XX:+UseG1GC"}, tmp_path)
    options = shlex.split(conf["spark.driver.extraJavaOptions"])
    assert options[0] == "-XX:+UseG1GC"
    assert any(o.startswith("-Dlog4j2.configurationFile=") for o in options[1:])


def test_users_own_log4j_configuration_is_kept(tmp_path: Path) -> None:
    mine = "-Dlog4j2.configurationFile=file:/etc/mine.properties"
    conf = build_spark_conf({"spark.driver.extraJavaOptions": mine}, tmp_path)
    options = shlex.split(conf["spark.driver.extraJavaOptions"])
    assert [o for o in options if "log4j2.configurationFile" in o] == [mine]
    assert any(o.startswith("-Dderby.system.home=") for o in options)


def test_paths_with_spaces_are_quoted_for_the_launcher(tmp_path: Path) -> None:
    data_dir = tmp_path / "my data"
    options = shlex.split(build_spark_conf({}, data_dir)["spark.driver.extraJavaOptions"])
    assert f"-Dderby.system.home={data_dir / 'metastore'}" in options


@pytest.mark.parametrize("key", ["hive.metastore.uris", "sql-gateway.data-dir", "Spark.master"])
def test_non_spark_keys_are_rejected(tmp_path: Path, key: str) -> None:
    with pytest.raises(ConfigurationError, match=key):
        build_spark_conf({key: "x"}, tmp_path)


def test_data_dir_with_semicolon_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="';'"):
        build_spark_conf({}, tmp_path / "a;b")


def test_log4j_config_logs_to_the_data_dir(tmp_path: Path) -> None:
    config = write_log4j_config(tmp_path)
    assert config == tmp_path / "conf" / "log4j2.properties"
    assert (tmp_path / "log").is_dir()
    properties = dict(
        line.split(" = ", 1)
        for line in config.read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert properties["appender.file.fileName"] == f"{tmp_path}/log/spark.log"
    assert properties["rootLogger.appenderRef.file.ref"] == "file"
    # No console appender: nothing may reach the terminal through log4j.
    assert not any(v == "Console" for k, v in properties.items() if k.endswith(".type"))
    # Spark's interpreter check: this logger's level must equal the root's.
    assert properties["logger.pygateway.level"] == properties["rootLogger.level"]


@pytest.mark.parametrize(
    ("master", "partitions"),
    [(None, "6"), ("local[*]", "6"), ("local[3]", "3"), ("local[2,4]", "2"), ("local", "1")],
)
def test_local_masters_get_shuffle_partitions_sized_to_their_cores(
    tmp_path: Path, master: str | None, partitions: str
) -> None:
    given = {} if master is None else {"spark.master": master}
    conf = build_spark_conf(given, tmp_path, cores=6)
    assert conf["spark.sql.shuffle.partitions"] == partitions


def test_users_shuffle_partitions_win_and_clusters_keep_sparks_default(tmp_path: Path) -> None:
    mine = build_spark_conf({"spark.sql.shuffle.partitions": "200"}, tmp_path, cores=6)
    assert mine["spark.sql.shuffle.partitions"] == "200"
    cluster = build_spark_conf({"spark.master": "spark://h:7077"}, tmp_path, cores=6)
    assert "spark.sql.shuffle.partitions" not in cluster


def test_local_star_uses_the_cores_this_process_may_use(tmp_path: Path) -> None:
    conf = build_spark_conf({}, tmp_path)
    assert conf["spark.sql.shuffle.partitions"] == str(available_cores())


@pytest.mark.parametrize(
    ("given", "limit"),
    [
        ({}, "512m"),  # a quarter of the default 2g driver
        ({"spark.driver.memory": "4g"}, "1024m"),
        ({"spark.driver.memory": "4096m"}, "1024m"),
        ({"spark.driver.memory": "3g"}, "768m"),
        ({"spark.driver.memory": "2g", "spark.driver.maxResultSize": "0"}, "0"),  # no limit
        ({"spark.driver.memory": "8g", "spark.driver.maxResultSize": "3g"}, "3g"),
    ],
)
def test_max_result_size_is_a_quarter_of_the_driver_unless_given(
    tmp_path: Path, given: dict[str, str], limit: str
) -> None:
    assert build_spark_conf(given, tmp_path)["spark.driver.maxResultSize"] == limit


def test_fair_scheduling_by_default_and_the_users_allocation_file_reaches_spark(
    tmp_path: Path,
) -> None:
    assert build_spark_conf({}, tmp_path)["spark.scheduler.mode"] == "FAIR"
    assert "spark.scheduler.allocation.file" not in build_spark_conf({}, tmp_path)
    pools = str(tmp_path / "fairscheduler.xml")
    conf = build_spark_conf({"spark.scheduler.allocation.file": pools}, tmp_path)
    assert conf["spark.scheduler.allocation.file"] == pools
    assert conf["spark.scheduler.mode"] == "FAIR"
    fifo = build_spark_conf({"spark.scheduler.mode": "FIFO"}, tmp_path)
    assert fifo["spark.scheduler.mode"] == "FIFO"
