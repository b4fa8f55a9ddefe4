"""Flink's spellings of values and functions in Spark's (the results are in
tests/rest/statements/spellings.q)."""

from __future__ import annotations

import pytest

from sparkgate.sql.flink_functions import flink_functions


@pytest.mark.parametrize(
    ("flink", "spark"),
    [
        ("SELECT ARRAY[1, 2], ARRAY[ARRAY[1]]", "SELECT array(1, 2), array(array(1))"),
        ("SELECT MAP['a', 1, 'b', MAP[1, 2]]", "SELECT map('a', 1, 'b', map(1, 2))"),
        ("SELECT ROW(1, 'a'), (ROW(2))", "SELECT struct(1, 'a'), (struct(2))"),
        (
            "SELECT CAST(r AS ROW<a INT, b ARRAY<ROW<c INT>>>)",
            "SELECT CAST(r AS STRUCT<a INT, b ARRAY<STRUCT<c INT>>>)",
        ),
        ("SELECT LOCALTIMESTAMP, LOCALTIME", "SELECT localtimestamp(), current_time()"),
        (
            "SELECT PROCTIME(), CURRENT_ROW_TIMESTAMP()",
            "SELECT current_timestamp(), current_timestamp()",
        ),
        (
            "SELECT JSON_VALUE(j, '$.a'), json_value(j, '$.b')",
            "SELECT get_json_object(j, '$.a'), get_json_object(j, '$.b')",
        ),
        (
            "SELECT SPLIT_INDEX(s, ',', 1)",
            "SELECT try_element_at(split(s, concat('\\\\Q', ',', '\\\\E')), "
            "CASE WHEN (1) >= 0 THEN (1) + 1 END)",
        ),
        (
            "SELECT CAST(x AS VARCHAR), CAST(b AS BYTES), CAST(c AS CHAR)",
            "SELECT CAST(x AS STRING), CAST(b AS BINARY), CAST(c AS STRING)",
        ),
        ("SELECT FLOOR(ts TO HOUR), FLOOR(1.5)", "SELECT (date_trunc('HOUR', ts)), FLOOR(1.5)"),
        (
            "SELECT CEIL(PROCTIME() TO DAY)",
            "SELECT (CASE WHEN date_trunc('DAY', current_timestamp()) = current_timestamp() "
            "THEN date_trunc('DAY', current_timestamp()) ELSE date_trunc('DAY', "
            "current_timestamp()) + INTERVAL 1 DAY END)",
        ),
        ("SELECT SHA256(s), SHA1(s)", "SELECT sha2(s, 256), SHA1(s)"),
        (
            "SELECT TO_BASE64(b), FROM_BASE64(ARRAY['a'][0])",
            "SELECT base64(b), CAST(unbase64(array('a')[0]) AS STRING)",
        ),
        (
            "SELECT RAND_INTEGER(10), rand_integer(1, n), WEEK(d), EXTRACT(WEEK FROM d)",
            "SELECT CAST(floor(rand() * (10)) AS INT), CAST(floor(rand(1) * (n)) AS INT), "
            "weekofyear(d), EXTRACT(WEEK FROM d)",
        ),
        (
            "SELECT ELEMENT(ARRAY[x]), t.element(1), WEEK()",
            "SELECT CASE WHEN size(array(x)) > 1 THEN raise_error('ELEMENT: the array has more "
            "than one element') ELSE try_element_at(array(x), 1) END, t.element(1), WEEK()",
        ),
    ],
)
def test_flinks_spellings_become_sparks(flink: str, spark: str) -> None:
    assert flink_functions(flink) == spark


