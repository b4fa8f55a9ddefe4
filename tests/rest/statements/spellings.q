# Flink's spellings of values and functions, as Spark SQL has them.
SELECT ARRAY[1, 2, 3] AS a, CARDINALITY(ARRAY[1, 2]) AS n, MAP['k', 1] AS m, ROW(1, 'x') AS r;
| a | n | m | r |
| [1, 2, 3] | 2 | {'k': 1} | {'col1': 1, 'col2': 'x'} |

SELECT CAST(7 AS VARCHAR) AS s, CAST('a' AS BYTES) AS b, CAST(NULL AS ROW<x INT, y STRING>) AS r;
| s | b | r |
| 7 | YQ== | NULL |

SELECT JSON_VALUE('{"a": {"b": 1}}', '$.a.b') AS v, JSON_QUERY('{"a": [1, 2]}', '$.a') AS q;
| v | q |
| 1 | [1,2] |

# SPLIT_INDEX counts from 0 and gives NULL past the end.
SELECT SPLIT_INDEX('a,b,c', ',', 1) AS s, SPLIT_INDEX('a.b', '.', 1) AS d, SPLIT_INDEX('a.b', '.', 2) AS n, SPLIT_INDEX('a', ',', -1) AS m;
| s | d | n | m |
| b | b | NULL | NULL |

SELECT LOCALTIMESTAMP IS NOT NULL AS t, LOCALTIME IS NOT NULL AS l, PROCTIME() IS NOT NULL AS p, CURRENT_ROW_TIMESTAMP() IS NOT NULL AS c;
| t | l | p | c |
| TRUE | TRUE | TRUE | TRUE |

# The same spellings in a connector table's computed columns.
CREATE TEMPORARY TABLE q_computed (a INT, t AS LOCALTIMESTAMP, pair AS ARRAY[a, a + 1], half AS SPLIT_INDEX('x,y', ',', 1)) WITH ('connector' = 'datagen', 'number-of-rows' = '1', 'fields.a.kind' = 'sequence', 'fields.a.start' = '4', 'fields.a.end' = '4');
!ok

SELECT a, t IS NOT NULL AS t, pair, half FROM q_computed;
| a | t | pair | half |
| 4 | TRUE | [4, 5] | y |

SELECT FLOOR(TIMESTAMP '2024-05-06 07:08:09' TO HOUR) AS f, CEIL(TIMESTAMP '2024-05-06 07:08:09' TO DAY) AS c, CEIL(TIMESTAMP '2024-05-06 00:00:00' TO DAY) AS e;
| f | c | e |
| 2024-05-06T07:00:00Z | 2024-05-07T00:00:00Z | 2024-05-06T00:00:00Z |

SELECT SHA256('a') AS h, TO_BASE64(CAST('a' AS BYTES)) AS b, FROM_BASE64('YQ==') AS s;
| h | b | s |
| ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb | YQ== | a |

# Flink's EXECUTE <query> is the query itself.
EXECUTE SELECT 1 AS one;
| one |
| 1 |

# Flink's functions Spark has none of.
SELECT RAND_INTEGER(10) BETWEEN 0 AND 9 AS r, RAND_INTEGER(7, 3) BETWEEN 0 AND 2 AS s, WEEK(DATE '2024-01-09') AS w;
| r | s | w |
| TRUE | TRUE | 2 |

SELECT CONVERT_TZ('1970-01-01 00:00:00', 'UTC', 'America/Los_Angeles') AS la, CONVERT_TZ('2024-03-01 12:30:00', 'Asia/Shanghai', 'UTC') AS u;
| la | u |
| 1969-12-31 16:00:00 | 2024-03-01 04:30:00 |

SELECT ELEMENT(ARRAY[7]) AS one, ELEMENT(CAST(ARRAY() AS ARRAY<INT>)) AS none;
| one | none |
| 7 | NULL |

SELECT ELEMENT(ARRAY[1, 2]) AS two;
!error ELEMENT: the array has more than one element

# Flink's numeric, string and collection functions Spark has none of.
SELECT TRUNCATE(42.324, 2) AS a, TRUNCATE(-42.38, 1) AS b, TRUNCATE(42.8) AS c, IS_ALPHA('abc') AS d, IS_ALPHA('a1') AS e, IS_DIGIT('123') AS f, IS_DECIMAL('1.5') AS g, IS_DECIMAL('x') AS h;
| a | b | c | d | e | f | g | h |
| 42.32 | -42.3 | 42 | TRUE | FALSE | TRUE | TRUE | FALSE |

SELECT ARRAY_REVERSE(ARRAY[1, 2, 3]) AS r, ARRAY_SLICE(ARRAY[1, 2, 3, 4], 2, 3) AS b, ARRAY_SLICE(ARRAY[1, 2, 3, 4], -2, -1) AS c, ARRAY_SLICE(ARRAY[1, 2, 3, 4], 0, 1) AS d, ARRAY_SLICE(ARRAY[1, 2, 3, 4], 3) AS e, ARRAY_SLICE(ARRAY[1, 2], 2, 1) AS f, ARRAY_CONCAT(ARRAY[1], ARRAY[2, 3]) AS g;
| r | b | c | d | e | f | g |
| [3, 2, 1] | [2, 3] | [3, 4] | [1] | [3, 4] | [] | [1, 2, 3] |

SELECT MAP_UNION(MAP['a', 1, 'b', 2], MAP['b', 3, 'c', 4]) AS m;
| m |
| {'a': 1, 'b': 3, 'c': 4} |

# BETWEEN SYMMETRIC takes its bounds in either order; ASYMMETRIC is plain BETWEEN.
SELECT 5 BETWEEN SYMMETRIC 10 AND 1 AS a, 5 NOT BETWEEN SYMMETRIC 10 AND 1 AS b, 5 BETWEEN ASYMMETRIC 10 AND 1 AS c, 5 BETWEEN SYMMETRIC CAST(NULL AS INT) AND 1 AS d;
| a | b | c | d |
| TRUE | FALSE | FALSE | NULL |
