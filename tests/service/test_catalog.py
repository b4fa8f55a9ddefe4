"""The catalog API on real Spark sessions: listings, lookups and missing objects."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest

from sparkgate.api.catalog import FunctionKind, ObjectIdentifier, TableKind
from sparkgate.api.errors import CatalogError
from sparkgate.service import catalog as cat

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__: list[str] = []


def _unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def db(spark: SparkSession) -> Iterator[str]:
    """A database with a partitioned table, a plain table, a view and a persistent UDF."""
    name = _unique("sg_cat")
    spark.sql(f"CREATE DATABASE {name}")
    spark.sql(
        f"CREATE TABLE {name}.events (id INT COMMENT 'event id', payload STRING, day STRING) "
        "USING parquet PARTITIONED BY (day) COMMENT 'all events' "
        "TBLPROPERTIES ('team' = 'sparkgate')"
    )
    spark.sql(f"CREATE TABLE {name}.plain (x BIGINT) USING parquet")
    spark.sql(f"CREATE VIEW {name}.recent AS SELECT id FROM {name}.events")
    spark.sql(f"CREATE FUNCTION {name}.plus_two(x INT) RETURNS INT RETURN x + 2")
    try:
        yield name
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")


@pytest.fixture
def sess(spark: SparkSession) -> SparkSession:
    """An isolated session, as each gateway session owns one."""
    return spark.newSession()


# -- names ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("t", ("t",)),
        ("db.t", ("db", "t")),
        ("cat.db.t", ("cat", "db", "t")),
        ("`a.b`.c", ("a.b", "c")),
        ("`we``ird`", ("we`ird",)),
        ("`+`", ("+",)),
        (" db . t ", ("db", "t")),
        ("+", ("+",)),
    ],
)
def test_split_name(spark: SparkSession, name: str, parts: tuple[str, ...]) -> None:
    assert cat.split_name(name, spark) == parts


@pytest.mark.parametrize("name", ["", "a..b", "a.", "`open", "`a`b", "a`b`"])
def test_split_name_rejects_malformed(spark: SparkSession, name: str) -> None:
    with pytest.raises(CatalogError):
        cat.split_name(name, spark)


@pytest.mark.parametrize(
    ("ident", "summary", "serialized"),
    [
        (ObjectIdentifier("c", "d", "t"), "c.d.t", "`c`.`d`.`t`"),
        (ObjectIdentifier(None, "d", "t"), "d.t", "`d`.`t`"),
        (ObjectIdentifier(None, None, "a`b"), "a`b", "`a``b`"),
    ],
)
def test_object_identifier_strings(
    spark: SparkSession, ident: ObjectIdentifier, summary: str, serialized: str
) -> None:
    assert ident.as_summary_string() == summary
    assert ident.as_serializable_string() == serialized
    assert cat.split_name(serialized, spark) == ident.parts


# -- current catalog and database -------------------------------------------


def test_current_catalog_and_database_follow_use_per_session(
    spark: SparkSession, sess: SparkSession, db: str
) -> None:
    assert (cat.current_catalog(sess), cat.current_database(sess)) == ("spark_catalog", "default")
    sess.sql(f"USE spark_catalog.{db}")
    assert (cat.current_catalog(sess), cat.current_database(sess)) == ("spark_catalog", db)
    other = spark.newSession()
    assert cat.current_database(other) == "default"


def test_list_catalogs_includes_session_and_configured_catalogs(sess: SparkSession) -> None:
    extra = _unique("sg_extra")
    sess.conf.set(f"spark.sql.catalog.{extra}", "org.example.NotLoadedCatalog")
    sess.conf.set(f"spark.sql.catalog.{extra}.uri", "thrift://nowhere:9083")
    catalogs = cat.list_catalogs(sess)
    assert catalogs[0] == "spark_catalog"
    assert extra in catalogs
    assert f"{extra}.uri" not in catalogs


def test_list_databases(sess: SparkSession, db: str) -> None:
    databases = cat.list_databases(sess, "spark_catalog")
    assert {"default", db} <= set(databases)


# -- tables -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        (
            {TableKind.TABLE},
            {("events", TableKind.TABLE, False), ("plain", TableKind.TABLE, False)},
        ),
        ({TableKind.VIEW}, {("recent", TableKind.VIEW, False), ("tmp", TableKind.VIEW, True)}),
        (
            set(TableKind),
            {
                ("events", TableKind.TABLE, False),
                ("plain", TableKind.TABLE, False),
                ("recent", TableKind.VIEW, False),
                ("tmp", TableKind.VIEW, True),
            },
        ),
        (set(), set()),
    ],
)
def test_list_tables_filters_by_kind(
    sess: SparkSession,
    db: str,
    kinds: set[TableKind],
    expected: set[tuple[str, TableKind, bool]],
) -> None:
    sess.sql("CREATE TEMPORARY VIEW tmp AS SELECT 1 AS one")
    infos = cat.list_tables(sess, "spark_catalog", db, kinds)
    assert {(t.identifier.name, t.kind, t.is_temporary) for t in infos} == expected
    for info in infos:
        if info.is_temporary:
            assert info.identifier == ObjectIdentifier(None, None, "tmp")
        else:
            assert info.identifier == ObjectIdentifier("spark_catalog", db, info.identifier.name)


def test_temp_views_are_per_session(spark: SparkSession, sess: SparkSession, db: str) -> None:
    view = _unique("sg_tv")
    sess.sql(f"CREATE TEMPORARY VIEW {view} AS SELECT 1 AS one")
    other = spark.newSession()
    mine = {t.identifier.name for t in cat.list_tables(sess, "spark_catalog", db)}
    theirs = {t.identifier.name for t in cat.list_tables(other, "spark_catalog", db)}
    assert view in mine
    assert view not in theirs
    assert cat.get_table(sess, ObjectIdentifier.of(view)).is_temporary
    with pytest.raises(CatalogError, match=view):
        cat.get_table(other, ObjectIdentifier.of(view))


def test_get_table_reports_schema_and_metadata(sess: SparkSession, db: str) -> None:
    table = cat.get_table(sess, ObjectIdentifier("spark_catalog", db, "events"))
    assert table.identifier == ObjectIdentifier("spark_catalog", db, "events")
    assert table.kind is TableKind.TABLE
    assert not table.is_temporary
    assert [(c.name, c.logical_type.summary(), c.comment) for c in table.columns] == [
        ("id", "INT", "event id"),
        ("payload", "STRING", None),
        ("day", "STRING", None),
    ]
    assert table.comment == "all events"
    assert table.partition_keys == ("day",)
    assert table.properties.get("team") == "sparkgate"
    assert table.provider == "parquet"
    assert table.location is not None and table.location.rstrip("/").endswith("events")


def test_get_table_resolves_partial_names_and_views(sess: SparkSession, db: str) -> None:
    sess.sql(f"USE {db}")
    view = cat.get_table(sess, ObjectIdentifier.of("recent"))
    assert view.identifier == ObjectIdentifier("spark_catalog", db, "recent")
    assert view.kind is TableKind.VIEW
    assert view.view_text is not None and "events" in view.view_text
    assert [c.name for c in view.columns] == ["id"]
    plain = cat.get_table(sess, ObjectIdentifier.of(db, "plain"))
    assert [(c.name, c.logical_type.summary()) for c in plain.columns] == [("x", "BIGINT")]
    assert plain.partition_keys == ()


def test_get_temporary_view(sess: SparkSession) -> None:
    sess.sql("CREATE TEMPORARY VIEW answer AS SELECT 42 AS value, 'x' AS label")
    table = cat.get_table(sess, ObjectIdentifier.of("answer"))
    assert table.identifier == ObjectIdentifier(None, None, "answer")
    assert (table.kind, table.is_temporary) == (TableKind.VIEW, True)
    assert [c.name for c in table.columns] == ["value", "label"]


# -- functions --------------------------------------------------------------


def test_list_system_functions(sess: SparkSession) -> None:
    functions = cat.list_system_functions(sess)
    by_name = {f.identifier.name: f for f in functions}
    assert {"abs", "coalesce", "sql_keywords"} <= set(by_name)
    assert all(f.kind is FunctionKind.SYSTEM and not f.is_temporary for f in functions)
    assert by_name["abs"].identifier == ObjectIdentifier(None, None, "abs")


def test_list_user_defined_functions(spark: SparkSession, sess: SparkSession, db: str) -> None:
    sess.sql("CREATE TEMPORARY FUNCTION sg_inc(x INT) RETURNS INT RETURN x + 1")
    functions = {
        (f.identifier, f.kind, f.is_temporary)
        for f in cat.list_user_defined_functions(sess, "spark_catalog", db)
    }
    assert functions == {
        (ObjectIdentifier(None, None, "sg_inc"), FunctionKind.USER_DEFINED, True),
        (ObjectIdentifier("spark_catalog", db, "plus_two"), FunctionKind.USER_DEFINED, False),
    }
    other = cat.list_user_defined_functions(spark.newSession(), "spark_catalog", db)
    assert [f.identifier.name for f in other] == ["plus_two"]


@pytest.mark.parametrize(
    ("name", "kind", "temporary", "check"),
    [
        (
            "abs",
            FunctionKind.SYSTEM,
            False,
            lambda d: (
                d.usage is not None
                and d.usage.startswith("abs(expr)")
                and d.class_name == "org.apache.spark.sql.catalyst.expressions.Abs"
            ),
        ),
        ("`+`", FunctionKind.SYSTEM, False, lambda d: d.name == "+" and d.usage is not None),
        ("sg_twice", FunctionKind.USER_DEFINED, True, lambda d: "x * 2" in d.description),
        ("{db}.plus_two", FunctionKind.USER_DEFINED, False, lambda d: "x + 2" in d.description),
    ],
)
def test_get_function_definition(
    sess: SparkSession,
    db: str,
    name: str,
    kind: FunctionKind,
    temporary: bool,
    check: Callable[[object], bool],
) -> None:
    sess.sql("CREATE TEMPORARY FUNCTION sg_twice(x INT) RETURNS INT RETURN x * 2")
    definition = cat.get_function_definition(sess, name.format(db=db))
    assert (definition.kind, definition.is_temporary) == (kind, temporary)
    assert check(definition)
    if "." in name:
        assert definition.identifier == ObjectIdentifier("spark_catalog", db, "plus_two")


# -- missing objects --------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda s, db: cat.list_databases(s, "no_such_catalog"), "no_such_catalog"),
        (lambda s, db: cat.list_tables(s, "spark_catalog", "no_such_db"), "no_such_db"),
        (lambda s, db: cat.list_tables(s, "no_such_catalog", db), "no_such_catalog"),
        (
            lambda s, db: cat.list_user_defined_functions(s, "spark_catalog", "no_such_db"),
            "no_such_db",
        ),
        (lambda s, db: cat.get_table(s, ObjectIdentifier.of(db, "no_such_table")), "no_such_table"),
        (lambda s, db: cat.get_table(s, ObjectIdentifier.of("no_such_db", "t")), "no_such_db"),
        (lambda s, db: cat.get_function_definition(s, "no_such_fn"), "no_such_fn"),
        (lambda s, db: cat.get_function_definition(s, f"{db}.no_such_fn"), "no_such_fn"),
    ],
)
def test_missing_objects_raise_catalog_error(
    sess: SparkSession, db: str, call: Callable[[SparkSession, str], object], needle: str
) -> None:
    with pytest.raises(CatalogError, match=needle) as info:
        call(sess, db)
    # Spark's own message (with its error class) is part of ours.
    assert "[" in str(info.value) or "does not exist" in str(info.value)


def test_user_text_is_quoted_not_spliced(sess: SparkSession, db: str) -> None:
    """A name that would be SQL if spliced is looked up as one odd identifier."""
    hostile = "x` UNION SELECT 1 --"
    with pytest.raises(CatalogError):
        cat.list_tables(sess, "spark_catalog", hostile)
    with pytest.raises(CatalogError):
        cat.get_table(sess, ObjectIdentifier(None, db, hostile))
