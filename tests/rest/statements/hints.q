# Flink's dynamic table options: an OPTIONS hint after a table's name overrides
# its options for this read only, checked as CREATE TABLE checks them.
CREATE TEMPORARY TABLE q_five (id INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
!ok

SELECT count(*) AS n FROM q_five /*+ OPTIONS('number-of-rows' = '3') */;
| n |
| 3 |

SELECT count(*) AS n FROM q_five /*+ OPTIONS('number-of-rows'='2') */ AS f WHERE f.id IS NOT NULL;
| n |
| 2 |

SELECT count(*) AS n FROM q_five;
| n |
| 5 |

SELECT count(*) AS n FROM q_five /*+ OPTIONS('bogus' = '1') */;
!error Unsupported option 'bogus' for connector 'datagen'

SELECT count(*) AS n FROM q_five /*+ OPTIONS('number-of-rows') */;
!error An OPTIONS hint takes 'key' = 'value' pairs

# On a table of Spark's the hint has no options to change: it is taken out.
SELECT count(*) AS n FROM range(4) /*+ OPTIONS('a' = 'b') */ AS r;
| n |
| 4 |

# Spark's own hints stay Spark's.
SELECT /*+ REPARTITION(2) */ count(*) AS n FROM q_five;
| n |
| 5 |
