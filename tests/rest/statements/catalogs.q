# generic_in_memory catalogs: Flink's 'default-database' option; only the databases
# made in the catalog are listed (not those of the store underneath).
CREATE CATALOG q_mem COMMENT 'in memory' WITH ('type' = 'generic_in_memory', 'default-database' = 'db');
!ok

USE CATALOG q_mem;
!ok

SHOW CURRENT DATABASE;
| current database name |
| db |

CREATE DATABASE db2;
!ok

SHOW DATABASES;
| database name |
| db |
| db2 |

SHOW DATABASES LIKE 'db_';
| database name |
| db2 |

# Tables of Spark's kind live in it, and, as in Flink's, connector tables and views
# (the gateway keeps their definitions in the catalog's own memory).
CREATE TABLE q_mem_t (a INT);
!ok

CREATE TABLE q_mem_gen (a INT, b AS a * 10) WITH ('connector' = 'datagen', 'number-of-rows' = '3', 'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '3');
!ok

CREATE TABLE q_mem_gen (a INT) WITH ('connector' = 'datagen');
!error Table \(or view\) db\.q_mem_gen already exists in Catalog q_mem\.

CREATE TABLE IF NOT EXISTS q_mem_gen (a INT) WITH ('connector' = 'datagen');
!ok

CREATE TABLE q_mem_t (a INT) WITH ('connector' = 'datagen');
!error Table \(or view\) db\.q_mem_t already exists in Catalog q_mem\.

CREATE TABLE nope.q_mem_gen (a INT) WITH ('connector' = 'datagen');
!error Database nope does not exist in Catalog q_mem\.

CREATE TABLE q_mem_bad (a INT, b AS no_such_column + 1) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
!error UNRESOLVED_COLUMN

CREATE VIEW q_mem_v AS SELECT 1 + 1;
!ok

CREATE VIEW q_mem_v2 (total) COMMENT 'its sum' AS SELECT sum(b) FROM q_mem_gen WHERE a > 1;
!ok

CREATE VIEW q_mem_v AS SELECT 2;
!error Table \(or view\) db\.q_mem_v already exists in Catalog q_mem\.

SELECT a, b FROM q_mem_gen;
| a | b |
| 1 | 10 |
| 2 | 20 |
| 3 | 30 |

SELECT * FROM q_mem_v;
| EXPR$0 |
| 2 |

SELECT * FROM q_mem.db.q_mem_v2;
| total |
| 50 |

DESCRIBE q_mem_gen;
| name | type | null | key | extras | watermark |
| a | INT | TRUE | NULL | NULL | NULL |
| b | INT | TRUE | NULL | AS `a` * 10 | NULL |

SHOW CREATE TABLE q_mem_gen;
!text
CREATE TABLE `q_mem`.`db`.`q_mem_gen` (
  `a` INT,
  `b` AS `a` * 10
)
WITH (
  'connector' = 'datagen',
  'fields.a.end' = '3',
  'fields.a.kind' = 'sequence',
  'fields.a.start' = '1',
  'number-of-rows' = '3'
)
!end

SHOW CREATE VIEW q_mem_v2;
!text
CREATE VIEW `q_mem`.`db`.`q_mem_v2` (
  `total`
)
COMMENT 'its sum'
AS SELECT SUM(`q_mem_gen`.`b`)
FROM `q_mem`.`db`.`q_mem_gen` AS `q_mem_gen`
WHERE `q_mem_gen`.`a` > 1
!end

CREATE TABLE q_mem_sink (total BIGINT) WITH ('connector' = 'blackhole');
!ok

CREATE TEMPORARY TABLE q_mem_tmp (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '2');
!ok

CREATE TEMPORARY VIEW q_mem_tv AS SELECT count(*) AS n FROM q_mem_tmp;
!ok

SELECT n FROM q_mem_tv;
| n |
| 2 |

# Its listing has the session's temporary tables and views too, as Flink's has.
SHOW TABLES;
| table name |
| q_mem_gen |
| q_mem_sink |
| q_mem_t |
| q_mem_tmp |
| q_mem_tv |
| q_mem_v |
| q_mem_v2 |

SHOW VIEWS;
| view name |
| q_mem_tv |
| q_mem_v |
| q_mem_v2 |

SHOW TABLES FROM q_mem.db LIKE 'q_mem_v%';
| table name |
| q_mem_v |
| q_mem_v2 |

ALTER TABLE q_mem_gen SET ('number-of-rows' = '2');
!ok

SELECT * FROM q_mem_v2;
| total |
| 20 |

ALTER TABLE q_mem_gen RENAME TO q_mem_gen2;
!ok

SELECT count(*) AS n FROM q_mem_gen2;
| n |
| 2 |

# A view reads the tables it named: renamed away, it fails, with the reason.
SELECT * FROM q_mem_v2;
!error q_mem_gen

DROP VIEW q_mem_v2;
!ok

DROP VIEW q_mem_v2;
!error View with identifier 'q_mem\.db\.q_mem_v2' does not exist\.

DROP VIEW IF EXISTS q_mem_v2;
!ok

DROP TABLE q_mem_sink;
!ok

DROP TABLE q_mem_sink;
!error TABLE_OR_VIEW_NOT_FOUND

# ALTER VIEW of a view kept there: its query replaced, or its name.
ALTER VIEW q_mem_v AS SELECT 40 + 2 AS answer;
!ok

SELECT * FROM q_mem_v;
| answer |
| 42 |

ALTER VIEW q_mem_v RENAME TO q_mem_v9;
!ok

SELECT * FROM q_mem.db.q_mem_v9;
| answer |
| 42 |

SELECT * FROM q_mem_v;
!error TABLE_OR_VIEW_NOT_FOUND

ALTER VIEW q_mem_v9 RENAME TO q_mem_t;
!error Table \(or view\) db\.q_mem_t already exists in Catalog q_mem\.

ALTER VIEW q_mem_nope AS SELECT 1;
!error View with identifier 'q_mem\.db\.q_mem_nope' does not exist\.

ALTER VIEW q_mem_v9 RENAME TO q_mem_v;
!ok

# DROP DATABASE as Flink's: RESTRICT (the default) refuses a database with tables,
# CASCADE drops them with it.
CREATE DATABASE db3;
!ok

CREATE TABLE db3.q_mem_t3 (a INT);
!ok

CREATE DATABASE db6;
!ok

CREATE VIEW db6.q_mem_v6 AS SELECT 6 AS x;
!ok

DROP DATABASE db6;
!error Database db6 in catalog q_mem is not empty\.

DROP VIEW db6.q_mem_v6;
!ok

DROP DATABASE db6;
!ok

CREATE VIEW db3.q_mem_v3 AS SELECT 3 AS x;
!ok

DROP DATABASE db2;
!ok

DROP DATABASE IF EXISTS db2;
!ok

DROP DATABASE db3;
!error Database db3 in catalog q_mem is not empty\.

DROP DATABASE q_mem.db3 RESTRICT;
!error Database db3 in catalog q_mem is not empty\.

DROP DATABASE q_mem.db3 CASCADE;
!ok

SHOW DATABASES;
| database name |
| db |

CREATE DATABASE db3;
!ok

SELECT * FROM db3.q_mem_t3;
!error TABLE_OR_VIEW_NOT_FOUND

SELECT * FROM db3.q_mem_v3;
!error TABLE_OR_VIEW_NOT_FOUND

SHOW VIEWS FROM db3;
| view name |

# Its databases keep a comment and properties (Derby, underneath, keeps neither).
CREATE DATABASE db4 COMMENT 'db4_comment' WITH ('k1' = 'v1');
!ok

CREATE DATABASE db5 COMMENT 'only a comment';
!ok

ALTER DATABASE db4 SET ('k1' = 'a', 'k2' = 'b');
!ok

DESCRIBE DATABASE db4;
| info_name | info_value |
| Catalog Name | q_mem |
| Namespace Name | db4 |
| Comment | db4_comment |

DESCRIBE DATABASE EXTENDED q_mem.db4;
| info_name | info_value |
| Catalog Name | q_mem |
| Namespace Name | db4 |
| Comment | db4_comment |
| Properties | ((k1,a), (k2,b)) |

DESCRIBE DATABASE EXTENDED db5;
| info_name | info_value |
| Catalog Name | q_mem |
| Namespace Name | db5 |
| Comment | only a comment |
| Properties |  |

CREATE DATABASE IF NOT EXISTS db4 COMMENT 'another';
!ok

ALTER DATABASE nope SET ('k' = 'v');
!error Database nope does not exist in catalog q_mem

DROP DATABASE db4;
!ok

DROP DATABASE db5;
!ok

SHOW DATABASES;
| database name |
| db |
| db3 |

USE CATALOG spark_catalog;
!ok

# The same for a catalog named in full, not used before (its plug-in not yet loaded).
CREATE CATALOG q_mem2 WITH ('type' = 'generic_in_memory');
!ok

CREATE VIEW q_mem2.`default`.q_mem_v2 AS SELECT 1 AS x;
!ok

SELECT x FROM q_mem2.`default`.q_mem_v2;
| x |
| 1 |

# Gone with its catalog: a catalog of that name made again is empty.
DROP CATALOG q_mem2;
!ok

CREATE CATALOG q_mem2 WITH ('type' = 'generic_in_memory');
!ok

SHOW TABLES FROM q_mem2.`default`;
| table name |

DROP CATALOG q_mem2;
!ok

DROP CATALOG q_mem;
!ok

# Spark's session catalog, by either name, is not dropped: it is not CREATE CATALOG's.
DROP CATALOG default_catalog;
!error Cannot drop catalog default_catalog: it is not made with CREATE CATALOG but Spark's built-in catalog

DROP CATALOG IF EXISTS spark_catalog;
!error Cannot drop catalog spark_catalog: it is not made with CREATE CATALOG
