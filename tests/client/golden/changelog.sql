SET 'sql-client.execution.result-mode' = 'changelog';
SELECT id, CAST(id AS STRING) AS s FROM range(3);
SELECT id FROM range(0);
