"""Tokenizer and script splitter: quotes, comments and BEGIN ... END blocks."""

from __future__ import annotations

import random

import pytest

from sparkgate.api.errors import SqlParseError
from sparkgate.sql import (
    TokenKind,
    is_complete,
    split_statements,
    strip_trailing_semicolon,
    tokenize,
    unquote,
)

__all__: list[str] = []

_SCRIPTING_BLOCK = """BEGIN
  DECLARE x INT DEFAULT 0;
  lbl: WHILE x < 3 DO
    IF x = 1 THEN
      SELECT CASE WHEN x > 0 THEN if(x > 1, 1, 2) END;
    ELSEIF x = 2 THEN
      SET VAR x = x + 1;
    ELSE
      BEGIN SELECT 'inner;'; END;
    END IF;
    SET x = x + 1;
  END WHILE lbl;
  CASE x WHEN 3 THEN SELECT 3; ELSE SELECT 0; END CASE;
  REPEAT SET x = x - 1; UNTIL x = 0 END REPEAT;
  l2: LOOP LEAVE l2; END LOOP l2;
  FOR r AS SELECT 1 AS c DO SELECT r.c; END FOR;
END"""


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        pytest.param("SELECT 1; SELECT 2;", ["SELECT 1", "SELECT 2"], id="two"),
        pytest.param("SELECT 1", ["SELECT 1"], id="no-trailing-semicolon"),
        pytest.param("  SELECT 1 ;  \n", ["SELECT 1"], id="whitespace"),
        pytest.param("SELECT 'a;b'; SELECT 2", ["SELECT 'a;b'", "SELECT 2"], id="quote"),
        pytest.param('SELECT "a;b"; SELECT 2', ['SELECT "a;b"', "SELECT 2"], id="double-quote"),
        pytest.param("SELECT `a;b` FROM t; X", ["SELECT `a;b` FROM t", "X"], id="backtick"),
        pytest.param("SELECT `a``;b`; X", ["SELECT `a``;b`", "X"], id="doubled-backtick"),
        pytest.param("SELECT 'it''s;'; X", ["SELECT 'it''s;'", "X"], id="doubled-quote"),
        pytest.param("SELECT 'a\\';b'; X", ["SELECT 'a\\';b'", "X"], id="backslash-quote"),
        pytest.param("SELECT 'a\\\\'; X", ["SELECT 'a\\\\'", "X"], id="escaped-backslash"),
        pytest.param("SELECT r'a\\'; X", ["SELECT r'a\\'", "X"], id="raw-string"),
        pytest.param("SELECT '--x;' AS c; X", ["SELECT '--x;' AS c", "X"], id="dashes-in-string"),
        pytest.param("SELECT 1 -- a; b\n, 2; X", ["SELECT 1 -- a; b\n, 2", "X"], id="line-comment"),
        pytest.param("SELECT 1 -- a; b\n; X", ["SELECT 1", "X"], id="comment-before-semicolon"),
        pytest.param("SELECT /* ; */ 1; X", ["SELECT /* ; */ 1", "X"], id="block-comment"),
        pytest.param(
            "SELECT /* a /* b; */ c; */ 1; X",
            ["SELECT /* a /* b; */ c; */ 1", "X"],
            id="nested-comment",
        ),
        pytest.param(
            "SELECT /*+ REPARTITION(3) */ * FROM t; X",
            ["SELECT /*+ REPARTITION(3) */ * FROM t", "X"],
            id="hint",
        ),
        pytest.param(
            "-- leading\nSELECT 1; -- trailing\n/* only a comment */;",
            ["SELECT 1"],
            id="comments-around-dropped",
        ),
        pytest.param(";;  ; SELECT 1;;", ["SELECT 1"], id="empty-statements"),
        pytest.param("", [], id="empty-script"),
        pytest.param("-- nothing\n/* here */", [], id="comment-only"),
        pytest.param("SELECT 1;\r\nSELECT 2;\r\n", ["SELECT 1", "SELECT 2"], id="crlf"),
        pytest.param(
            "SELECT 1 -- c\r\n, 2;\r\nX", ["SELECT 1 -- c\r\n, 2", "X"], id="crlf-comment"
        ),
        pytest.param(
            "SELECT 1 -- c \\\n; still comment\n, 2; X",
            ["SELECT 1 -- c \\\n; still comment\n, 2", "X"],
            id="line-comment-continuation",
        ),
        pytest.param(
            "SELECT CASE WHEN a THEN 1 ELSE 2 END FROM t; SELECT 2",
            ["SELECT CASE WHEN a THEN 1 ELSE 2 END FROM t", "SELECT 2"],
            id="case-expression",
        ),
        pytest.param(
            "SELECT case_col, t.end, t.begin FROM t; SELECT 2",
            ["SELECT case_col, t.end, t.begin FROM t", "SELECT 2"],
            id="keyword-like-names",
        ),
        pytest.param(
            "SELECT CASE WHEN a THEN 1; SELECT 2",
            ["SELECT CASE WHEN a THEN 1", "SELECT 2"],
            id="unclosed-case-does-not-swallow",
        ),
        pytest.param(
            "EXECUTE STATEMENT SET BEGIN INSERT INTO a VALUES (1); "
            "INSERT INTO b SELECT CASE WHEN x THEN 1 END FROM c; END; SELECT 1",
            [
                (
                    "EXECUTE STATEMENT SET BEGIN INSERT INTO a VALUES (1); "
                    "INSERT INTO b SELECT CASE WHEN x THEN 1 END FROM c; END"
                ),
                "SELECT 1",
            ],
            id="execute-statement-set",
        ),
        pytest.param(
            "execute statement set\nbegin\n  insert into a values (1);\nend;",
            ["execute statement set\nbegin\n  insert into a values (1);\nend"],
            id="execute-statement-set-lower-case",
        ),
        pytest.param(
            "BEGIN STATEMENT SET;\nINSERT INTO a VALUES (1);\nINSERT INTO b VALUES (2);\nEND;",
            ["BEGIN STATEMENT SET", "INSERT INTO a VALUES (1)", "INSERT INTO b VALUES (2)", "END"],
            id="begin-statement-set",
        ),
        pytest.param(
            _SCRIPTING_BLOCK + ";\nSELECT 'after'",
            [_SCRIPTING_BLOCK, "SELECT 'after'"],
            id="scripting-block",
        ),
        pytest.param(
            "lbl: BEGIN SELECT 1; SELECT 2; END lbl; SELECT 3",
            ["lbl: BEGIN SELECT 1; SELECT 2; END lbl", "SELECT 3"],
            id="labelled-block",
        ),
        pytest.param(
            "BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN SELECT 1; END; SELECT 2; END; X",
            [
                "BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN SELECT 1; END; SELECT 2; END",
                "X",
            ],
            id="handler-block",
        ),
        pytest.param(
            "SELECT begin, end FROM t; SELECT 2",
            ["SELECT begin, end FROM t", "SELECT 2"],
            id="begin-end-as-columns",
        ),
        pytest.param("BEGIN; SELECT 1", ["BEGIN", "SELECT 1"], id="bare-begin-is-no-block"),
        pytest.param(
            "SELECT * FROM t /*+ OPTIONS('k'='v') */; SELECT 2 /* note */;",
            ["SELECT * FROM t /*+ OPTIONS('k'='v') */", "SELECT 2"],
            id="a-hint-ending-a-statement-is-its-own",
        ),
    ],
)
def test_split_statements(script: str, expected: list[str]) -> None:
    assert split_statements(script) == expected


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("SELECT 'abc; SELECT 2;", "unterminated string literal starting at line 1, column 8"),
        ('SELECT 1;\nSELECT "x', "unterminated string literal starting at line 2, column 8"),
        ("SELECT `abc", "unterminated quoted identifier starting at line 1, column 8"),
        ("SELECT 1; /* a /* b */", "unterminated block comment starting at line 1, column 11"),
        ("SELECT 'a\\'", "unterminated string literal"),
    ],
)
def test_split_statements_reports_unterminated(script: str, message: str) -> None:
    with pytest.raises(SqlParseError, match=message):
        split_statements(script)


