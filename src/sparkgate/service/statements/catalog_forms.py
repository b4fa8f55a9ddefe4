"""The catalog statements of Flink's SQL: CREATE / ALTER / DROP / DESCRIBE /
SHOW CREATE CATALOG (FLIP-295). ``USE CATALOG``, ``SHOW CATALOGS`` and ``SHOW
CURRENT CATALOG`` are parsed with the other USE and SHOW forms."""

from __future__ import annotations

from sparkgate.api.errors import SqlParseError
from sparkgate.service.statements import kinds as k
from sparkgate.service.statements.cursor import Cursor
from sparkgate.sql.lexer import TokenKind, unquote

__all__ = ["parse_catalog_statement"]


def parse_catalog_statement(cursor: Cursor, text: str, first: str) -> k.Statement | None:
    """The catalog statement at ``cursor`` (just after its first word ``first``),
    or None (the cursor untouched) when the statement is not one."""
    if first == "CREATE" and cursor.accept("CATALOG"):
        return _parse_create_catalog(cursor, text)
    if first == "ALTER" and cursor.accept("CATALOG"):
        return _parse_alter_catalog(cursor, text)
    if first == "DROP" and cursor.accept("CATALOG"):
        if_exists = cursor.accept("IF", "EXISTS")
        name = cursor.identifier()
        cursor.expect_end("DROP CATALOG")
        return k.DropCatalog(text, name, if_exists=if_exists)
    if first in ("DESCRIBE", "DESC") and cursor.word() == "CATALOG" and cursor.peek(1) is not None:
        cursor.take()
        # DESCRIBE CATALOG EXTENDED x; a catalog named `extended` is DESCRIBE CATALOG extended
        extended = cursor.word() == "EXTENDED" and cursor.peek(1) is not None
        if extended:
            cursor.take()
        name = cursor.identifier()
        cursor.expect_end("DESCRIBE CATALOG")
        return k.DescribeCatalog(text, name, extended=extended)
    if first == "SHOW" and cursor.word() == "CREATE" and cursor.word(1) == "CATALOG":
        cursor.i += 2
        name = cursor.identifier()
        cursor.expect_end("SHOW CREATE CATALOG")
        return k.ShowCreateCatalog(text, name)
    return None


def _string(cursor: Cursor, what: str) -> str:
    return unquote(cursor.expect(TokenKind.STRING, what))


def _parse_create_catalog(cursor: Cursor, text: str) -> k.CreateCatalog:
    if_not_exists = cursor.accept("IF", "NOT", "EXISTS")
    name = cursor.identifier()
    comment = (
        _string(cursor, "a string literal after COMMENT") if cursor.accept("COMMENT") else None
    )
    if not cursor.accept("WITH"):
        raise cursor.error("CREATE CATALOG expects WITH ('key' = 'value', ...)")
    options = cursor.with_options()
    cursor.expect_end("CREATE CATALOG")
    return k.CreateCatalog(text, name, options, if_not_exists=if_not_exists, comment=comment)


def _parse_alter_catalog(cursor: Cursor, text: str) -> k.AlterCatalog:
    name = cursor.identifier()
    if cursor.accept("SET"):
        options = cursor.with_options()
        cursor.expect_end("ALTER CATALOG ... SET")
        return k.AlterCatalog(text, name, set_options=options)
    if cursor.accept("RESET"):
        cursor.expect(TokenKind.LPAREN, "'('")
        close = cursor.peek()
        if close is not None and close.kind is TokenKind.RPAREN:
            raise SqlParseError("ALTER CATALOG RESET does not support empty key")
        keys: list[str] = []
        while True:
            keys.append(cursor.option_key())
            sep = cursor.peek()
            if sep is not None and sep.kind is TokenKind.COMMA:
                cursor.take()
                continue
            cursor.expect(TokenKind.RPAREN, "',' or ')'")
            break
        cursor.expect_end("ALTER CATALOG ... RESET")
        return k.AlterCatalog(text, name, reset_keys=tuple(keys))
    if cursor.accept("COMMENT"):
        comment = _string(cursor, "a string literal after COMMENT")
        cursor.expect_end("ALTER CATALOG ... COMMENT")
        return k.AlterCatalog(text, name, comment=comment)
    raise cursor.error("ALTER CATALOG expects SET (...), RESET (...) or COMMENT '...'")
