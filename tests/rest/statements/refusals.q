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
