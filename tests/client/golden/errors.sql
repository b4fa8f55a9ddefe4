-- expect: failure
SELECT 1 AS one;
SELECT no_such_column FROM range(1);
SELECT 'never runs' AS s;
