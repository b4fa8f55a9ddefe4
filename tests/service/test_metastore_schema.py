"""The Hive metastore's tables made in a real PostgreSQL database before Spark starts
(service/spark/metastore.py): once, idempotently, with a clear error when it cannot."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkgate.api.errors import ConfigurationError
from sparkgate.service.spark.java import find_java, spark_home
from sparkgate.service.spark.metastore import prepare_metastore
from tests.postgres import JDBC_DRIVER_CLASS, PostgresServer, jdbc_driver_jar

# A PostgreSQL server and a JVM of DataNucleus's tool; no Spark.
pytestmark = pytest.mark.service

# Tables of Hive's metastore that Spark's catalog reads and writes.
_HIVE_TABLES = {"DBS", "TBLS", "SDS", "COLUMNS_V2", "PARTITIONS", "FUNCS", "TABLE_PARAMS"}


def _conf(server: PostgresServer, database: str, **overrides: str) -> dict[str, str]:
    conf = {
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:postgresql://{server.host}:{server.port}/{database}"
        ),
        "spark.hadoop.javax.jdo.option.ConnectionDriverName": JDBC_DRIVER_CLASS,
        "spark.hadoop.javax.jdo.option.ConnectionUserName": server.user,
        "spark.hadoop.javax.jdo.option.ConnectionPassword": server.password,
        "spark.driver.extraClassPath": str(jdbc_driver_jar()),
    }
    conf.update({k.replace("__", "."): v for k, v in overrides.items()})
    return conf


def _tables(server: PostgresServer, database: str) -> set[str]:
    listing = server.psql(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'", database=database
    )
    return set(listing.split())


@pytest.fixture
def database(postgres: PostgresServer, request: pytest.FixtureRequest) -> str:
    name = f"metastore_{request.node.name.split('[')[0][-40:]}".lower()
    postgres.psql(f"DROP DATABASE IF EXISTS {name}", database="postgres")
    postgres.psql(f"CREATE DATABASE {name}", database="postgres")
    return name


def test_the_tables_are_made_once_and_left_alone_after(
    postgres: PostgresServer, database: str, tmp_path: Path
) -> None:
    java = find_java().path
    prepare_metastore(_conf(postgres, database), java, spark_home() / "jars", tmp_path / "tmp")
    made = _tables(postgres, database)
    assert made >= _HIVE_TABLES, sorted(made)
    postgres.psql(
        """INSERT INTO "DBS" ("DB_ID", "DESC", "DB_LOCATION_URI", "NAME", "OWNER_NAME",
        "OWNER_TYPE") VALUES (1, 'kept', '/w', 'default', 'me', 'USER')""",
        database=database,
    )
    # A second start finds them ready: nothing is dropped or emptied.
    prepare_metastore(_conf(postgres, database), java, spark_home() / "jars", tmp_path / "tmp")
    assert _tables(postgres, database) == made
    assert postgres.psql('SELECT "DESC" FROM "DBS"', database=database).split() == ["kept"]
    # The password file the tool read is gone.
    assert list((tmp_path / "tmp").iterdir()) == []


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (
            {"spark__hadoop__javax__jdo__option__ConnectionPassword": "wrong"},
            "password authentication failed",
        ),
        ({"spark__driver__extraClassPath": ""}, "was not found in the CLASSPATH"),
    ],
    ids=["wrong-password", "no-jdbc-driver"],
)
def test_a_database_it_cannot_use_stops_the_start_with_the_cause(
    postgres: PostgresServer,
    database: str,
    tmp_path: Path,
    overrides: dict[str, str],
    expected: str,
) -> None:
    conf = _conf(postgres, database, **overrides)
    with pytest.raises(ConfigurationError) as failure:
        prepare_metastore(conf, find_java().path, spark_home() / "jars", tmp_path / "tmp")
    message = str(failure.value)
    assert expected in message, message
    assert message.startswith("Could not create the Hive metastore's tables in jdbc:postgresql://")
    assert postgres.password not in message
    assert _tables(postgres, database) == set()
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_schema_managed_with_hives_schematool_is_not_touched(
    postgres: PostgresServer, database: str, tmp_path: Path
) -> None:
    conf = _conf(postgres, database, spark__hadoop__datanucleus__schema__autoCreateAll="false")
    prepare_metastore(conf, find_java().path, spark_home() / "jars", tmp_path / "tmp")
    assert _tables(postgres, database) == set()
