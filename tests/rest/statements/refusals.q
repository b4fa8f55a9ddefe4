# Forms Flink's grammar or validation refuses are refused here too, with its words.
EXECUTE STATEMENT SET BEGIN
END;
!error expected INSERT between BEGIN and END of EXECUTE STATEMENT SET

CREATE CATALOG q_reset_cat WITH ('type' = 'generic_in_memory');
!ok

ALTER CATALOG q_reset_cat RESET ();
!error ALTER CATALOG RESET does not support empty key

DROP CATALOG q_reset_cat;
!ok

# Query forms with no meaning on Spark are refused by name, not by Spark's parser.
CREATE TEMPORARY VIEW q_orders AS SELECT 1 AS id, TIMESTAMP '2024-01-01 00:00:00' AS ts;
!ok

SELECT * FROM q_orders MATCH_RECOGNIZE (ORDER BY ts MEASURES A.id AS x PATTERN (A) DEFINE A AS A.id > 0);
!error MATCH_RECOGNIZE is not supported on Spark: Spark SQL has no row pattern recognition

SELECT o.id FROM q_orders AS o JOIN q_orders FOR SYSTEM_TIME AS OF o.ts AS r ON o.id = r.id;
!error A temporal join \(FOR SYSTEM_TIME AS OF a column of the other table\) is not supported on Spark

# A constant point in time is Spark's time travel, which this view cannot do.
SELECT * FROM q_orders FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01 00:00:00';
!error UNSUPPORTED_FEATURE\.TIME_TRAVEL
