SELECT
  true AS b, CAST(7 AS TINYINT) AS ti, CAST(123456789012 AS BIGINT) AS bi,
  CAST(1.50 AS DECIMAL(5, 2)) AS dec, 1.0E10D AS dbl, CAST(0.5 AS FLOAT) AS f;
SELECT DATE '2024-02-29' AS d, TIMESTAMP_NTZ '2024-02-29 12:34:56.789' AS ts,
  X'CAFE' AS bin, array(1, 2, NULL) AS arr, map('k', 1) AS m,
  named_struct('x', 1, 'y', 'z') AS st;
