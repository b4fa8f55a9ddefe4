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

# As in Flink, SET stores options unchecked (a connector changes over several
# statements); reading the table checks them.
ALTER TABLE q_alt SET ('bogus' = '1');
!ok

SELECT count(*) AS n FROM q_alt;
!error Unsupported option 'bogus' for connector 'datagen'

SHOW CREATE TABLE q_alt;
!text
CREATE TABLE `default_catalog`.`default_database`.`q_alt` (
  `user_id` BIGINT NOT NULL,
  `product` VARCHAR(2147483647),
  `amount` INT,
  `ts` TIMESTAMP(3),
  WATERMARK FOR `ts` AS `ts` - INTERVAL '1' SECOND,
  CONSTRAINT `PK_user_id` PRIMARY KEY (`user_id`) NOT ENFORCED
)
WITH (
  'bogus' = '1',
  'connector' = 'datagen',
  'number-of-rows' = '7'
)
!end

ALTER TABLE q_alt RESET ('bogus');
!ok

SELECT count(*) AS n FROM q_alt;
| n |
| 7 |

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
| c4 | INT | TRUE | NULL | AS `amount` * 2 | NULL |

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
  CONSTRAINT `pk` PRIMARY KEY (`product`) NOT ENFORCED
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

# Flink's printing: a named constraint keeps its name, a computed column its
# expression re-spelled by the parser, a temporary table the current catalog and
# database; a connector changes over several SETs, checked when read.
CREATE TABLE q_orders (
  `user` BIGINT NOT NULL,
  product VARCHAR(32),
  amount INT,
  cleaned AS coalesce(product, 'missing_sku'),
  total AS cast(amount AS int) * 2,
  CONSTRAINT order_key PRIMARY KEY (`user`) NOT ENFORCED
) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
!ok

SHOW COLUMNS FROM q_orders LIKE 'cleaned';
| name | type | null | key | extras | watermark |
| cleaned | STRING | TRUE | NULL | AS COALESCE(`product`, 'missing_sku') | NULL |

ALTER TABLE q_orders SET ('connector' = 'kafka', 'scan.startup.mode' = 'earliest-offset');
!ok

SHOW CREATE TABLE q_orders;
!text
CREATE TABLE `default_catalog`.`default_database`.`q_orders` (
  `user` BIGINT NOT NULL,
  `product` VARCHAR(32),
  `amount` INT,
  `cleaned` AS COALESCE(`product`, 'missing_sku'),
  `total` AS CAST(`amount` AS INTEGER) * 2,
  CONSTRAINT `order_key` PRIMARY KEY (`user`) NOT ENFORCED
)
WITH (
  'connector' = 'kafka',
  'number-of-rows' = '3',
  'scan.startup.mode' = 'earliest-offset'
)
!end

SELECT count(*) FROM q_orders;
!error .*Unsupported option 'number-of-rows' for connector 'kafka'

ALTER TABLE q_orders SET ('connector' = 'datagen');
!ok

ALTER TABLE q_orders RESET ('scan.startup.mode');
!ok

SELECT count(*) AS n FROM q_orders;
| n |
| 3 |

ALTER TABLE q_orders MODIFY CONSTRAINT amount_key PRIMARY KEY (amount) NOT ENFORCED;
!ok

SHOW COLUMNS FROM q_orders LIKE 'amount';
| name | type | null | key | extras | watermark |
| amount | INT | FALSE | PRI(amount) | NULL | NULL |

ALTER TABLE q_orders DROP CONSTRAINT amount_key;
!ok

ALTER TABLE q_orders ADD PRIMARY KEY (`user`) NOT ENFORCED;
!ok

SHOW CREATE TABLE q_orders;
!text
CREATE TABLE `default_catalog`.`default_database`.`q_orders` (
  `user` BIGINT NOT NULL,
  `product` VARCHAR(32),
  `amount` INT,
  `cleaned` AS COALESCE(`product`, 'missing_sku'),
  `total` AS CAST(`amount` AS INTEGER) * 2,
  CONSTRAINT `PK_user` PRIMARY KEY (`user`) NOT ENFORCED
)
WITH (
  'connector' = 'datagen',
  'number-of-rows' = '3'
)
!end

DROP TABLE q_orders;
!ok

CREATE TEMPORARY TABLE q_tmp (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
!ok

SHOW CREATE TABLE q_tmp;
!text
CREATE TEMPORARY TABLE `default_catalog`.`default_database`.`q_tmp` (
  `a` INT
)
WITH (
  'connector' = 'datagen',
  'number-of-rows' = '1'
)
!end

DROP TEMPORARY TABLE q_tmp;
!ok

# Column comments: kept apart from the type or expression, printed back, and a
# comment column in DESCRIBE when a column has one (as Flink).
CREATE TABLE q_commented (
  `user` BIGINT NOT NULL COMMENT 'the key, named ''user''.',
  amount INT,
  ptime AS PROCTIME() COMMENT 'computed',
  PRIMARY KEY (`user`) NOT ENFORCED
) WITH ('connector' = 'datagen', 'number-of-rows' = '2');
!ok

DESCRIBE q_commented;
| name | type | null | key | extras | watermark | comment |
| user | BIGINT | FALSE | PRI(user) | NULL | NULL | the key, named 'user'. |
| amount | INT | TRUE | NULL | NULL | NULL | NULL |
| ptime | TIMESTAMP_LTZ(3) *PROCTIME* | FALSE | NULL | AS PROCTIME() | NULL | computed |

SHOW CREATE TABLE q_commented;
!text
CREATE TABLE `default_catalog`.`default_database`.`q_commented` (
  `user` BIGINT NOT NULL COMMENT 'the key, named ''user''.',
  `amount` INT,
  `ptime` AS PROCTIME() COMMENT 'computed',
  CONSTRAINT `PK_user` PRIMARY KEY (`user`) NOT ENFORCED
)
WITH (
  'connector' = 'datagen',
  'number-of-rows' = '2'
)
!end

SELECT count(ptime) AS n FROM q_commented;
| n |
| 2 |

DROP TABLE q_commented;
!ok
