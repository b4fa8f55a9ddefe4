# Databases in Flink's syntax: WITH options are the database's properties; the
# database in use cannot be dropped.
create database q_db1 comment 'db1 comment' with ('k1' = 'v1');
!ok

create database if not exists q_db1 with ('k1' = 'other');
!ok

alter database q_db1 set ('k1' = 'a', 'k2' = 'b');
!ok

describe database extended q_db1;
| info_name | info_value |
| Catalog Name | spark_catalog |
| Namespace Name | q_db1 |
| Comment | db1 comment |
~ \| Location \| .* \|
~ \| Owner \| .* \|
| Properties | ((k1,a), (k2,b)) |

use q_db1;
!ok

drop database q_db1;
!error Cannot drop a database which is currently in use

use `default`;
!ok

drop database q_db1 restrict;
!ok

show databases like 'q_db%';
| database name |
