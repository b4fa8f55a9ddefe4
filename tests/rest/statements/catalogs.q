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

# Tables of Spark's kind live in it; connector tables and views are kept by the
# session catalog, and are refused here with the way out, not a Spark stack trace.
CREATE TABLE q_mem_t (a INT);
!ok

CREATE TABLE q_mem_gen (a INT) WITH ('connector' = 'datagen');
!error Could not create connector table q_mem_gen: catalog 'q_mem' cannot keep connector tables; the gateway keeps them in 'spark_catalog'\. Create it there .* or as a TEMPORARY TABLE

CREATE VIEW q_mem_v AS SELECT 1 AS x;
!error Could not create view q_mem_v: catalog 'q_mem' cannot keep views \(its Spark catalog, JDBCTableCatalog, has none\)\. Create a TEMPORARY VIEW, or the view in 'spark_catalog'

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
| q_mem_t |
| q_mem_tmp |
| q_mem_tv |

SHOW VIEWS;
| view name |
| q_mem_tv |

# DROP DATABASE as Flink's: RESTRICT (the default) refuses a database with tables,
# CASCADE drops them with it.
CREATE DATABASE db3;
!ok

CREATE TABLE db3.q_mem_t3 (a INT);
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
!error Could not create view q_mem2\.default\.q_mem_v2: catalog 'q_mem2' cannot keep views

DROP CATALOG q_mem2;
!ok

DROP CATALOG q_mem;
!ok
