# Flink's names of the first catalog and database name Spark's session catalog and its
# default database.
CREATE TABLE default_catalog.default_database.q_names (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '2');
!ok

SHOW TABLES FROM default_catalog.default_database LIKE 'q_names';
| table name |
| q_names |

SELECT count(*) AS n FROM default_catalog.default_database.q_names;
| n |
| 2 |

USE CATALOG default_catalog;
!ok

SHOW CURRENT CATALOG;
| current catalog name |
| spark_catalog |

USE CATALOG q_no_such_catalog;
!error Catalog q_no_such_catalog does not exist

DROP TABLE default_catalog.default_database.q_names;
!ok
