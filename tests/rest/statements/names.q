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

# A temporary table is listed with the current database's tables, not with another's.
CREATE DATABASE q_names_other;
!ok

CREATE TEMPORARY TABLE q_names_temp (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
!ok

SHOW TABLES LIKE 'q_names%';
| table name |
| q_names_temp |

SHOW TABLES FROM default_catalog.default_database LIKE 'q_names%';
| table name |
| q_names_temp |

SHOW TABLES IN q_names_other;
| table name |

DROP TEMPORARY TABLE q_names_temp;
!ok

DROP DATABASE q_names_other;
!ok
