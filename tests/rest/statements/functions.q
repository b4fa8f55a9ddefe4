# Flink's function statements: TEMPORARY [SYSTEM] functions are the session's, LANGUAGE
# JAVA/SCALA name a JVM class, ALTER replaces the class; models have no meaning on Spark.
CREATE TEMPORARY FUNCTION q_f1 AS 'org.apache.hadoop.hive.ql.udf.UDFPI' LANGUAGE JAVA;
!ok

SELECT round(q_f1(), 3) AS v;
| v |
| 3.142 |

CREATE TEMPORARY FUNCTION IF NOT EXISTS q_f1 AS 'org.apache.hadoop.hive.ql.udf.UDFE';
!ok

CREATE TEMPORARY SYSTEM FUNCTION q_f2 AS 'org.apache.hadoop.hive.ql.udf.UDFE' LANGUAGE SCALA;
!ok

ALTER TEMPORARY FUNCTION q_f1 AS 'org.apache.hadoop.hive.ql.udf.UDFE';
!ok

SELECT round(q_f1(), 3) AS a, round(q_f2(), 3) AS b;
| a | b |
| 2.718 | 2.718 |

SHOW USER FUNCTIONS LIKE 'q_f%';
| function name |
| q_f1 |
| q_f2 |

DESCRIBE FUNCTION q_f1;
| info name | info value |
| is system function | false |
| is temporary | true |
| class name | org.apache.hadoop.hive.ql.udf.UDFE |
| function language | JAVA |
| resource uris | [] |

DESC FUNCTION EXTENDED lower;
| info name | info value |
| is system function | true |
| is temporary | false |
| kind | SCALAR |
| requirements | [] |
| is deterministic | true |
| supports constant folding | true |
| signature | lower(str) |

DESCRIBE FUNCTION q_nope;
!error Function with the identifier 'q_nope' doesn't exist.

ALTER FUNCTION q_nope AS 'x';
!error Function q_nope does not exist

ALTER FUNCTION IF EXISTS q_nope AS 'x';
!ok

CREATE FUNCTION q_f3 AS 'udfs.double' LANGUAGE PYTHON;
!error LANGUAGE PYTHON is not supported

# A temporary catalog function, as Flink's: listed in its catalog and database only
# (a temporary system function everywhere).
CREATE DATABASE q_fdb;
!ok

CREATE TEMPORARY FUNCTION q_fdb.q_f4 AS 'org.apache.hadoop.hive.ql.udf.UDFPI';
!ok

CREATE TEMPORARY SYSTEM FUNCTION q_fdb.q_f5 AS 'org.apache.hadoop.hive.ql.udf.UDFPI';
!error A temporary system function lives in the session: its name has one part, not q_fdb\.q_f5

SHOW USER FUNCTIONS LIKE 'q_f%';
| function name |
| q_f1 |
| q_f2 |

SHOW USER FUNCTIONS FROM q_fdb LIKE 'q_f%';
| function name |
| q_f2 |
| q_f4 |

SELECT round(q_f4(), 2) AS pi;
| pi |
| 3.14 |

SELECT round(q_fdb.q_f4(), 2) AS a, round(spark_catalog.q_fdb.q_f4(), 2) AS b;
| a | b |
| 3.14 | 3.14 |

SELECT `default`.q_f4();
!error UNRESOLVED_ROUTINE

DROP TEMPORARY FUNCTION q_fdb.q_f4;
!ok

DROP DATABASE q_fdb;
!ok

DROP TEMPORARY SYSTEM FUNCTION q_f2;
!ok

DROP TEMPORARY FUNCTION IF EXISTS q_f2;
!ok

DROP TEMPORARY FUNCTION q_f1;
!ok

SHOW USER FUNCTIONS LIKE 'q_f%';
| function name |

CREATE MODEL q_m INPUT (a STRING) OUTPUT (b STRING) WITH ('provider' = 'openai');
!error CREATE MODEL is not supported on Spark: Spark has no model catalog

SHOW MODELS;
!error SHOW MODELS is not supported on Spark
