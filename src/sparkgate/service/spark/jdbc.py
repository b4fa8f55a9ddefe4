"""JDBC URLs and connections: one home for what the JDBC catalog and the
``jdbc`` connector both need."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["DRIVERS", "connection", "driver_class", "subprotocol"]

#: The driver class a URL's subprotocol names: Spark needs the class when the
#: driver's jar came at run time.
DRIVERS = {
    "postgresql": "org.postgresql.Driver",
    "mysql": "com.mysql.cj.jdbc.Driver",
    "mariadb": "org.mariadb.jdbc.Driver",
    "derby": "org.apache.derby.iapi.jdbc.AutoloadedDriver",
    "sqlserver": "com.microsoft.sqlserver.jdbc.SQLServerDriver",
    "oracle": "oracle.jdbc.OracleDriver",
    "db2": "com.ibm.db2.jcc.DB2Driver",
}


def subprotocol(url: str) -> str:
    """``postgresql`` of ``jdbc:postgresql://...``; "" when it is no JDBC URL."""
    parts = url.split(":", 2)
    return parts[1].lower() if len(parts) > 2 and parts[0].lower() == "jdbc" else ""


def driver_class(url: str, explicit: str | None = None) -> str | None:
    return explicit or DRIVERS.get(subprotocol(url))


@contextlib.contextmanager
def connection(
    spark: SparkSession, url: str, user: str | None, password: str | None, driver: str | None
) -> Iterator[Any]:
    """A JDBC connection from the driver's JVM, closed after the block.

    The driver's class is registered through Spark's ``DriverRegistry``: a
    driver whose jar was added at run time is otherwise invisible to
    ``DriverManager`` called over py4j.
    """
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    if driver:
        jvm.org.apache.spark.sql.execution.datasources.jdbc.DriverRegistry.register(driver)
    properties = jvm.java.util.Properties()
    if user is not None:
        properties.setProperty("user", user)
    if password is not None:
        properties.setProperty("password", password)
    opened = jvm.java.sql.DriverManager.getConnection(url, properties)
    try:
        yield opened
    finally:
        opened.close()
