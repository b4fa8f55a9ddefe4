"""The catalog and completion API through the service facade."""

from __future__ import annotations

import uuid

import pytest

from sparkgate.api.catalog import FunctionKind, ObjectIdentifier, TableKind
from sparkgate.api.errors import CatalogError
from sparkgate.api.handles import SessionHandle
from sparkgate.service.gateway import SparkGatewayService

from .conftest import run


def test_catalog_api(service: SparkGatewayService, session: SessionHandle) -> None:
    db = f"gw_{uuid.uuid4().hex[:8]}"
    run(service, session, f"CREATE DATABASE {db}")
    try:
        run(service, session, f"USE {db}")
        run(
            service,
            session,
            "CREATE TABLE orders (id BIGINT COMMENT 'key', amount DOUBLE) USING parquet",
        )
        run(service, session, "CREATE VIEW big AS SELECT * FROM orders WHERE amount > 10")
        run(service, session, "CREATE TEMPORARY FUNCTION twice(x INT) RETURNS INT RETURN x * 2")
        assert service.get_current_catalog(session) == "spark_catalog"
        assert service.get_current_database(session) == db
        assert "spark_catalog" in service.list_catalogs(session)
        assert db in service.list_databases(session, "spark_catalog")
        tables = service.list_tables(session, "spark_catalog", db)
        assert {(t.identifier.name, t.kind) for t in tables} >= {
            ("orders", TableKind.TABLE),
            ("big", TableKind.VIEW),
        }
        only_views = service.list_tables(session, "spark_catalog", db, frozenset({TableKind.VIEW}))
        assert {t.identifier.name for t in only_views} == {"big"}
        table = service.get_table(session, ObjectIdentifier("spark_catalog", db, "orders"))
        assert [c.name for c in table.columns] == ["id", "amount"]
        assert table.columns[0].comment == "key"
        udfs = service.list_user_defined_functions(session, "spark_catalog", db)
        assert any(f.identifier.name == "twice" for f in udfs)
        system = service.list_system_functions(session)
        assert any(f.identifier.name == "abs" and f.kind is FunctionKind.SYSTEM for f in system)
        assert service.get_function_definition(session, "twice").name == "twice"
        with pytest.raises(CatalogError):
            service.get_table(session, ObjectIdentifier("spark_catalog", db, "missing"))
        assert "orders" in service.complete_statement(session, "SELECT * FROM ord", 17)
        assert "amount" in service.complete_statement(session, "SELECT am FROM orders", 9)
    finally:
        run(service, session, "USE default")
        run(service, session, f"DROP DATABASE {db} CASCADE")
