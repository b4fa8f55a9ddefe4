"""The catalog statements of Flink's SQL: CREATE / ALTER / DROP / DESCRIBE /
SHOW CREATE CATALOG (FLIP-295). ``USE CATALOG``, ``SHOW CATALOGS`` and ``SHOW
CURRENT CATALOG`` are parsed with the other USE and SHOW forms."""

from __future__ import annotations

from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.cursor import Cursor

__all__ = ["parse_catalog_statement"]


def parse_catalog_statement(cursor: Cursor, text: str, first: str) -> k.Statement | None:
    """The catalog statement at ``cursor`` (just after its first word ``first``),
    or None (the cursor untouched) when the statement is not one."""
    if first == "CREATE" and cursor.accept("CATALOG"):
        return _parse_create_catalog(cursor, text)
    return None


def _parse_create_catalog(cursor: Cursor, text: str) -> k.CreateCatalog:
    if_not_exists = cursor.accept("IF", "NOT", "EXISTS")
    name = cursor.identifier()
    if not cursor.accept("WITH"):
        raise cursor.error("CREATE CATALOG expects WITH ('key' = 'value', ...)")
    options = cursor.with_options()
    cursor.expect_end("CREATE CATALOG")
    return k.CreateCatalog(text, name, options, if_not_exists=if_not_exists)
