# ALTER TABLE of connector tables in Flink's forms; the stored definition changes.
CREATE TABLE q_alt (
  user_id BIGINT,
  product STRING,
  amount INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND,
  PRIMARY KEY (user_id) NOT ENFORCED
) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
!ok

ALTER TABLE q_alt SET ('number-of-rows' = '7');
!ok

SELECT count(*) AS n FROM q_alt;
| n |
| 7 |

ALTER TABLE q_alt SET ('bogus' = '1');
!error Unsupported option 'bogus' for connector 'datagen'

ALTER TABLE q_alt ADD c2 INT FIRST;
!ok

ALTER TABLE q_alt ADD (c3 STRING AFTER product, c4 AS amount * 2);
!ok

ALTER TABLE q_alt MODIFY c2 BIGINT AFTER amount;
!ok

ALTER TABLE q_alt ADD c3 INT;
!error The column `c3` already exists

SHOW COLUMNS FROM q_alt;
| name | type | null | key | extras | watermark |
| user_id | BIGINT | FALSE | PRI(user_id) | NULL | NULL |
| product | STRING | TRUE | NULL | NULL | NULL |
| c3 | STRING | TRUE | NULL | NULL | NULL |
| amount | INT | TRUE | NULL | NULL | NULL |
| c2 | BIGINT | TRUE | NULL | NULL | NULL |
| ts | TIMESTAMP(3) *ROWTIME* | TRUE | NULL | NULL | `ts` - INTERVAL '1' SECOND |
| c4 | INT | TRUE | NULL | AS amount * 2 | NULL |

ALTER TABLE q_alt DROP (c2, c3, c4);
!ok

ALTER TABLE q_alt DROP ts;
!error The column `ts` is used by the watermark

ALTER TABLE q_alt DROP WATERMARK;
!ok

ALTER TABLE q_alt ADD WATERMARK FOR ts AS ts - INTERVAL '5' SECOND;
!ok

ALTER TABLE q_alt DROP PRIMARY KEY;
!ok

ALTER TABLE q_alt ADD CONSTRAINT pk PRIMARY KEY (product) NOT ENFORCED;
!ok

ALTER TABLE q_alt RENAME amount TO amt;
!ok

ALTER TABLE q_alt RESET ('number-of-rows');
!ok

ALTER TABLE q_alt RESET ();
!error ALTER TABLE RESET does not support empty key

ALTER TABLE q_alt ADD note STRING NOT NULL;
!ok

SHOW COLUMNS FROM q_alt LIKE 'note';
| name | type | null | key | extras | watermark |
| note | STRING | FALSE | NULL | NULL | NULL |

SHOW CREATE TABLE q_alt;
!text
CREATE TABLE `default_catalog`.`default_database`.`q_alt` (
  `user_id` BIGINT,
  `product` VARCHAR(2147483647) NOT NULL,
  `amt` INT,
  `ts` TIMESTAMP(3),
  `note` VARCHAR(2147483647) NOT NULL,
  WATERMARK FOR `ts` AS `ts` - INTERVAL '5' SECOND,
  CONSTRAINT `PK_product` PRIMARY KEY (`product`) NOT ENFORCED
)
WITH (
  'connector' = 'datagen'
)
!end

ALTER TABLE q_alt RENAME TO q_alt2;
!ok

SHOW TABLES LIKE 'q_alt%';
| table name |
| q_alt2 |

ALTER TABLE IF EXISTS q_alt SET ('k' = 'v');
!ok

DROP TABLE q_alt2;
!ok

# On a table of Spark's, Flink's forms become Spark's.
CREATE TABLE q_spark (a INT) USING parquet;
!ok

ALTER TABLE q_spark SET ('k' = 'v');
!ok

ALTER TABLE q_spark ADD b STRING;
!ok

SHOW COLUMNS FROM q_spark;
| name | type | null | key | extras | watermark |
| a | INT | TRUE | NULL | NULL | NULL |
| b | STRING | TRUE | NULL | NULL | NULL |

ALTER TABLE q_spark ADD WATERMARK FOR a AS a;
!error Only connector tables have a watermark

DROP TABLE q_spark;
!ok

# SHOW CREATE names the first catalog and database as Flink does, and that text runs.
CREATE TABLE `default_catalog`.`default_database`.`q_again` (
  `a` INT
) WITH (
  'connector' = 'datagen'
);
!ok

SHOW CREATE TABLE q_again;
!text
CREATE TABLE `default_catalog`.`default_database`.`q_again` (
  `a` INT
)
WITH (
  'connector' = 'datagen'
)
!end

DROP TABLE q_again;
!ok
