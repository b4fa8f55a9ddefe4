# Flink's internal option '$internal.pipeline.job-id' gives the next job its id, as
# Flink's own tests and clients use it; an id in use is refused (a malformed one is
# refused as it is submitted: tests/unit/test_options.py).
CREATE TABLE q_sink (a INT, b STRING) WITH ('connector' = 'blackhole');
!ok

SET '$internal.pipeline.job-id' = 'a5513ca0a886c6c9bafaf3acac43bfa5';
!ok

EXECUTE STATEMENT SET BEGIN INSERT INTO q_sink VALUES (1, 'x'); INSERT INTO q_sink VALUES (2, 'y'); END;
| job id |
| a5513ca0a886c6c9bafaf3acac43bfa5 |

INSERT INTO q_sink VALUES (3, 'z');
!error Job a5513ca0a886c6c9bafaf3acac43bfa5 already exists

SET '$internal.pipeline.job-id' = '2E2DC0A5A6315296062BA81EBA340668';
!ok

INSERT INTO q_sink VALUES (3, 'z');
| job id |
| 2e2dc0a5a6315296062ba81eba340668 |

RESET '$internal.pipeline.job-id';
!ok

INSERT INTO q_sink VALUES (4, 'w');
| job id |
~ \| [0-9a-f]{32} \|

drop table q_sink;
!ok
