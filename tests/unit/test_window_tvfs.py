"""Flink's window table functions and group window functions in Spark SQL: the
rewrite's text (the results are in tests/rest/statements/windows.q)."""

from __future__ import annotations

import pytest

from sparkgate.api.errors import SqlParseError, UnsupportedStatementError
from sparkgate.service.statements.parser import INCOMPLETE_MARK, parse_statement
from sparkgate.sql.window_tvfs import window_functions

_W = "`__sparkgate_window`"
_FIELDS = f"{_W}.start AS window_start, {_W}.end AS window_end, window_time({_W}) AS window_time"


def _tumble(table: str, size: str = "'10 minutes'", extra: str = "") -> str:
    return (
        f"(SELECT * EXCEPT ({_W}), {_FIELDS} FROM (SELECT *, "
        f"window(`ts`, {size}, {size}{extra}) AS {_W} FROM {table}))"
    )


@pytest.mark.parametrize(
    ("flink", "spark"),
    [
        (
            "SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTES))",
            f"SELECT * FROM {_tumble('t')}",
        ),
        (  # by name, in any order, and an offset
            "SELECT * FROM TABLE(TUMBLE(TIMECOL => DESCRIPTOR(ts), DATA => TABLE db.t, "
            "SIZE => INTERVAL '10' MINUTE, OFFSET => INTERVAL '1' MINUTE)) AS w",
            "SELECT * FROM " + _tumble("db.t", extra=", '1 minutes'") + " AS w",
        ),
        (
            "SELECT * FROM table(hop(table t, descriptor(ts), interval '5' second, "
            "interval '1' minute))",
            f"SELECT * FROM (SELECT * EXCEPT ({_W}), {_FIELDS} FROM (SELECT *, "
            f"window(`ts`, '1 minutes', '5 seconds') AS {_W} FROM t))",
        ),
        (  # a query as the table
            "SELECT * FROM TABLE(TUMBLE(TABLE (SELECT * FROM t), DESCRIPTOR(ts), "
            "INTERVAL '1' HOUR))",
            "SELECT * FROM " + _tumble("(SELECT * FROM t) AS `__sparkgate_windowed`", "'1 hours'"),
        ),
        (  # the group window functions
            "SELECT TUMBLE_START(ts, INTERVAL '1' DAY), TUMBLE_ROWTIME(ts, INTERVAL '1' DAY) "
            "FROM t GROUP BY TUMBLE(ts, INTERVAL '1' DAY)",
            "SELECT window(ts, '1 days', '1 days').start, (window(ts, '1 days', '1 days').end "
            "- INTERVAL '0.000001' SECOND) FROM t GROUP BY window(ts, '1 days', '1 days')",
        ),
        (
            "SELECT SESSION_END(ts, INTERVAL '5' MINUTES) FROM t "
            "GROUP BY k, SESSION(ts, INTERVAL '5' MINUTES)",
            "SELECT session_window(ts, '5 minutes').end FROM t "
            "GROUP BY k, session_window(ts, '5 minutes')",
        ),
    ],
)
def test_flinks_windows_become_sparks(flink: str, spark: str) -> None:
    assert window_functions(flink) == spark


def test_cumulate_is_a_tumbling_window_and_its_steps() -> None:
    text = window_functions(
        "SELECT * FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '2' MINUTES, "
        "INTERVAL '10' MINUTES))"
    )
    assert "window(`ts`, '10 minutes', '10 minutes')" in text
    assert "explode(sequence(1, 5))" in text
    assert "make_dt_interval(0, 0, 0, `__sparkgate_step` * 120.000000)" in text
    assert "WHERE `ts` < " in text


@pytest.mark.parametrize(
    ("flink", "grouped"),
    [
        # window_time joins the keys of the window's own query block: it carries
        # the watermark, so Spark emits each window once.
        ("GROUP BY window_start, window_end", "GROUP BY window_start, window_end, window_time"),
        (
            "AS w GROUP BY w.window_start, k, w.window_end HAVING count(*) > 1",
            "AS w GROUP BY w.window_start, k, w.window_end, w.window_time HAVING count(*) > 1",
        ),
        ("GROUP BY window_start, window_end, window_time", None),
        ("GROUP BY window_start", None),
    ],
)
def test_grouping_by_the_window_adds_its_time(flink: str, grouped: str | None) -> None:
    head = "SELECT count(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) "
    text = window_functions(head + flink)
    assert text.endswith(grouped if grouped is not None else flink)


def test_an_outer_query_block_is_not_regrouped() -> None:
    text = window_functions(
        "SELECT * FROM (SELECT window_start, window_end FROM TABLE(TUMBLE(TABLE t, "
        "DESCRIPTOR(ts), INTERVAL '1' MINUTE))) GROUP BY window_start, window_end"
    )
    assert text.endswith(") GROUP BY window_start, window_end")


@pytest.mark.parametrize(
    "untouched",
    [
        "SELECT tumble, hop.x, session FROM t",
        "SELECT 'TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), x))'",
        "SELECT t.tumble(1)",  # a qualified name is not Flink's function
        "CREATE TABLE session (a INT)",
        "INSERT INTO hop (a) VALUES (1)",
    ],
)
def test_other_statements_are_untouched(untouched: str) -> None:
    assert window_functions(untouched) == untouched


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        (
            "SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), "
            "INTERVAL '5' MINUTES))",
            "SESSION window table function is not supported on Spark",
        ),
        (
            "SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1:30' HOUR TO MINUTE))",
            "TUMBLE's size must be an interval literal of one unit",
        ),
        (
            "SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' YEAR))",
            "TUMBLE's size must be an interval literal of one unit",
        ),
        (
            "SELECT * FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))",
            "HOP is missing its SIZE",
        ),
        (
            "SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), SIZES => INTERVAL '1' MINUTE))",
            "TUMBLE has no parameter SIZES",
        ),
        (
            "SELECT * FROM TABLE(TUMBLE(t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))",
            "TUMBLE's first argument is the table to window: TABLE t",
        ),
        ("SELECT 1 FROM t GROUP BY TUMBLE(ts)", "takes the time column and the size"),
    ],
)
def test_what_spark_cannot_do_is_refused_clearly(statement: str, message: str) -> None:
    with pytest.raises(UnsupportedStatementError, match=message.replace("(", r"\(")):
        window_functions(statement)


def test_the_parser_takes_the_rewritten_query() -> None:
    parsed = parse_statement(
        "SELECT window_start, count(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
        "INTERVAL '1' MINUTE)) GROUP BY window_start, window_end;"
    )
    assert "window(`ts`, '1 minutes', '1 minutes')" in parsed.text


@pytest.mark.parametrize(
    "incomplete",
    [
        "SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts)",
        "SELECT JSON_VALUE(j, '$.a'",
        "SELECT SPLIT_INDEX(s, ',', 1",
    ],
)
def test_an_incomplete_statement_is_the_parsers_to_answer(incomplete: str) -> None:
    # The SQL client reads on while the gateway says a statement is incomplete.
    with pytest.raises(SqlParseError, match=INCOMPLETE_MARK):
        parse_statement(incomplete)
