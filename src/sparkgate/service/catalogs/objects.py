"""Connector tables and views of a ``generic_in_memory`` catalog.

Such a catalog is Spark's JDBC catalog over an in-memory Derby database, which
keeps tables of rows and nothing else. Flink's ``generic_in_memory`` catalogs
hold connector tables and views: the gateway keeps their definitions in the
same Derby database, in a schema of its own that is never listed
(:data:`SCHEMA`). They share the catalog's life (until the gateway stops or
the catalog is dropped), and every session sees them, as every session sees
the catalog's tables.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from sparkgate.service.catalogs.spark import CATALOG_PREFIX, SESSION_CATALOG, qualified_name
from sparkgate.service.spark.jdbc import DRIVERS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "SCHEMA",
    "CatalogObject",
    "CatalogObjects",
    "KeptFunction",
    "KeptView",
    "ObjectKind",
    "locate",
]

#: The Derby schema of the definitions (hidden from SHOW DATABASES).
SCHEMA = "SPARKGATE_OBJECTS"
_TABLE = f'"{SCHEMA}"."OBJECTS"'
# The in-memory Derby databases the generic_in_memory type makes.
_URL_PREFIX = "jdbc:derby:memory:sparkgate_"
ObjectKind = Literal["table", "view", "function"]

# Derby's SQLStates: the schema or table exists already; it does not exist.
_EXISTS = frozenset({"X0Y32", "X0Y68"})
_NO_TABLE = frozenset({"42X05", "42Y07"})
# Functions have names of their own: a table and a function may share one.
_NAMED = "LOWER(DB) = ? AND LOWER(NAME) = ? AND GRP = ?"
_KINDS: dict[str, ObjectKind] = {"table": "table", "view": "view", "function": "function"}


@dataclass(frozen=True)
class CatalogObject:
    """A connector table (``body``: its definition's JSON), a view or a function
    (``body``: a :class:`KeptView`'s or :class:`KeptFunction`'s JSON), in
    database ``database`` under ``name`` (as written)."""

    database: str
    name: str
    kind: ObjectKind
    body: str


@dataclass(frozen=True)
class KeptView:
    """A view kept in a catalog's objects."""

    #: The query with every table it reads named in full (read from anywhere).
    text: str
    #: The catalog and database it was made in.
    namespace: tuple[str, ...]
    #: Its column names, and its query's (the same without a column list).
    columns: tuple[str, ...]
    query_columns: tuple[str, ...]
    #: The query as written, and the view's comment.
    query: str
    comment: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, body: str) -> KeptView:
        stored = json.loads(body)
        return cls(
            str(stored["text"]),
            tuple(stored["namespace"]),
            tuple(stored["columns"]),
            tuple(stored["query_columns"]),
            str(stored["query"]),
            stored.get("comment"),
        )


@dataclass(frozen=True)
class KeptFunction:
    """A catalog function kept in a catalog's objects: its JVM class and jars."""

    class_name: str
    language: str = "JAVA"
    jars: tuple[str, ...] = ()

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, body: str) -> KeptFunction:
        stored = json.loads(body)
        return cls(str(stored["class_name"]), str(stored["language"]), tuple(stored["jars"]))


