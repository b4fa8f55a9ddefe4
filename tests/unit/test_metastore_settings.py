"""Which metastores the gateway prepares, and the settings it derives (no JVM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkgate.service.spark.engine import build_spark_conf
from sparkgate.service.spark.metastore import (
    _class_path,
    _jdo_properties,
    _properties_text,
    _root_cause,
    metastore_database,
    metastore_defaults,
)

POSTGRES = "jdbc:postgresql://127.0.0.1:5432/hive"


@pytest.mark.parametrize(
    ("conf", "expected"),
    [
        ({}, None),
        ({"spark.hadoop.javax.jdo.option.ConnectionURL": "jdbc:derby:;databaseName=x"}, None),
        ({"spark.hadoop.javax.jdo.option.ConnectionURL": POSTGRES}, POSTGRES),
        ({"spark.hive.javax.jdo.option.ConnectionURL": POSTGRES}, POSTGRES),
        (
            {
                "spark.hadoop.javax.jdo.option.ConnectionURL": POSTGRES,
                "spark.hadoop.hive.metastore.uris": "thrift://127.0.0.1:9083",
            },
            None,
        ),
        (
            {
                "spark.hadoop.javax.jdo.option.ConnectionURL": POSTGRES,
                "spark.sql.catalogImplementation": "in-memory",
            },
            None,
        ),
    ],
)
def test_only_a_database_of_the_users_is_prepared(
    conf: dict[str, str], expected: str | None
) -> None:
    assert metastore_database(conf) == expected


def test_the_default_engine_keeps_derby_and_hives_verification(tmp_path: Path) -> None:
    conf = build_spark_conf({}, tmp_path)
    assert conf["spark.hadoop.javax.jdo.option.ConnectionURL"].startswith("jdbc:derby:")
    assert "spark.hadoop.hive.metastore.schema.verification" not in conf


def test_tables_made_by_the_gateway_are_not_refused_by_hives_verification(
    tmp_path: Path,
) -> None:
    url = {"spark.hadoop.javax.jdo.option.ConnectionURL": POSTGRES}
    assert build_spark_conf(url, tmp_path)["spark.hadoop.hive.metastore.schema.verification"] == (
        "false"
    )
    # The user's choice stands, and a schema of Hive's schematool keeps verification on.
    verified = {**url, "spark.hadoop.hive.metastore.schema.verification": "true"}
    assert metastore_defaults(verified) == {}
    managed = {**url, "spark.hadoop.datanucleus.schema.autoCreateAll": "false"}
    assert metastore_defaults(managed) == {}
    assert "spark.hadoop.hive.metastore.schema.verification" not in build_spark_conf(
        managed, tmp_path
    )


def test_datanucleus_sees_hives_mapping_defaults_and_the_users_settings() -> None:
    properties = _jdo_properties(
        {
            "spark.hadoop.javax.jdo.option.ConnectionURL": POSTGRES,
            "spark.hadoop.javax.jdo.option.ConnectionPassword": "p=a:ss\\word",
            "spark.hive.datanucleus.identifierFactory": "from-spark-hive",
            "spark.hadoop.datanucleus.rdbms.useLegacyNativeValueStrategy": "false",
            "spark.hadoop.hive.metastore.warehouse.dir": "/w",
            "spark.sql.shuffle.partitions": "4",
        }
    )
    assert properties == {
        "javax.jdo.option.ConnectionURL": POSTGRES,
        "javax.jdo.option.ConnectionPassword": "p=a:ss\\word",
        "datanucleus.identifierFactory": "from-spark-hive",
        "datanucleus.rdbms.useLegacyNativeValueStrategy": "false",
        "datanucleus.storeManagerType": "rdbms",
        "datanucleus.schema.autoCreateAll": "true",
    }
    # java.util.Properties escapes: the password comes back as written.
    assert "javax.jdo.option.ConnectionPassword=p\\=a\\:ss\\\\word\n" in _properties_text(
        properties
    )


def test_the_tool_sees_the_jars_the_driver_is_given(tmp_path: Path) -> None:
    path = _class_path(
        {
            "spark.driver.extraClassPath": "/opt/a.jar:/opt/b/*",
            "spark.jars": "file:///opt/c.jar, /opt/d.jar,https://example.org/e.jar",
        },
        tmp_path,
    )
    assert path.split(":") == [
        str(tmp_path / "*"),
        "/opt/a.jar",
        "/opt/b/*",
        "/opt/c.jar",
        "/opt/d.jar",
    ]


def test_a_failure_names_the_innermost_cause() -> None:
    output = (
        "DataNucleus SchemaTool : Schema creation\n"
        "javax.jdo.JDOFatalDataStoreException: Unable to open a test connection\n"
        "\tat org.datanucleus.Foo(Foo.java:1)\n"
        "Caused by: org.postgresql.util.PSQLException: FATAL: password authentication "
        'failed for user "x"\n'
        "\tat org.postgresql.Bar(Bar.java:2)\n"
    )
    assert _root_cause(output) == (
        'org.postgresql.util.PSQLException: FATAL: password authentication failed for user "x"'
    )
