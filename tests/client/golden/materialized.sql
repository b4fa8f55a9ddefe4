-- Materialized tables in FULL mode, as the client shows them.
DROP MATERIALIZED TABLE IF EXISTS golden_mt;
DROP TABLE IF EXISTS golden_mt_orders;
CREATE TABLE golden_mt_orders (id INT, amount DECIMAL(10, 2), day DATE) USING parquet;
INSERT INTO golden_mt_orders VALUES (1, 9.99, DATE '2026-11-25'), (2, 20.01, DATE '2026-11-25'), (3, 5.50, DATE '2026-11-26');
CREATE MATERIALIZED TABLE golden_mt COMMENT 'sales per day' FRESHNESS = INTERVAL '1' DAY AS SELECT day, sum(amount) AS total, count(*) AS orders FROM golden_mt_orders GROUP BY day;
ALTER MATERIALIZED TABLE golden_mt REFRESH;
SELECT * FROM golden_mt ORDER BY day;
SHOW MATERIALIZED TABLES LIKE 'golden%';
DESCRIBE golden_mt;
SHOW CREATE MATERIALIZED TABLE golden_mt;
ALTER MATERIALIZED TABLE golden_mt SUSPEND;
ALTER MATERIALIZED TABLE golden_mt RESUME;
DROP MATERIALIZED TABLE golden_mt;
DROP TABLE golden_mt_orders;
