-- expect: failure
SET 'sql-client.verbose' = 'true';
SELECT * FROM golden_no_such_table;
