"""Flink's own JDBC driver against the real gateway: its metadata calls work.

The driver (``org.apache.flink:flink-sql-jdbc-driver`` and what it depends
on) comes from Maven Central through ``mvn`` (cached in the local Maven
repository); a small Java program compiled here with ``javac`` makes the
calls and prints what they return.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.conftest import GatewayProcess
from tests.locks import exclusive

DRIVER_VERSION = "2.3.0"

POM = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>sparkgate.tests</groupId>
  <artifactId>flink-jdbc-check</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>org.apache.flink</groupId>
      <artifactId>flink-sql-jdbc-driver</artifactId>
      <version>{DRIVER_VERSION}</version>
    </dependency>
  </dependencies>
</project>
"""

PROGRAM = """
import java.sql.*;

public class FlinkJdbcCheck {
  static String column(ResultSet rs, String name) throws SQLException {
    StringBuilder out = new StringBuilder();
    while (rs.next()) {
      out.append(out.length() == 0 ? "" : ",").append(rs.getString(name));
    }
    return out.toString();
  }

  public static void main(String[] args) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:flink://" + args[0])) {
      System.out.println("catalog=" + c.getCatalog());
      System.out.println("schema=" + c.getSchema());
      DatabaseMetaData md = c.getMetaData();
      System.out.println("catalogs=" + column(md.getCatalogs(), "TABLE_CAT"));
      ResultSet schemas = md.getSchemas();
      StringBuilder pairs = new StringBuilder();
      while (schemas.next()) {
        pairs.append(pairs.length() == 0 ? "" : ",")
            .append(schemas.getString("TABLE_CATALOG")).append(".")
            .append(schemas.getString("TABLE_SCHEM"));
      }
      System.out.println("schemas=" + pairs);
      c.setSchema(args[1]);
      System.out.println("schema_after_set=" + c.getSchema());
      try (Statement s = c.createStatement()) {
        s.execute("SHOW TABLES");
        System.out.println("tables=" + column(s.getResultSet(), "table name"));
      }
    }
  }
}
"""


@pytest.fixture(scope="module")
def driver_classpath(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    mvn, javac = shutil.which("mvn"), shutil.which("javac")
    if mvn is None or javac is None:
        pytest.skip("needs mvn and a JDK (javac) to fetch and run Flink's JDBC driver")
    work = tmp_path_factory.mktemp("flink-jdbc")
    (work / "pom.xml").write_text(POM, encoding="utf-8")
    with exclusive("maven"):
        subprocess.run(
            [mvn, "-q", "-B", "dependency:build-classpath", "-Dmdep.outputFile=classpath.txt"],
            cwd=work,
            check=True,
            timeout=600,
        )
    classpath = (work / "classpath.txt").read_text(encoding="utf-8").strip()
    (work / "FlinkJdbcCheck.java").write_text(PROGRAM, encoding="utf-8")
    subprocess.run([javac, "-cp", classpath, "FlinkJdbcCheck.java"], cwd=work, check=True)
    yield work, classpath


def _statement(url: str, session: str, statement: str) -> None:
    base = f"{url}/v4/sessions/{session}"
    op = httpx.post(f"{base}/statements", json={"statement": statement}).json()
    uri: str | None = f"{base}/operations/{op['operationHandle']}/result/0"
    while uri is not None:
        response = httpx.get(uri if uri.startswith("http") else url + uri, timeout=120)
        assert response.status_code == 200, response.text
        uri = response.json().get("nextResultUri")


def test_flink_jdbc_driver_metadata_calls(
    gateway_process: GatewayProcess, driver_classpath: tuple[Path, str]
) -> None:
    url = gateway_process.url
    session = httpx.post(f"{url}/v4/sessions", json={}).json()["sessionHandle"]
    try:
        for statement in (
            "CREATE DATABASE IF NOT EXISTS jdbc_meta",
            "CREATE TABLE IF NOT EXISTS jdbc_meta.gen (id INT) "
            "WITH ('connector' = 'datagen', 'number-of-rows' = '1')",
        ):
            _statement(url, session, statement)
    finally:
        httpx.delete(f"{url}/v4/sessions/{session}")
    work, classpath = driver_classpath
    java = shutil.which("java") or "java"
    done = subprocess.run(
        [java, "-cp", f"{classpath}:{work}", "FlinkJdbcCheck", urlsplit(url).netloc, "jdbc_meta"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answers = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert answers["catalog"] == "spark_catalog"
    assert answers["schema"] == "default"
    assert "spark_catalog" in answers["catalogs"].split(",")
    schemas = answers["schemas"].split(",")
    assert "spark_catalog.default" in schemas
    assert "spark_catalog.jdbc_meta" in schemas
    assert answers["schema_after_set"] == "jdbc_meta"
    assert answers["tables"] == "gen"
