# Flink's CREATE TABLE ... LIKE (FLIP-110): a table started from another's
# definition, each feature merged as the like options say.
CREATE TABLE q_base (
  id INT,
  name STRING,
  ts TIMESTAMP(3),
  up AS UPPER(name),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'datagen', 'number-of-rows' = '3', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3');
!ok

# Unwritten: INCLUDING ALL OVERWRITING OPTIONS.
CREATE TABLE q_two WITH ('number-of-rows' = '2') LIKE q_base;
!ok

SELECT id, up IS NOT NULL AS u FROM q_two;
| id | u |
| 1 | TRUE |
| 2 | TRUE |

SHOW CREATE TABLE q_two;
!text
CREATE TABLE `default_catalog`.`default_database`.`q_two` (
  `id` INT NOT NULL,
  `name` VARCHAR(2147483647),
  `ts` TIMESTAMP(3),
  `up` AS UPPER(`name`),
  WATERMARK FOR `ts` AS `ts` - INTERVAL '5' SECOND,
  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
)
WITH (
  'connector' = 'datagen',
  'fields.id.end' = '3',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'number-of-rows' = '2'
)
!end

# The physical columns always; everything else left out; the statement's columns after.
CREATE TABLE q_bare (extra INT) WITH ('connector' = 'blackhole') LIKE q_base (EXCLUDING ALL);
!ok

SHOW COLUMNS FROM q_bare;
| name | type | null | key | extras | watermark |
| id | INT | TRUE | NULL | NULL | NULL |
| name | STRING | TRUE | NULL | NULL | NULL |
| ts | TIMESTAMP(3) | TRUE | NULL | NULL | NULL |
| extra | INT | TRUE | NULL | NULL | NULL |

CREATE TABLE q_wm (WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'blackhole') LIKE q_base (EXCLUDING OPTIONS OVERWRITING WATERMARKS EXCLUDING CONSTRAINTS);
!ok

SHOW COLUMNS FROM q_wm LIKE 'ts';
| name | type | null | key | extras | watermark |
| ts | TIMESTAMP(3) *ROWTIME* | TRUE | NULL | NULL | `ts` - INTERVAL '1' SECOND |

CREATE TABLE q_bad (WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'blackhole') LIKE q_base (EXCLUDING OPTIONS);
!error There already exists a watermark spec for column 'ts' in the base table

CREATE TABLE q_bad (id INT) WITH ('connector' = 'blackhole') LIKE q_base (EXCLUDING OPTIONS);
!error A column named 'id' already exists in the base table

CREATE TABLE q_bad (up AS LOWER(name)) LIKE q_base;
!error A generated column named 'up' already exists in the base table

CREATE TABLE q_bad WITH ('number-of-rows' = '2') LIKE q_base (INCLUDING OPTIONS);
!error There already exists an option \['number-of-rows' -> '3'\] in the base table

CREATE TABLE q_bad (PRIMARY KEY (name) NOT ENFORCED) LIKE q_base;
!error The base table already has a primary key

CREATE TABLE q_bad WITH ('a' = 'b') LIKE q_base (OVERWRITING CONSTRAINTS);
!error Illegal merging strategy 'OVERWRITING' for 'CONSTRAINTS' option

CREATE TABLE q_bad WITH ('a' = 'b') LIKE q_nowhere;
!error Source table q_nowhere of the LIKE clause not found

CREATE TEMPORARY TABLE q_bad LIKE q_base (EXCLUDING OPTIONS);
!error Table options do not contain an option key 'connector'

SHOW TABLES LIKE 'q_bad%';
| table name |

# Alone, over a connector table it is Flink's; over a Spark table, Spark's.
CREATE TEMPORARY TABLE q_copy LIKE q_base;
!ok

SELECT count(*) AS n FROM q_copy;
| n |
| 3 |

CREATE TABLE q_spark (a INT) USING parquet;
!ok

CREATE TABLE q_spark_copy LIKE q_spark;
!ok

SHOW CREATE TABLE q_spark_copy;
!text
CREATE TABLE spark_catalog.default.q_spark_copy (
  a INT)
USING parquet
!end

CREATE TABLE q_bad WITH ('connector' = 'blackhole') LIKE q_spark;
!error Source table q_spark of the LIKE clause is a Spark table

DROP TABLE q_spark_copy;
!ok

DROP TABLE q_spark;
!ok
