"""The statements Flink's JDBC driver sends for its metadata calls, over REST.

``FlinkConnection.getCatalog()`` / ``getSchema()`` read column 0 of SHOW
CURRENT CATALOG / SHOW CURRENT DATABASE; ``setCatalog`` / ``setSchema``
configure the session with USE CATALOG / USE; ``DatabaseMetaData.getCatalogs()``
reads SHOW CATALOGS and ``getSchemas()`` SHOW DATABASES of each catalog.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.rest.conftest import run


def _first_column(client: httpx.Client, session: str, statement: str) -> tuple[str, list[Any]]:
    bodies = run(client, session, statement)
    page = next(b for b in bodies if "results" in b)
    columns = page["results"]["columns"]
    values = [row["fields"][0] for b in bodies if "results" in b for row in b["results"]["data"]]
    return columns[0]["name"], values


def _configure(client: httpx.Client, session: str, statement: str) -> None:
    response = client.post(
        f"/v4/sessions/{session}/configure-session", json={"statement": statement}
    )
    assert response.status_code == 200, response.text


def test_jdbc_driver_catalog_and_schema_calls(client: httpx.Client, session: str) -> None:
    # getCatalog() and getSchema(): one row, one column each.
    assert _first_column(client, session, "SHOW CURRENT CATALOG;") == (
        "current catalog name",
        ["spark_catalog"],
    )
    assert _first_column(client, session, "SHOW CURRENT DATABASE;") == (
        "current database name",
        ["default"],
    )
    # getCatalogs() then getSchemas(): USE CATALOG each, SHOW DATABASES, restore.
    name, catalogs = _first_column(client, session, "SHOW CATALOGS;")
    assert name == "catalog name"
    assert "spark_catalog" in catalogs
    _configure(client, session, "USE CATALOG spark_catalog;")
    name, databases = _first_column(client, session, "SHOW DATABASES;")
    assert name == "database name"
    assert "default" in databases
    _configure(client, session, "USE `default`;")
    assert _first_column(client, session, "SHOW CURRENT DATABASE;")[1] == ["default"]