class CatalogObjects:
    """The definitions kept in one catalog's Derby database (JDBC, no Spark job)."""

    def __init__(self, spark: SparkSession, catalog: str, url: str) -> None:
        self.catalog = catalog
        self._url = url
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        self._jvm: Any = jvm

    @classmethod
    def of(cls, spark: SparkSession, catalog: str) -> CatalogObjects | None:
        """The definitions of ``catalog``, or None when it cannot keep any."""
        if catalog.lower() == SESSION_CATALOG:
            return None
        url = spark.conf.get(f"{CATALOG_PREFIX}{catalog}.url", None) or ""
        if not url.startswith(_URL_PREFIX):
            return None
        return cls(spark, catalog, url.split(";", 1)[0])

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        self._jvm.java.lang.Class.forName(DRIVERS["derby"])
        connection = self._jvm.java.sql.DriverManager.getConnection(self._url)
        try:
            yield connection
        finally:
            connection.close()

    def _rows(self, where: str, *values: str) -> list[CatalogObject]:
        query = f"SELECT DB, NAME, KIND, BODY FROM {_TABLE} WHERE {where}"
        with self._connection() as connection:
            try:
                statement = connection.prepareStatement(query)
            except Exception as exc:
                if _state(exc) in _NO_TABLE:
                    return []  # nothing was ever kept here
                raise
            for i, value in enumerate(values, 1):
                statement.setString(i, value)
            found = statement.executeQuery()
            rows = []
            while found.next():
                kind = _KINDS.get(str(found.getString(3)), "table")
                rows.append(
                    CatalogObject(
                        str(found.getString(1)), str(found.getString(2)), kind, found.getString(4)
                    )
                )
            return rows

    def get(self, database: str, name: str, *, function: bool = False) -> CatalogObject | None:
        """The table or view (``function``: the function) ``database.name``, names
        compared without case."""
        found = self._rows(_NAMED, database.lower(), name.lower(), _space(function))
        return found[0] if found else None

    def listed(self, database: str) -> list[CatalogObject]:
        """The objects of ``database``, by name."""
        return sorted(self._rows("LOWER(DB) = ?", database.lower()), key=lambda o: o.name)

    def put(self, kept: CatalogObject) -> None:
        """Keep ``kept``, over an object of its name kept before."""
        with self._connection() as connection:
            for ddl in (
                f'CREATE SCHEMA "{SCHEMA}"',
                f"CREATE TABLE {_TABLE} (DB VARCHAR(1024) NOT NULL, NAME VARCHAR(1024) NOT NULL,"
                " GRP VARCHAR(16) NOT NULL, KIND VARCHAR(16) NOT NULL, BODY CLOB NOT NULL,"
                " PRIMARY KEY (DB, NAME, GRP))",
            ):
                try:
                    connection.createStatement().execute(ddl)
                except Exception as exc:
                    if _state(exc) not in _EXISTS:
                        raise
            connection.setAutoCommit(False)
            try:
                space = _space(kept.kind == "function")
                self._delete(connection, _NAMED, kept.database, kept.name, space)
                insert = connection.prepareStatement(
                    f"INSERT INTO {_TABLE} (DB, NAME, GRP, KIND, BODY) VALUES (?, ?, ?, ?, ?)"
                )
                values = (kept.database, kept.name, space, kept.kind, kept.body)
                for i, value in enumerate(values, 1):
                    insert.setString(i, value)
                insert.executeUpdate()
                connection.commit()
            except BaseException:
                connection.rollback()
                raise

    def remove(self, database: str, name: str | None = None, *, function: bool = False) -> int:
        """Forget the table or view (``function``: the function) ``database.name``;
        without a name, every object of ``database``. How many were kept."""
        with self._connection() as connection:
            if name is None:
                return self._delete(connection, "LOWER(DB) = ?", database)
            return self._delete(connection, _NAMED, database, name, _space(function))

    def _delete(self, connection: Any, where: str, *values: str) -> int:
        try:
            statement = connection.prepareStatement(f"DELETE FROM {_TABLE} WHERE {where}")
        except Exception as exc:
            if _state(exc) in _NO_TABLE:
                return 0
            raise
        for i, value in enumerate(values, 1):
            statement.setString(i, value.lower())
        return int(statement.executeUpdate())


def _space(function: bool) -> str:
    return "function" if function else "relation"


def _state(exc: BaseException) -> str | None:
    """The SQLState of a py4j-wrapped ``SQLException``."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return None
    try:
        return str(java.getSQLState())
    except Exception:
        return None


def locate(
    spark: SparkSession, name: tuple[str, ...]
) -> tuple[CatalogObjects, tuple[str, str, str]] | None:
    """The definitions of the catalog ``name`` is in, and ``name`` as catalog,
    database and name; None for a catalog that keeps none (the session catalog
    keeps connector tables and views itself)."""
    try:
        qualified = qualified_name(spark, name)
    except Exception:
        return None
    if len(qualified) != 3:
        return None
    objects = CatalogObjects.of(spark, qualified[0])
    if objects is None:
        return None
    return objects, (qualified[0], qualified[1], qualified[2])