@pytest.mark.parametrize(
    ("flink", "spark"),
    [
        # IS JSON's operand: what its comparison, AND, comma or parenthesis leaves.
        (
            "SELECT a || b IS JSON, (x IS NOT JSON OBJECT) FROM t WHERE y = s IS JSON ARRAY",
            "SELECT (try_parse_json(a || b) IS NOT NULL), "
            "((NOT coalesce(schema_of_variant(try_parse_json(x)) RLIKE '^OBJECT<', false))) "
            "FROM t WHERE y = (coalesce(schema_of_variant(try_parse_json(s)) "
            "RLIKE '^ARRAY<', false))",
        ),
        (
            "SELECT f(j) IS JSON SCALAR AND ARRAY[1] IS NOT NULL",
            "SELECT (coalesce(schema_of_variant(try_parse_json(f(j))) "
            "RLIKE '^(?!OBJECT<|ARRAY<)', false)) AND array(1) IS NOT NULL",
        ),
        # A constructor's value made by a constructor nests as JSON.
        (
            "SELECT JSON_OBJECT(KEY 'k' VALUE JSON_ARRAY(ARRAY[1]) ABSENT ON NULL)",
            "SELECT to_json(named_struct('k', parse_json(to_json(map_values(from_json("
            "to_json(named_struct('e00000', (array(1))), map('ignoreNullFields', 'true')), "
            "'map<string, variant>'))))), map('ignoreNullFields', 'true'))",
        ),
        # Paths lose their mode; a bracketed member is Spark's ['m'].
        (
            "SELECT JSON_VALUE(j, 'lax $.[\"a b\"]'), JSON_VALUE(j, 'strict $.a')",
            "SELECT get_json_object(j, '$[\\'a b\\']'), get_json_object(j, '$.a')",
        ),
        ("SELECT ARRAY_CONCAT(a, b), ARRAY_REVERSE(a)", "SELECT concat(a, b), reverse(a)"),
        # A column named as a constructor is a value like any other.
        (
            "SELECT JSON_ARRAY(json_object)",
            "SELECT to_json(map_values(from_json(to_json(named_struct('e00000', (json_object)), "
            "map('ignoreNullFields', 'true')), 'map<string, variant>')))",
        ),
        (
            "SELECT 1 = j IS NOT JSON",
            "SELECT 1 = (NOT try_parse_json(j) IS NOT NULL)",
        ),
        (
            "SELECT x NOT BETWEEN SYMMETRIC f(a, 1) AND b + 1 AND c, y BETWEEN ASYMMETRIC 1 AND 2",
            "SELECT x NOT BETWEEN CASE WHEN (f(a, 1)) <= (b + 1) THEN (f(a, 1)) ELSE (b + 1) END "
            "AND CASE WHEN (f(a, 1)) <= (b + 1) THEN (b + 1) ELSE (f(a, 1)) END AND c, "
            "y BETWEEN 1 AND 2",
        ),
    ],
)
def test_flinks_json_and_collection_functions_become_sparks(flink: str, spark: str) -> None:
    assert flink_functions(flink) == spark


@pytest.mark.parametrize(
    "untouched",
    [
        "SELECT map['k'], m['a'], a[0] FROM t",  # a map column's key, an array's index
        "SELECT CAST(x AS VARCHAR(3)), localtimestamp(), t.row(1)",
        "SELECT JSON_QUERY(j, '$.a' WITH SOME WRAPPER)",  # not a wrapper Flink has
        "SELECT x BETWEEN SYMMETRIC 1 FROM t",  # no AND: Spark says what is wrong
        "SELECT json_tuple(j, 'a'), json_object_keys(j), t.json_string(1), x IS NULL",
        "SELECT TRUNCATE(1, 2, 3), MAP_UNION()",  # not Flink's counts of arguments
        "CREATE TABLE t (a ARRAY<INT>, r ROW<x INT>, p AS PROCTIME()) WITH ('connector' = 'x')",
        "ALTER TABLE t ADD p AS PROCTIME()",
        "SELECT 'ARRAY[1]', `ROW`",
        "SELECT sum(size) AS bytes, name AS char FROM (SELECT * FROM t AS varchar)",
    ],
)
def test_what_is_not_flinks_spelling_is_untouched(untouched: str) -> None:
    assert flink_functions(untouched) == untouched
