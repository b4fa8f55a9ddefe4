# Flink's windowing table functions and group window functions, in batch mode.
CREATE TEMPORARY VIEW bids AS SELECT * FROM VALUES
  (TIMESTAMP '2020-04-15 08:05:00', 4, 'C'), (TIMESTAMP '2020-04-15 08:07:00', 2, 'A'),
  (TIMESTAMP '2020-04-15 08:09:00', 5, 'D'), (TIMESTAMP '2020-04-15 08:11:00', 3, 'B'),
  (TIMESTAMP '2020-04-15 08:13:00', 1, 'E'), (TIMESTAMP '2020-04-15 08:17:00', 6, 'F')
  AS t(bidtime, price, item);
!ok

SELECT window_start, window_end, SUM(price) AS total
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end ORDER BY window_start;
| window_start | window_end | total |
| 2020-04-15T08:00:00Z | 2020-04-15T08:10:00Z | 11 |
| 2020-04-15T08:10:00Z | 2020-04-15T08:20:00Z | 10 |

# Every column of the table, then window_start, window_end and window_time.
SELECT * FROM TABLE(TUMBLE(DATA => TABLE bids, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTES)) WHERE item = 'B';
| bidtime | price | item | window_start | window_end | window_time |
| 2020-04-15T08:11:00Z | 3 | B | 2020-04-15T08:10:00Z | 2020-04-15T08:20:00Z | 2020-04-15T08:19:59.999999Z |

# HOP(slide, size): each row in size / slide windows.
SELECT window_start, window_end, SUM(price) AS total
FROM TABLE(HOP(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
GROUP BY window_start, window_end ORDER BY window_start;
| window_start | window_end | total |
| 2020-04-15T08:00:00Z | 2020-04-15T08:10:00Z | 11 |
| 2020-04-15T08:05:00Z | 2020-04-15T08:15:00Z | 15 |
| 2020-04-15T08:10:00Z | 2020-04-15T08:20:00Z | 10 |
| 2020-04-15T08:15:00Z | 2020-04-15T08:25:00Z | 6 |

# CUMULATE(step, size): windows growing by step from the start of each size.
SELECT window_start, window_end, SUM(price) AS total
FROM TABLE(CUMULATE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))
GROUP BY window_start, window_end ORDER BY window_start, window_end;
| window_start | window_end | total |
| 2020-04-15T08:00:00Z | 2020-04-15T08:06:00Z | 4 |
| 2020-04-15T08:00:00Z | 2020-04-15T08:08:00Z | 6 |
| 2020-04-15T08:00:00Z | 2020-04-15T08:10:00Z | 11 |
| 2020-04-15T08:10:00Z | 2020-04-15T08:12:00Z | 3 |
| 2020-04-15T08:10:00Z | 2020-04-15T08:14:00Z | 4 |
| 2020-04-15T08:10:00Z | 2020-04-15T08:16:00Z | 4 |
| 2020-04-15T08:10:00Z | 2020-04-15T08:18:00Z | 10 |
| 2020-04-15T08:10:00Z | 2020-04-15T08:20:00Z | 10 |

# A table function over a query, with an offset, and the keys qualified.
SELECT w.window_start, count(*) AS n
FROM TABLE(TUMBLE(TABLE (SELECT * FROM bids WHERE price > 1), DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '5' MINUTES)) AS w
GROUP BY w.window_start, w.window_end ORDER BY 1;
| window_start | n |
| 2020-04-15T08:05:00Z | 4 |
| 2020-04-15T08:15:00Z | 1 |

# Flink's group window functions.
SELECT TUMBLE_START(bidtime, INTERVAL '10' MINUTE) AS s, TUMBLE_END(bidtime, INTERVAL '10' MINUTE) AS e, TUMBLE_ROWTIME(bidtime, INTERVAL '10' MINUTE) AS r, count(*) AS n
FROM bids GROUP BY TUMBLE(bidtime, INTERVAL '10' MINUTE) ORDER BY s;
| s | e | r | n |
| 2020-04-15T08:00:00Z | 2020-04-15T08:10:00Z | 2020-04-15T08:09:59.999999Z | 3 |
| 2020-04-15T08:10:00Z | 2020-04-15T08:20:00Z | 2020-04-15T08:19:59.999999Z | 3 |

SELECT HOP_END(bidtime, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE) AS e, SUM(price) AS total
FROM bids GROUP BY HOP(bidtime, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE) ORDER BY e;
| e | total |
| 2020-04-15T08:10:00Z | 11 |
| 2020-04-15T08:15:00Z | 15 |
| 2020-04-15T08:20:00Z | 10 |
| 2020-04-15T08:25:00Z | 6 |

SELECT SESSION_START(bidtime, INTERVAL '3' MINUTE) AS s, SESSION_END(bidtime, INTERVAL '3' MINUTE) AS e, count(*) AS n
FROM bids GROUP BY SESSION(bidtime, INTERVAL '3' MINUTE) ORDER BY s;
| s | e | n |
| 2020-04-15T08:05:00Z | 2020-04-15T08:16:00Z | 5 |
| 2020-04-15T08:17:00Z | 2020-04-15T08:20:00Z | 1 |

# What Spark cannot do is refused, naming the way that works.
SELECT * FROM TABLE(SESSION(TABLE bids PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES));
!error The SESSION window table function is not supported on Spark.*GROUP BY SESSION\(ts

SELECT * FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '1:30' HOUR TO MINUTE));
!error TUMBLE's size must be an interval literal of one unit

SELECT * FROM TABLE(CUMULATE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '3' MINUTES, INTERVAL '10' MINUTES));
!error CUMULATE's size must be a whole multiple of its step

SELECT * FROM TABLE(TUMBLE(TABLE bids, bidtime, INTERVAL '10' MINUTES));
!error TUMBLE's time column is given as DESCRIPTOR\(column\)
