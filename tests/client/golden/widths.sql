SET 'sql-client.display.max-column-width' = '10';
SELECT 'abcdefghijklmnopqrstuvwxyz' AS long_text, 'short' AS s, '日本語テキストです' AS wide;
SET 'execution.runtime-mode' = 'streaming';
SELECT 'abcdefghijklmnopqrstuvwxyz' AS long_text, 'short' AS s, '日本語テキストです' AS wide;
SET 'sql-client.display.max-column-width' = '30';
SELECT 'abcdefghijklmnopqrstuvwxyz' AS long_text;
