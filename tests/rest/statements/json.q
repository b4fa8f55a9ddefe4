# Flink's JSON functions, with the answers of Flink's function reference.
SELECT '1' IS JSON AS a, '[]' IS JSON AS b, '{}' IS JSON AS c, '"abc"' IS JSON AS d, 'abc' IS JSON AS e, CAST(NULL AS STRING) IS JSON AS f, 'abc' IS NOT JSON AS g;
| a | b | c | d | e | f | g |
| TRUE | TRUE | TRUE | TRUE | FALSE | FALSE | TRUE |

SELECT '1' IS JSON SCALAR AS a, '1' IS JSON ARRAY AS b, '1' IS JSON OBJECT AS c, '{}' IS JSON SCALAR AS d, '{}' IS JSON ARRAY AS e, '{}' IS JSON OBJECT AS f, '[1]' IS JSON VALUE AS g;
| a | b | c | d | e | f | g |
| TRUE | FALSE | FALSE | FALSE | FALSE | TRUE | TRUE |

SELECT j, j IS JSON OBJECT AS o FROM (VALUES ('{"k": 1}'), ('[1, 2]'), ('x')) AS t(j) WHERE j IS JSON;
| j | o |
| {"k": 1} | TRUE |
| [1, 2] | FALSE |

SELECT JSON_EXISTS('{"a": true}', '$.a') AS a, JSON_EXISTS('{"a": true}', '$.b') AS b, JSON_EXISTS('{"a": [{ "b": 1 }]}', '$.a[0].b') AS c, JSON_EXISTS('{"a": true}', 'strict $.b' FALSE ON ERROR) AS d, JSON_EXISTS('x', '$.a' TRUE ON ERROR) AS e;
| a | b | c | d | e |
| TRUE | FALSE | TRUE | FALSE | TRUE |

SELECT JSON_STRING(CAST(NULL AS INT)) AS a, JSON_STRING(1) AS b, JSON_STRING(TRUE) AS c, JSON_STRING('Hello, World!') AS d, JSON_STRING(ARRAY[1, 2]) AS e;
| a | b | c | d | e |
| NULL | 1 | true | "Hello, World!" | [1,2] |

SELECT JSON_VALUE('{"a": true}', '$.a') AS a, JSON_VALUE('{"a": true}', '$.a' RETURNING BOOLEAN) AS b, JSON_VALUE('{"a": true}', 'lax $.b' DEFAULT FALSE ON EMPTY) AS c, JSON_VALUE('{"a.b": [0.998,0.996]}', '$.["a.b"][0]' RETURNING DOUBLE) AS d;
| a | b | c | d |
| true | TRUE | FALSE | 0.998 |

SELECT JSON_VALUE('{"contains blank": "right"}', 'strict $.[''contains blank'']' NULL ON EMPTY DEFAULT 'wrong' ON ERROR) AS r, JSON_VALUE('{"a": "x"}', '$.a' RETURNING INT DEFAULT -1 ON ERROR) AS e, JSON_VALUE('{}', '$.a' RETURNING INT DEFAULT -2 ON EMPTY) AS m;
| r | e | m |
| right | -1 | -2 |

SELECT JSON_VALUE('{}', '$.a' ERROR ON EMPTY) AS v;
!error JSON_VALUE: no value at \$\.a

SELECT JSON_QUERY('{"a":[{"c":"c1"},{"c":"c2"}]}', 'lax $.a[*].c') AS q;
| q |
| ["c1","c2"] |

# JSON_QUERY as Flink's page shows it: a scalar needs a wrapper; ON EMPTY / ON ERROR.
SELECT JSON_QUERY('{ "a": { "b": 1 } }', '$.a') AS a, JSON_QUERY('[1, 2]', '$') AS b, JSON_QUERY(CAST(NULL AS STRING), '$') AS c, JSON_QUERY(1, '$') AS d;
| a | b | c | d |
| {"b":1} | [1,2] | NULL | NULL |

SELECT JSON_QUERY('{}', '$' WITH CONDITIONAL ARRAY WRAPPER) AS a, JSON_QUERY('[1, 2]', '$' WITH CONDITIONAL ARRAY WRAPPER) AS b, JSON_QUERY('[1, 2]', '$' WITH UNCONDITIONAL ARRAY WRAPPER) AS c, JSON_QUERY(1, '$' WITH CONDITIONAL ARRAY WRAPPER) AS d, JSON_QUERY('{"x":"s"}', '$.x' WITH WRAPPER) AS e;
| a | b | c | d | e |
| [{}] | [1,2] | [[1,2]] | [1] | ["s"] |

SELECT JSON_QUERY('{}', 'lax $.invalid' EMPTY OBJECT ON EMPTY) AS a, JSON_QUERY('{}', 'strict $.invalid' EMPTY ARRAY ON ERROR) AS b, JSON_QUERY('not json', '$' EMPTY ARRAY ON ERROR) AS c;
| a | b | c |
| {} | [] | [] |

SELECT JSON_QUERY('{"a":1}', '$.a' ERROR ON ERROR) AS q;
!error JSON_QUERY: a scalar at \$\.a needs a WRAPPER

SELECT JSON_QUERY('{"a":[{"c":"c1"},{"c":"c2"}]}', 'lax $.a[*].c' RETURNING ARRAY<STRING>) AS q;
| q |
| ['c1', 'c2'] |

SELECT JSON_OBJECT() AS a, JSON_OBJECT('K1' VALUE 'V1', 'K2' VALUE 'V2') AS b, JSON_OBJECT(KEY 'K1' VALUE CAST(NULL AS STRING) NULL ON NULL) AS c, JSON_OBJECT(KEY 'K1' VALUE CAST(NULL AS STRING) ABSENT ON NULL) AS d, JSON_OBJECT(KEY 'K1' VALUE JSON_OBJECT(KEY 'K2' VALUE 'V')) AS e;
| a | b | c | d | e |
| {} | {"K1":"V1","K2":"V2"} | {"K1":null} | {} | {"K1":{"K2":"V"}} |

SELECT JSON_ARRAY() AS a, JSON_ARRAY(1, '2') AS b, JSON_ARRAY(CAST(NULL AS STRING) NULL ON NULL) AS c, JSON_ARRAY(CAST(NULL AS STRING) ABSENT ON NULL) AS d, JSON_ARRAY(JSON_ARRAY(1)) AS e;
| a | b | c | d | e |
| [] | [1,"2"] | [null] | [] | [[1]] |

SELECT JSON_OBJECT('orderNo' VALUE id, 'items' VALUE JSON_ARRAY(a, b)) AS o FROM (VALUES (7, 'x', CAST(NULL AS STRING))) AS t(id, a, b);
| o |
| {"orderNo":7,"items":["x"]} |

SELECT JSON_ARRAYAGG(product) AS a, JSON_OBJECTAGG(KEY product VALUE cnt) AS o FROM (VALUES ('Apple', 2), ('Banana', 17), ('Orange', 0)) AS orders(product, cnt);
| a | o |
| ["Apple","Banana","Orange"] | {"Apple":2,"Banana":17,"Orange":0} |

SELECT JSON_QUOTE('a"b') AS q, JSON_UNQUOTE(JSON_QUOTE('a"b')) AS u, JSON_UNQUOTE('[1]') AS k;
| q | u | k |
| "a\"b" | a"b | [1] |