@pytest.mark.parametrize(
    ("text", "complete"),
    [
        ("SELECT 1;", True),
        ("SELECT 1;  \n", True),
        ("SELECT 1; -- done", True),
        ("SELECT 1; /* done */", True),
        ("SELECT 1", False),
        ("SELECT 1; SELECT 2", False),
        ("", False),
        ("-- only a comment;", False),
        ("SELECT 'a;", False),
        ("SELECT 'a;'", False),
        ("SELECT /* ; ", False),
        ("SELECT `x;", False),
        ("BEGIN STATEMENT SET;", True),
        ("END;", True),
        ("EXECUTE STATEMENT SET BEGIN INSERT INTO a VALUES (1);", False),
        ("EXECUTE STATEMENT SET BEGIN INSERT INTO a VALUES (1); END", False),
        ("EXECUTE STATEMENT SET BEGIN INSERT INTO a VALUES (1); END;", True),
        ("BEGIN IF x THEN SELECT 1; END IF;", False),
        ("BEGIN IF x THEN SELECT 1; END IF; END;", True),
        ("SELECT CASE WHEN a THEN 1 END;", True),
        ("SELECT 1;\r\n", True),
    ],
)
def test_is_complete(text: str, complete: bool) -> None:
    assert is_complete(text) is complete


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("SELECT 1;", "SELECT 1"),
        ("  SELECT 1 ;  ", "SELECT 1"),
        ("SELECT 1;; -- c", "SELECT 1"),
        ("SELECT 1", "SELECT 1"),
        ("SELECT ';'", "SELECT ';'"),
        ("SELECT 1 -- ;", "SELECT 1 -- ;"),
        (";", ""),
    ],
)
def test_strip_trailing_semicolon(statement: str, expected: str) -> None:
    assert strip_trailing_semicolon(statement) == expected


