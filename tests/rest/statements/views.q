# Views as Flink makes them: temporary and permanent, IF NOT EXISTS, SHOW CREATE VIEW,
# EXPR$n names, DROP [TEMPORARY] VIEW.
CREATE TABLE q_orders (
  `user` BIGINT NOT NULL,
  product VARCHAR(32),
  amount INT,
  PRIMARY KEY (`user`) NOT ENFORCED
) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
!ok

create temporary view q_v1 as select * from q_orders;
!ok

create temporary view q_v1 as select * from q_orders;
!error TEMP_TABLE_OR_VIEW_ALREADY_EXISTS

create temporary view if not exists q_v1 as select * from q_orders;
!ok

create temporary view if not exists q_v2 as select `user` from q_v1;
!ok

show create view q_v2;
!text
CREATE TEMPORARY VIEW `default_catalog`.`default_database`.`q_v2` (
  `user`
)
AS SELECT `q_v1`.`user`
FROM `default_catalog`.`default_database`.`q_v1` AS `q_v1`
!end

# A star stays a star; a table only a star reads keeps no alias it was not given.
show create view q_v1;
!text
CREATE TEMPORARY VIEW `default_catalog`.`default_database`.`q_v1` (
  `user`,
  `product`,
  `amount`
)
AS SELECT *
FROM `default_catalog`.`default_database`.`q_orders`
!end

create temporary view q_vs as select *, amount + 1 as more from q_orders o where o.amount > 0;
!ok

show create view q_vs;
!text
CREATE TEMPORARY VIEW `default_catalog`.`default_database`.`q_vs` (
  `user`,
  `product`,
  `amount`,
  `more`
)
AS SELECT *, `o`.`amount` + 1 AS `more`
FROM `default_catalog`.`default_database`.`q_orders` AS `o`
WHERE `o`.`amount` > 0
!end

drop temporary view q_vs;
!ok

# The query as Flink's validator expands it: full names, qualified columns, a
# cast's timestamp precision as it was written.
create temporary view q_v3 as select cast(amount as timestamp(3)) as t from q_orders;
!ok

show create view q_v3;
!text
CREATE TEMPORARY VIEW `default_catalog`.`default_database`.`q_v3` (
  `t`
)
AS SELECT CAST(`q_orders`.`amount` AS TIMESTAMP(3)) AS `t`
FROM `default_catalog`.`default_database`.`q_orders` AS `q_orders`
!end

drop temporary view q_v3;
!ok

create temporary view q_v4 as select product, sum (amount) as total, count(*) from (
  select o.product, amount * 2 as amount from q_orders o where o.amount > 0
) as tmp group by product;
!ok

show create view q_v4;
!text
CREATE TEMPORARY VIEW `default_catalog`.`default_database`.`q_v4` (
  `product`,
  `total`,
  `EXPR$2`
)
AS SELECT `tmp`.`product`, SUM(`tmp`.`amount`) AS `total`, COUNT(*)
FROM (SELECT `o`.`product`, `o`.`amount` * 2 AS `amount`
FROM `default_catalog`.`default_database`.`q_orders` AS `o`
WHERE `o`.`amount` > 0) AS `tmp`
GROUP BY `tmp`.`product`
!end

# A form Flink's expansion is not written for here (a join) prints as written.
create temporary view q_v5 as select a.`user` from q_orders a join q_orders b on a.`user` = b.`user`;
!ok

show create view q_v5;
!text
CREATE TEMPORARY VIEW `default_catalog`.`default_database`.`q_v5` (
  `user`
)
AS select a.`user` from q_orders a join q_orders b on a.`user` = b.`user`
!end

create temporary view q_v6 as select product, count(*) as n from q_orders group by product, amount with rollup;
!ok

show create view q_v6;
!text
CREATE TEMPORARY VIEW `default_catalog`.`default_database`.`q_v6` (
  `product`,
  `n`
)
AS select product, count(*) as n from q_orders group by product, amount with rollup
!end

drop temporary view q_v6;
!ok

# A column named as an SQL word stays a column; GROUP BY ALL is printed as written.
create temporary view q_v7 as select amount as `year`, `user` from q_orders;
!ok

create temporary view q_v8 as select year + 1 as next, count(*) as n from q_v7 group by all;
!ok

create temporary view q_v9 as select year + 1 as next from q_v7;
!ok

