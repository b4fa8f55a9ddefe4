"""The Hive metastore in PostgreSQL (the production set-up of docs/cluster.md).

Two gateway processes, each with its own data directory, share one metastore
database on a real PostgreSQL server (Debian's, started by the fixture) and
one warehouse: a table one creates the other reads, with its DECIMAL and
TIMESTAMP rows; a gateway killed and started again finds every table where
it was; the embedded Derby metastore is not used.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.postgres import PostgresServer, jdbc_driver_jar
from tests.processes import Rest, gateway, kill_with_spark

pytestmark = pytest.mark.timeout(900)


def metastore_options(server: PostgresServer, warehouse: Path) -> tuple[str, ...]:
    server.psql("DROP DATABASE IF EXISTS hive_metastore", database="postgres")
    server.psql("CREATE DATABASE hive_metastore", database="postgres")
    # What docs/cluster.md tells a user to set: the database, and the driver on the
    # driver's class path. The gateway makes the metastore's tables itself.
    return (
        f"-Dspark.driver.extraClassPath={jdbc_driver_jar()}",
        f"-Dspark.sql.warehouse.dir={warehouse}",
        "-Dspark.hadoop.javax.jdo.option.ConnectionURL="
        f"jdbc:postgresql://{server.host}:{server.port}/hive_metastore",
        "-Dspark.hadoop.javax.jdo.option.ConnectionDriverName=org.postgresql.Driver",
        f"-Dspark.hadoop.javax.jdo.option.ConnectionUserName={server.user}",
        f"-Dspark.hadoop.javax.jdo.option.ConnectionPassword={server.password}",
    )


def test_two_gateways_share_a_metastore_in_postgres(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    options = metastore_options(postgres, tmp_path / "warehouse")
    with gateway(tmp_path / "a", tmp_path / "data-a", *options) as (url_a, process_a):
        with Rest(url_a) as rest:
            rest.run("CREATE DATABASE shop")
            rest.run(
                "CREATE TABLE shop.orders (id BIGINT, amount DECIMAL(10, 2), at TIMESTAMP) "
                "USING parquet"
            )
            rest.run(
                "INSERT INTO shop.orders VALUES (1, 19.99, TIMESTAMP '2026-05-06 07:08:09.123'), "
                "(2, 0.01, TIMESTAMP '2026-12-31 23:59:59')"
            )
            rest.run("CREATE TABLE shop.daily (id BIGINT, d DATE) USING parquet PARTITIONED BY (d)")
            rest.run("INSERT INTO shop.daily VALUES (1, DATE '2026-05-06'), (2, DATE '2026-05-07')")
            rest.run("CREATE VIEW shop.big AS SELECT id FROM shop.orders WHERE amount > 1")
        # The tables are in PostgreSQL, not in a Derby database of the data directory.
        assert "orders" in postgres.psql('SELECT "TBL_NAME" FROM "TBLS"', database="hive_metastore")
        assert not (tmp_path / "data-a" / "metastore" / "metastore_db").exists()
        with (
            gateway(tmp_path / "b", tmp_path / "data-b", *options) as (url_b, _),
            Rest(url_b) as other,
        ):
            assert other.rows(
                "SELECT id, CAST(amount AS STRING), CAST(at AS STRING) FROM shop.orders ORDER BY id"
            ) == [[1, "19.99", "2026-05-06 07:08:09.123"], [2, "0.01", "2026-12-31 23:59:59"]]
            assert other.rows("SHOW PARTITIONS shop.daily") == [["d=2026-05-06"], ["d=2026-05-07"]]
            assert other.rows("SELECT * FROM shop.big") == [[1]]
            other.run("CREATE TABLE shop.returns AS SELECT id FROM shop.orders WHERE id = 2")
        kill_with_spark(process_a)
    with (
        gateway(tmp_path / "a-again", tmp_path / "data-a", *options) as (url, _),
        Rest(url) as rest,
    ):
        assert {"orders", "daily", "big", "returns"} <= rest.tables("shop")
        assert rest.rows("SELECT count(*) FROM shop.returns") == [[1]]
