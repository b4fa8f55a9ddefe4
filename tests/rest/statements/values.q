# Values in Flink's JSON row format: intervals as Flink encodes them (milliseconds,
# months), whatever their fields.
SELECT INTERVAL '1' DAY AS d, INTERVAL '1' YEAR AS y, INTERVAL '1-2' YEAR TO MONTH AS ym;
| d | y | ym |
| 86400000 | 12 | 14 |

SELECT INTERVAL '3' MONTH AS m, INTERVAL '-1-3' YEAR TO MONTH AS neg, CAST(NULL AS INTERVAL YEAR) AS n;
| m | neg | n |
| 3 | -15 | NULL |

SELECT TIME '12:34:56' AS t;
| t |
| 12:34:56 |

# Flink's timestamp precisions are taken (Spark's values keep microseconds).
SELECT CAST('2024-01-01 12:00:00.123' AS TIMESTAMP(3)) AS t, CAST(TIMESTAMP '2024-01-01 12:00:00' AS TIMESTAMP_LTZ(3)) AS l;
| t | l |
| 2024-01-01T12:00:00.123Z | 2024-01-01T12:00:00Z |
