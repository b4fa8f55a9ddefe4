"""Statement completion against a real Spark catalog.

Each case is a statement with ``|`` at the cursor; ``{db}`` is the test
database, which is the session's current one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from sparkgate.service.completion import MAX_CANDIDATES, complete_statement

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__: list[str] = []


@pytest.fixture(scope="module")
def db(spark: SparkSession) -> Iterator[str]:
    name = f"sg_cmp_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE DATABASE {name}")
    spark.sql(
        f"CREATE TABLE {name}.orders (order_id INT, amount DOUBLE, customer STRING) USING parquet"
    )
    spark.sql(f"CREATE TABLE {name}.customers (id INT, name STRING) USING parquet")
    try:
        yield name
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")


@pytest.fixture
def sess(spark: SparkSession, db: str) -> SparkSession:
    session = spark.newSession()
    session.sql(f"USE {db}")
    session.sql("CREATE TEMPORARY FUNCTION sg_plus_one(x INT) RETURNS INT RETURN x + 1")
    return session


def complete(spark: SparkSession, text: str, db: str) -> list[str]:
    text = text.replace("{db}", db)
    position = text.index("|")
    return complete_statement(spark, text.replace("|", "", 1), position)


@pytest.mark.parametrize(
    ("text", "head"),
    [
        # keywords by prefix, in the case being typed
        ("SEL|", ["SELECT"]),
        ("sel|", ["select"]),
        ("Sel|", ["SELECT"]),
        ("select * fr|", ["from"]),
        ("SELECT * FR|", ["FROM"]),
        # tables first after FROM / JOIN / DESCRIBE, then databases and catalogs
        ("SELECT * FROM |", ["customers", "orders"]),
        ("SELECT * FROM or|", ["orders"]),
        ("select * from orders join cu|", ["customers"]),
        ("SELECT * FROM orders, cu|", ["customers"]),
        ("DESCRIBE ord|", ["orders"]),
        ("INSERT INTO cu|", ["customers"]),
        # qualified table names come back whole
        ("SELECT * FROM {db}.or|", ["{db}.orders"]),
        ("SELECT * FROM {db}.|", ["{db}.customers", "{db}.orders"]),
        ("SELECT * FROM spark_catalog.{db}.cu|", ["spark_catalog.{db}.customers"]),
        # columns of the tables in FROM/JOIN, then functions, then keywords
        ("SELECT | FROM orders", ["order_id", "amount", "customer"]),
        ("SELECT am| FROM orders", ["amount"]),
        ("SELECT amount, | FROM orders", ["order_id", "amount", "customer"]),
        ("SELECT * FROM orders WHERE cu|", ["customer"]),
        ("SELECT * FROM orders WHERE amount > 1 AND ord|", ["order_id"]),
        ("SELECT o.| FROM orders o", ["o.order_id", "o.amount", "o.customer"]),
        ("SELECT orders.am| FROM orders", ["orders.amount"]),
        ("SELECT * FROM orders o JOIN customers AS c ON o.customer = c.|", ["c.id", "c.name"]),
        ("SELECT `o`.cust| FROM orders o", ["`o`.customer"]),
        # functions: built-in and the session's temporary ones
        ("SELECT coale|", ["coalesce"]),
        ("SELECT sg_plu|", ["sg_plus_one"]),
        # USE: databases, then catalogs; USE CATALOG: catalogs only
        ("USE sg_cmp|", ["{db}"]),
        ("USE spark_cat|", ["spark_catalog"]),
        ("USE CATALOG |", ["spark_catalog"]),
        ("SHOW TABLES IN sg_cmp|", ["{db}"]),
    ],
)
def test_completion_head(sess: SparkSession, db: str, text: str, head: list[str]) -> None:
    result = complete(sess, text, db)
    expected = [h.replace("{db}", db) for h in head]
    assert result[: len(expected)] == expected, result[:10]
    assert len(result) == len({r.lower() for r in result}), "duplicates"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SELECT * FROM {db}.or|", ["{db}.orders"]),
        ("USE CATALOG spark|", ["spark_catalog"]),
        ("SELECT o.order| FROM orders o", ["o.order_id"]),
        # inside a string, a comment or a number: nothing to complete
        ("SELECT 'FR|", []),
        ("SELECT 1 -- FR|", []),
        ("SELECT /* FR|", []),
        ("SELECT 1|", []),
        ("SELECT * FROM no_such_db.|", []),
    ],
)
def test_completion_exact(sess: SparkSession, db: str, text: str, expected: list[str]) -> None:
    assert complete(sess, text, db) == [e.replace("{db}", db) for e in expected]


def test_position_in_the_middle_ignores_the_rest_of_the_word(sess: SparkSession, db: str) -> None:
    # Cursor after "SEL" of "SELECTED": the prefix is "SEL".
    assert complete(sess, "SEL|ECTED", db)[0] == "SELECT"
    # The text after the cursor still names the tables whose columns are offered.
    assert complete(sess, "SELECT n| FROM customers WHERE id = 1", db)[0] == "name"
    # A table being typed in the middle is not itself a column source.
    assert complete(sess, "SELECT * FROM cust|omers WHERE id = 1", db)[0] == "customers"


def test_keywords_case_and_cap(sess: SparkSession, db: str) -> None:
    everything = complete(sess, "|", db)
    assert len(everything) == MAX_CANDIDATES
    assert all(word.isupper() for word in everything)
    assert everything == sorted(everything)
    lower = complete(sess, "a|", db)
    assert lower and all(word == word.lower() and word.startswith("a") for word in lower)


def test_unqualified_columns_only_after_select_of_a_from_table(sess: SparkSession, db: str) -> None:
    with_from = complete(sess, "SELECT ord| FROM orders", db)
    without_from = complete(sess, "SELECT ord|", db)
    assert with_from[0] == "order_id"
    assert "order_id" not in without_from
    assert "order" in without_from  # the keyword, in the case being typed


def test_other_sessions_temp_objects_are_not_offered(
    spark: SparkSession, sess: SparkSession, db: str
) -> None:
    view = f"sg_tmpview_{uuid.uuid4().hex[:6]}"
    sess.sql(f"CREATE TEMPORARY VIEW {view} AS SELECT 1 AS one")
    other = spark.newSession()
    other.sql(f"USE {db}")
    assert complete(sess, "SELECT * FROM sg_tmp|", db) == [view]
    assert complete(other, "SELECT * FROM sg_tmp|", db) == []
    assert complete(other, "SELECT sg_plu|", db) == []
    # A session's temp view resolves bare only, so `db.` does not offer it.
    assert view not in " ".join(complete(sess, "SELECT * FROM {db}.|", db))


@pytest.mark.parametrize(
    "text",
    [
        # parses with the cursor word in place: Spark's parser answers
        "SELECT TRIM(' ' FROM customers) AS t, | FROM orders",
        "SELECT EXTRACT(YEAR FROM customers) AS y, | FROM orders",
        # does not parse yet: the scan skips a function's FROM too
        "SELECT TRIM(' ' FROM customers), |",
        "SELECT EXTRACT(YEAR FROM customers), | FROM orders WHERE",
    ],
)
def test_function_arguments_are_not_tables(sess: SparkSession, db: str, text: str) -> None:
    result = complete(sess, text, db)
    assert "id" not in result, result[:10]  # a column of the table 'customers'


def test_keywords_are_sparks_own_read_without_a_spark_job(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keyword list comes from the parser's list in the JVM: the same words as
    ``sql_keywords()``, without the Spark job that compiles it (seconds on a new JVM)."""
    from sparkgate.service import completion

    monkeypatch.setattr(completion, "_keywords", None)
    tracker = spark.sparkContext.statusTracker()
    spark.sparkContext.setJobGroup("keywords-probe", "keywords")
    try:
        keywords = completion.sql_keywords(spark)
        assert tracker.getJobIdsForGroup("keywords-probe") == []
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    expected = {
        str(r[0]).upper() for r in spark.sql("SELECT keyword FROM sql_keywords()").collect()
    }
    assert set(keywords) == expected
    assert {"SELECT", "FROM", "WHERE"} <= set(keywords)
