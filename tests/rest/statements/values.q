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

# A cast to TIME and a TIME column (Spark's TIME type, turned on by the gateway).
SELECT CAST('01:02:03.456' AS TIME(3)) AS t;
| t |
| 01:02:03.456 |

CREATE TEMPORARY VIEW times AS SELECT CAST(NULL AS TIME) AS t;
!ok

SELECT t FROM times;
| t |
| NULL |

# Flink's timestamp precisions are taken (Spark's values keep microseconds).
SELECT CAST('2024-01-01 12:00:00.123' AS TIMESTAMP(3)) AS t, CAST(TIMESTAMP '2024-01-01 12:00:00' AS TIMESTAMP_LTZ(3)) AS l;
| t | l |
| 2024-01-01T12:00:00.123Z | 2024-01-01T12:00:00Z |

# TO_TIMESTAMP_LTZ of epoch milliseconds (precision 3, the default) or seconds (0).
SELECT TO_TIMESTAMP_LTZ(1700000000123, 3) AS ms, TO_TIMESTAMP_LTZ(1700000000, 0) AS s, TO_TIMESTAMP_LTZ(1700000000123) AS d;
| ms | s | d |
| 2023-11-14T22:13:20.123Z | 2023-11-14T22:13:20Z | 2023-11-14T22:13:20.123Z |