show create view q_v9;
!text
CREATE TEMPORARY VIEW `default_catalog`.`default_database`.`q_v9` (
  `next`
)
AS SELECT `q_v7`.`year` + 1 AS `next`
FROM `default_catalog`.`default_database`.`q_v7` AS `q_v7`
!end

show create view q_v8;
!text
CREATE TEMPORARY VIEW `default_catalog`.`default_database`.`q_v8` (
  `next`,
  `n`
)
AS select year + 1 as next, count(*) as n from q_v7 group by all
!end

drop temporary view q_v9;
!ok

drop temporary view q_v8;
!ok

drop temporary view q_v7;
!ok

drop temporary view q_v4;
!ok

drop temporary view q_v5;
!ok

show views like 'q_v%';
| view name |
| q_v1 |
| q_v2 |

show create table q_v1;
!error SHOW CREATE TABLE is only supported for tables, but `default_catalog`.`default_database`.`q_v1` is a view

show create view q_orders;
!error SHOW CREATE VIEW is only supported for views, but `default_catalog`.`default_database`.`q_orders` is a table

# A permanent view of the same name as a temporary one.
create view q_v1 comment 'kept' as select `user`, amount + 1 from q_orders;
!ok

drop view q_v1;
!error Temporary view with identifier '`default_catalog`.`default_database`.`q_v1`' exists. Drop it first

drop temporary view q_v1;
!ok

show create view q_v1;
!text
CREATE VIEW `default_catalog`.`default_database`.`q_v1` (
  `user`,
  `EXPR$1`
)
COMMENT 'kept'
AS SELECT `q_orders`.`user`, `q_orders`.`amount` + 1
FROM `default_catalog`.`default_database`.`q_orders` AS `q_orders`
!end

drop view q_v1;
!ok

drop view q_v1;
!error TABLE_OR_VIEW_NOT_FOUND

drop temporary view q_v1;
!error Temporary view with identifier '`default_catalog`.`default_database`.`q_v1`' does not exist

drop temporary view if exists q_v1;
!ok

# Flink names a column without an alias EXPR$<position>, also after a star.
create view q_exprs as select 1 + 1, 'a' as b, upper('x');
!ok

create temporary view q_more as select *, 2 * 3 from q_exprs;
!ok

select * from q_more;
| EXPR$0 | b | EXPR$2 | EXPR$3 |
| 2 | a | X | 6 |

drop view q_exprs;
!ok

drop temporary view q_more;
!ok

drop temporary view q_v2;
!ok

# A view over a connector table reads it as the gateway does: its computed columns
# are there, and DESCRIBE shows its columns as they were declared.
CREATE TABLE q_events (
  `user` BIGINT NOT NULL,
  product VARCHAR(32),
  ts TIMESTAMP(3),
  ptime AS PROCTIME(),
  doubled AS `user` * 2,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '5',
  'fields.user.kind' = 'sequence',
  'fields.user.start' = '1',
  'fields.user.end' = '5'
);
!ok

create temporary view q_ev1 as select * from q_events;
!ok

describe q_ev1;
| name | type | null | key | extras | watermark |
| user | BIGINT | FALSE | NULL | NULL | NULL |
| product | VARCHAR(32) | TRUE | NULL | NULL | NULL |
| ts | TIMESTAMP(3) *ROWTIME* | TRUE | NULL | NULL | NULL |
| ptime | TIMESTAMP_LTZ(3) *PROCTIME* | FALSE | NULL | NULL | NULL |
| doubled | BIGINT | FALSE | NULL | NULL | NULL |

create view q_ev2 (who, twice, t) as select `user`, doubled, ptime from q_events;
!ok

show columns from q_ev2;
| name | type | null | key | extras | watermark |
| who | BIGINT | FALSE | NULL | NULL | NULL |
| twice | BIGINT | FALSE | NULL | NULL | NULL |
| t | TIMESTAMP_LTZ(3) *PROCTIME* | FALSE | NULL | NULL | NULL |

create temporary view q_ev3 as select twice from q_ev2 where t is not null;
!ok

select count(*) as n, max(twice) as top from q_ev3;
| n | top |
| 5 | 10 |

drop temporary view q_ev3;
!ok

drop view q_ev2;
!ok

drop temporary view q_ev1;
!ok

drop table q_events;
!ok

drop table q_orders;
!ok
