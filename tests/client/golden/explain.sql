EXPLAIN SELECT id FROM range(3);
CREATE TABLE golden_explain_t (id INT, name STRING) USING parquet;
SHOW CREATE TABLE golden_explain_t;
DROP TABLE golden_explain_t;
