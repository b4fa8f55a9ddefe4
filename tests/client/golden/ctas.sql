-- CREATE TABLE AS / REPLACE TABLE AS and catalogs, as the client shows them.
DROP TABLE IF EXISTS golden_ctas;
CREATE TABLE golden_ctas AS SELECT id, CAST(id AS DECIMAL(10, 2)) AS amount FROM range(3);
SELECT * FROM golden_ctas;
CREATE TABLE IF NOT EXISTS golden_ctas AS SELECT 1 AS one;
SET 'table.rtas-ctas.atomicity-enabled' = 'true';
REPLACE TABLE golden_ctas AS SELECT 'new' AS tag;
SELECT * FROM golden_ctas;
RESET 'table.rtas-ctas.atomicity-enabled';
DROP TABLE golden_ctas;
CREATE CATALOG IF NOT EXISTS golden_mem COMMENT 'scratch' WITH ('type' = 'generic_in_memory');
DESCRIBE CATALOG golden_mem;
DROP CATALOG golden_mem;
