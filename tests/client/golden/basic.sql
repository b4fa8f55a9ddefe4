-- Statements that succeed, print a table, or print nothing but [INFO].
SET 'sql-client.execution.result-mode' = 'tableau';
SELECT * FROM (VALUES (1, 'Hello'), (2, 'Hi'), (3, NULL)) AS T(a, b);
CREATE OR REPLACE TEMPORARY VIEW golden_basic AS
  SELECT id, id * 2 AS twice, 'row;' || id AS label   -- a ';' inside quotes
  FROM range(3);
SELECT * FROM golden_basic WHERE id > 10;
SELECT count(*) AS n FROM golden_basic;
DESCRIBE golden_basic;
RESET 'sql-client.execution.result-mode';
HELP;