def test_tokenize_kinds_and_offsets() -> None:
    text = "SELECT a.`b``c`, 'x''y' /* c */ FROM t -- end\nWHERE n >= 1.5e3;"
    tokens = tokenize(text)
    assert [(t.kind, t.text) for t in tokens] == [
        (TokenKind.WORD, "SELECT"),
        (TokenKind.WORD, "a"),
        (TokenKind.DOT, "."),
        (TokenKind.QUOTED_IDENTIFIER, "`b``c`"),
        (TokenKind.COMMA, ","),
        (TokenKind.STRING, "'x''y'"),
        (TokenKind.BLOCK_COMMENT, "/* c */"),
        (TokenKind.WORD, "FROM"),
        (TokenKind.WORD, "t"),
        (TokenKind.LINE_COMMENT, "-- end"),
        (TokenKind.WORD, "WHERE"),
        (TokenKind.WORD, "n"),
        (TokenKind.OPERATOR, ">="),
        (TokenKind.NUMBER, "1.5e3"),
        (TokenKind.SEMICOLON, ";"),
    ]
    assert all(text[t.start : t.end] == t.text for t in tokens)
    assert all(t.terminated for t in tokens)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("10L", TokenKind.NUMBER),
        ("1.5BD", TokenKind.NUMBER),
        ("2023_data", TokenKind.WORD),
        ("=", TokenKind.EQUALS),
        ("==", TokenKind.OPERATOR),
        ("<=>", TokenKind.OPERATOR),
        ("(", TokenKind.LPAREN),
        (")", TokenKind.RPAREN),
        ("/*+ hint */", TokenKind.BLOCK_COMMENT),
    ],
)
def test_tokenize_single_token(text: str, kind: TokenKind) -> None:
    [token] = tokenize(text)
    assert (token.kind, token.text) == (kind, text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("'abc", TokenKind.STRING),
        ('"abc\\"', TokenKind.STRING),
        ("`abc", TokenKind.QUOTED_IDENTIFIER),
        ("/* a /* b */", TokenKind.BLOCK_COMMENT),
        ("r'abc", TokenKind.STRING),
    ],
)
def test_tokenize_marks_unterminated(text: str, kind: TokenKind) -> None:
    [token] = tokenize(text)
    assert (token.kind, token.terminated, token.end) == (kind, False, len(text))


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ("'plain'", "plain"),
        ("'it''s'", "it's"),
        ("'it\\'s'", "it's"),
        ('"say ""hi"""', 'say "hi"'),
        ("'a\\nb\\tc'", "a\nb\tc"),
        ("'back\\\\slash'", "back\\slash"),
        ("'\\u0041\\101'", "AA"),
        ("'100\\%'", "100\\%"),
        ("'\\q'", "q"),
        ("r'C:\\new'", "C:\\new"),
        ("`a``b`", "a`b"),
    ],
)
def test_unquote(literal: str, value: str) -> None:
    [token] = tokenize(literal)
    assert unquote(token) == value


def test_tokenize_and_split_never_crash_on_random_text() -> None:
    """Fragments glued at random: tokens must tile the text and splitting must agree."""
    fragments = [
        "'",
        '"',
        "`",
        "''",
        "\\",
        "--",
        "\n",
        "\r\n",
        "/*",
        "*/",
        "/*+",
        ";",
        "=",
        "(",
        ")",
        "BEGIN",
        "END",
        "CASE",
        "IF",
        "WHILE",
        "STATEMENT",
        "SET",
        "EXECUTE",
        " ",
        "x",
        "1.5",
        "r'",
        "²",
        "é",
        ":",
        "<=>",
        ".",
    ]
    rng = random.Random(20240601)
    for _ in range(2000):
        text = "".join(rng.choice(fragments) for _ in range(rng.randint(0, 30)))
        tokens = tokenize(text)
        position = 0
        for token in tokens:
            assert text[position : token.start].strip() == ""
            assert text[token.start : token.end] == token.text != ""
            position = token.end
        assert text[position:].strip() == ""
        complete = is_complete(text)
        if any(not t.terminated for t in tokens):
            assert not complete
            with pytest.raises(SqlParseError, match="unterminated"):
                split_statements(text)
        else:
            statements = split_statements(text)
            assert all(s == s.strip() and s for s in statements)


def test_splitting_a_long_script_takes_linear_time() -> None:
    # Each statement's end is found from its own last token, not from the start.
    statements = split_statements("INSERT INTO t VALUES (1);\n" * 20_000)
    assert len(statements) == 20_000
