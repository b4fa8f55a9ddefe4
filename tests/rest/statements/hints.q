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

# After an INSERT's target: the target's options for this INSERT.
CREATE TEMPORARY TABLE q_out (id INT) WITH ('connector' = 'blackhole');
!ok

INSERT INTO q_out /*+ OPTIONS('bogus' = '1') */ SELECT id FROM q_five;
!error Unsupported option 'bogus' for connector 'blackhole'

INSERT INTO q_out /*+ OPTIONS('connector' = 'datagen') */ SELECT id FROM q_five;
!error Connector 'datagen' can only be used as a source, not as a sink

INSERT INTO q_out /*+ OPTIONS('connector' = 'print', 'print-identifier' = 'hinted') */ SELECT id FROM q_five;
| job id |
~ \| [0-9a-f]{32} \|

INSERT INTO q_out (id) /*+ OPTIONS('a' = 'b') */ SELECT id FROM q_five;
!error An INSERT's OPTIONS hint follows its target table's name
