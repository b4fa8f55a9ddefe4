"""Spark type -> logical type mapping, checked on a real session end to end."""

from __future__ import annotations

__all__: list[str] = []

from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa
import pytest
from pyspark.sql import types as T

from sparkgate.api.types import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    NULL,
    SMALLINT,
    STRING,
    TINYINT,
    ArrayType,
    CharType,
    Column,
    DayTimeIntervalType,
    DayTimeResolution,
    DecimalType,
    LocalZonedTimestampType,
    LogicalType,
    MapType,
    ResultSchema,
    RowField,
    RowType,
    TimestampType,
    TimeType,
    VarCharType,
    YearMonthIntervalType,
    YearMonthResolution,
)
from sparkgate.codec.rows import encode_json_rows, encode_plain_text_rows
from sparkgate.service.spark.types import (
    FLINK_TYPE_KEY,
    arrow_compatible,
    to_logical_type,
    to_result_schema,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import SparkSession


class PointUDT(T.UserDefinedType):
    @classmethod
    def sqlType(cls) -> T.DataType:
        return T.ArrayType(T.DoubleType(), False)


def _dt(resolution: DayTimeResolution) -> DayTimeIntervalType:
    return DayTimeIntervalType(resolution, 6, 6)


MAPPING: list[tuple[T.DataType, LogicalType]] = [
    (T.BooleanType(), BOOLEAN),
    (T.ByteType(), TINYINT),
    (T.ShortType(), SMALLINT),
    (T.IntegerType(), INT),
    (T.LongType(), BIGINT),
    (T.FloatType(), FLOAT),
    (T.DoubleType(), DOUBLE),
    (T.DecimalType(38, 10), DecimalType(38, 10)),
    (T.StringType(), STRING),
    (T.CharType(3), CharType(3)),
    (T.VarcharType(7), VarCharType(7)),
    (T.BinaryType(), BYTES),
    (T.DateType(), DATE),
    (T.TimestampNTZType(), TimestampType(6)),
    (T.TimestampType(), LocalZonedTimestampType(6)),
    (T.TimeType(3), TimeType(3)),
    (T.DayTimeIntervalType(0, 0), _dt(DayTimeResolution.DAY)),
    (T.DayTimeIntervalType(0, 1), _dt(DayTimeResolution.DAY_TO_HOUR)),
    (T.DayTimeIntervalType(0, 2), _dt(DayTimeResolution.DAY_TO_MINUTE)),
    (T.DayTimeIntervalType(0, 3), _dt(DayTimeResolution.DAY_TO_SECOND)),
    (T.DayTimeIntervalType(1, 1), _dt(DayTimeResolution.HOUR)),
    (T.DayTimeIntervalType(1, 2), _dt(DayTimeResolution.HOUR_TO_MINUTE)),
    (T.DayTimeIntervalType(1, 3), _dt(DayTimeResolution.HOUR_TO_SECOND)),
    (T.DayTimeIntervalType(2, 2), _dt(DayTimeResolution.MINUTE)),
    (T.DayTimeIntervalType(2, 3), _dt(DayTimeResolution.MINUTE_TO_SECOND)),
    (T.DayTimeIntervalType(3, 3), _dt(DayTimeResolution.SECOND)),
    (T.YearMonthIntervalType(0, 0), YearMonthIntervalType(YearMonthResolution.YEAR, 4)),
    (T.YearMonthIntervalType(0, 1), YearMonthIntervalType(YearMonthResolution.YEAR_TO_MONTH, 4)),
    (T.YearMonthIntervalType(1, 1), YearMonthIntervalType(YearMonthResolution.MONTH, 4)),
    (T.ArrayType(T.IntegerType(), True), ArrayType(INT)),
    (T.ArrayType(T.IntegerType(), False), ArrayType(INT.not_null())),
    (
        T.MapType(T.StringType(), T.LongType(), True),
        MapType(STRING.not_null(), BIGINT),
    ),
    (
        T.MapType(T.StringType(), T.LongType(), False),
        MapType(STRING.not_null(), BIGINT.not_null()),
    ),
    (
        T.StructType(
            [
                T.StructField("a", T.IntegerType(), False, {"comment": "the a"}),
                T.StructField("b", T.StringType(), True),
            ]
        ),
        RowType((RowField("a", INT.not_null(), "the a"), RowField("b", STRING))),
    ),
    (T.NullType(), NULL),
    (T.CalendarIntervalType(), STRING),
    (T.VariantType(), STRING),
    (PointUDT(), ArrayType(DOUBLE.not_null())),
]


@pytest.mark.parametrize(("spark_type", "expected"), MAPPING, ids=lambda v: str(v))
def test_to_logical_type(spark_type: T.DataType, expected: LogicalType) -> None:
    assert to_logical_type(spark_type) == expected
    if expected is not NULL:
        assert to_logical_type(spark_type, nullable=False) == expected.not_null()
    assert to_logical_type(T.NullType(), nullable=False) == NULL


@pytest.mark.parametrize(
    ("declared", "expected"),
    [("char(3)", CharType(3)), ("varchar(4)", VarCharType(4)), ("nonsense", STRING)],
)
def test_char_varchar_from_field_metadata(declared: str, expected: LogicalType) -> None:
    metadata: dict[str, object] = {"__CHAR_VARCHAR_TYPE_STRING": declared}
    assert to_logical_type(T.StringType(), True, metadata) == expected


_TS = T.TimestampType()


@pytest.mark.parametrize(
    ("spark_type", "declared", "expected"),
    [
        (T.ArrayType(_TS), "ARRAY<TIMESTAMP(3)>", ArrayType(LocalZonedTimestampType(3))),
        (
            T.ArrayType(_TS, containsNull=False),
            "ARRAY<TIMESTAMP(3) NOT NULL> NOT NULL",
            ArrayType(LocalZonedTimestampType(3).not_null()),
        ),
        (
            T.MapType(T.StringType(), _TS),
            "MAP<VARCHAR(8), TIMESTAMP_LTZ(2)>",
            MapType(VarCharType(8).not_null(), LocalZonedTimestampType(2)),
        ),
        (
            T.StructType([T.StructField("t", _TS), T.StructField("n", T.IntegerType())]),
            "ROW<t TIMESTAMP(3) 'when', n INT>",
            RowType((RowField("t", LocalZonedTimestampType(3)), RowField("n", INT))),
        ),
        (
            T.StructType([T.StructField("a", T.ArrayType(_TS))]),
            "ROW(`a` ARRAY<TIMESTAMP(0)>)",
            RowType((RowField("a", ArrayType(LocalZonedTimestampType(0))),)),
        ),
        # A declaration that does not fit the type: Spark's precision.
        (T.ArrayType(_TS), "MAP<INT, INT>", ArrayType(LocalZonedTimestampType(6))),
        (
            T.StructType([T.StructField("t", _TS)]),
            "ROW<t TIMESTAMP(3), u INT>",
            RowType((RowField("t", LocalZonedTimestampType(6)),)),
        ),
    ],
)
def test_a_nested_column_keeps_its_parts_declared_types(
    spark_type: T.DataType, declared: str, expected: LogicalType
) -> None:
    """A connector column's ``ARRAY<TIMESTAMP(3)>`` answers with precision 3 in
    its elements, as a top-level ``TIMESTAMP(3)`` column does."""
    metadata: dict[str, object] = {FLINK_TYPE_KEY: declared}
    assert to_logical_type(spark_type, True, metadata) == expected


@pytest.fixture
def utc_session(spark: SparkSession) -> Iterator[SparkSession]:
    session = spark.newSession()
    session.conf.set("spark.sql.session.timeZone", "UTC")
    yield session


QUERY = """
SELECT true AS b, CAST(1 AS TINYINT) AS t, CAST(2 AS SMALLINT) AS s, 3 AS i, 4L AS l,
  CAST(1.5 AS FLOAT) AS f, CAST(1e10 AS DOUBLE) AS d, CAST(123.450 AS DECIMAL(9,3)) AS dec,
  'abc' AS str, X'CAFE' AS bin, DATE'1990-10-14' AS dt,
  TIMESTAMP_NTZ'1990-10-14 12:12:43.123' AS ntz, TIMESTAMP'1990-10-14 12:12:43.123456' AS ts,
  TIME'12:12:43.5' AS tm, INTERVAL '1 02:03:04.5' DAY TO SECOND AS dts, INTERVAL '3' HOUR AS h,
  INTERVAL '1-2' YEAR TO MONTH AS ym, array(1.1D, NULL) AS arr, map('k', 1L) AS m,
  named_struct('a', 1, 'b', 'x') AS st, NULL AS n, make_interval(1, 2, 0, 3) AS ci,
  parse_json('{"a":1}') AS v, array(INTERVAL '1' MONTH) AS aym, CAST(NULL AS INT) AS ni
"""

# name, summary, JSON value, PLAIN_TEXT value
EXPECTED: list[tuple[str, str, Any, str | None]] = [
    ("b", "BOOLEAN NOT NULL", True, "TRUE"),
    ("t", "TINYINT NOT NULL", 1, "1"),
    ("s", "SMALLINT NOT NULL", 2, "2"),
    ("i", "INT NOT NULL", 3, "3"),
    ("l", "BIGINT NOT NULL", 4, "4"),
    ("f", "FLOAT NOT NULL", 1.5, "1.5"),
    ("d", "DOUBLE NOT NULL", 1e10, "1.0E10"),
    ("dec", "DECIMAL(9, 3) NOT NULL", 123.45, "123.450"),
    ("str", "STRING NOT NULL", "abc", "abc"),
    ("bin", "BYTES NOT NULL", "yv4=", "x'cafe'"),
    ("dt", "DATE NOT NULL", "1990-10-14", "1990-10-14"),
    ("ntz", "TIMESTAMP(6) NOT NULL", "1990-10-14T12:12:43.123", "1990-10-14 12:12:43.123000"),
    (
        "ts",
        "TIMESTAMP_LTZ(6) NOT NULL",
        "1990-10-14T12:12:43.123456Z",
        "1990-10-14 12:12:43.123456",
    ),
    ("tm", "TIME(6) NOT NULL", "12:12:43.5", "12:12:43.500000"),
    ("dts", "INTERVAL DAY(6) TO SECOND(6) NOT NULL", 93784500, "+1 02:03:04.500"),
    ("h", "INTERVAL HOUR NOT NULL", 10800000, "+0 03:00:00.000"),
    ("ym", "INTERVAL YEAR(4) TO MONTH NOT NULL", 14, "+1-02"),
    ("arr", "ARRAY<DOUBLE> NOT NULL", [1.1, None], "[1.1, NULL]"),
    ("m", "MAP<STRING NOT NULL, BIGINT NOT NULL> NOT NULL", {"k": 1}, "{k=1}"),
    ("st", "ROW<`a` INT NOT NULL, `b` STRING NOT NULL> NOT NULL", {"a": 1, "b": "x"}, "(1, x)"),
    ("n", "NULL", None, None),
    ("ci", "STRING NOT NULL", "1 years 2 months 3 days", "1 years 2 months 3 days"),
    ("v", "STRING NOT NULL", '{"a":1}', '{"a":1}'),
    ("aym", "STRING NOT NULL", "[INTERVAL '1' MONTH]", "[INTERVAL '1' MONTH]"),
    ("ni", "INT", None, None),
]


def test_every_type_end_to_end(utc_session: SparkSession) -> None:
    df = utc_session.sql(QUERY)
    schema = to_result_schema(df.schema)
    assert schema.names == tuple(name for name, *_ in EXPECTED)
    assert [c.logical_type.summary() for c in schema] == [s for _, s, *_ in EXPECTED]

    table = arrow_compatible(df).toArrow()
    batch = table.combine_chunks().to_batches()[0]
    assert batch.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert batch.schema.field("tm").type == pa.time64("ns")
    assert batch.schema.field("dts").type == pa.duration("us")

    [json_row] = orjson.loads(orjson.dumps(encode_json_rows(batch, schema)))
    assert json_row == {"kind": "INSERT", "fields": [v for _, _, v, _ in EXPECTED]}
    [text_row] = encode_plain_text_rows(batch, schema)
    assert text_row == {"kind": "INSERT", "fields": [v for *_, v in EXPECTED]}


def test_json_decimal_keeps_every_digit(utc_session: SparkSession) -> None:
    df = utc_session.sql(
        "SELECT CAST('12345678901234567890.123456789012345678' AS DECIMAL(38, 18)) AS d"
    )
    schema = to_result_schema(df.schema)
    batch = df.toArrow().to_batches()[0]
    assert orjson.dumps(encode_json_rows(batch, schema)) == (
        b'[{"kind":"INSERT","fields":[12345678901234567890.123456789012345678]}]'
    )


def test_table_columns_keep_comment_and_char_lengths(utc_session: SparkSession) -> None:
    utc_session.sql(
        "CREATE TABLE sg_types_t (a INT COMMENT 'the a', c CHAR(3), v VARCHAR(4)) USING parquet"
    )
    try:
        utc_session.sql("INSERT INTO sg_types_t VALUES (1, 'ab', 'cd')")
        df = utc_session.sql("SELECT * FROM sg_types_t")
        schema = to_result_schema(df.schema)
        assert schema == ResultSchema(
            (Column("a", INT, "the a"), Column("c", CharType(3)), Column("v", VarCharType(4)))
        )
        batch = df.toArrow().to_batches()[0]
        assert encode_plain_text_rows(batch, schema) == [
            {"kind": "INSERT", "fields": ["1", "ab ", "cd"]}
        ]
    finally:
        utc_session.sql("DROP TABLE IF EXISTS sg_types_t")


def test_arrow_compatible_leaves_plain_frames_alone(utc_session: SparkSession) -> None:
    df = utc_session.sql("SELECT 1 AS a, 'x' AS b")
    assert arrow_compatible(df) is df
