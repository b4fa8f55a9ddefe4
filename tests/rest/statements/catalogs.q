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

USE CATALOG spark_catalog;
!ok

DROP CATALOG q_mem;
!ok
