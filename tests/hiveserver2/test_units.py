"""Unit tests of the HiveServer2 endpoint's pieces (no Spark)."""

from __future__ import annotations

import io
import socket
import struct
import threading
from pathlib import Path

import pyarrow as pa
import pytest
from TCLIService import ttypes

from sparkgate.api.config import Configuration
from sparkgate.api.errors import ConfigurationError
from sparkgate.api.types import (
    BIGINT,
    DOUBLE,
    INT,
    STRING,
    ArrayType,
    CharType,
    DecimalType,
    LocalZonedTimestampType,
    LogicalType,
    MapType,
    ResultSchema,
    RowField,
    RowType,
    TimeType,
    VarCharType,
)
from sparkgate.endpoints.hiveserver2.hive_types import hive_type
from sparkgate.endpoints.hiveserver2.metadata import pattern_matcher
from sparkgate.endpoints.hiveserver2.options import AuthMode, HiveServer2Settings, TransportMode
from sparkgate.endpoints.hiveserver2.rowset import null_bitmap, to_row_set
from sparkgate.endpoints.hiveserver2.sasl import AuthenticationError, negotiate_plain
from sparkgate.security import passwords
from tests.doubles import FakeGatewayService

T = ttypes.TTypeId


@pytest.mark.parametrize(
    ("logical", "type_id", "name", "java"),
    [
        (INT, T.INT_TYPE, "INT", 4),
        (BIGINT, T.BIGINT_TYPE, "BIGINT", -5),
        (STRING, T.STRING_TYPE, "STRING", 12),
        (VarCharType(10), T.VARCHAR_TYPE, "VARCHAR(10)", 12),
        (CharType(3), T.CHAR_TYPE, "CHAR(3)", 1),
        (DecimalType(12, 4), T.DECIMAL_TYPE, "DECIMAL(12,4)", 3),
        (LocalZonedTimestampType(6), T.TIMESTAMP_TYPE, "TIMESTAMP", 93),
        (ArrayType(INT), T.ARRAY_TYPE, "array<int>", 2003),
        (MapType(STRING, DOUBLE), T.MAP_TYPE, "map<string,double>", 2000),
        (RowType((RowField("a", INT),)), T.STRUCT_TYPE, "struct<a:int>", 2002),
        (TimeType(3), T.STRING_TYPE, "STRING", 12),
    ],
)
def test_hive_types(logical: LogicalType, type_id: int, name: str, java: int) -> None:
    described = hive_type(logical)
    assert (described.type_id, described.name, described.java_type) == (type_id, name, java)


def test_decimal_and_varchar_qualifiers() -> None:
    quals = hive_type(DecimalType(12, 4)).type_desc().types[0].primitiveEntry.typeQualifiers
    assert {k: v.i32Value for k, v in quals.qualifiers.items()} == {"precision": 12, "scale": 4}
    quals = hive_type(VarCharType(9)).type_desc().types[0].primitiveEntry.typeQualifiers
    assert quals.qualifiers["characterMaximumLength"].i32Value == 9


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([1, 2, 3], b""),
        ([None, 2, 3], b"\x01"),
        ([1, None, 3, None], b"\x0a"),
        ([1] * 8 + [None], b"\x00\x01"),
        ([None] * 9, b"\xff\x01"),
    ],
)
def test_null_bitmap(values: list[int | None], expected: bytes) -> None:
    assert null_bitmap(pa.array(values, pa.int32())) == expected
    sliced = pa.array([None, *values], pa.int32()).slice(1)
    assert null_bitmap(sliced) == expected


def test_columnar_encoding_decodes_to_the_generated_structs() -> None:
    schema = ResultSchema.of(("i", INT), ("s", STRING), ("d", DOUBLE), ("b", BIGINT))
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([1, None, 3], pa.int32()),
            pa.array(["é", None, ""], pa.large_string()),
            pa.array([0.5, 2.0, None]),
            pa.array([None, 2**40, -1]),
        ],
        names=["i", "s", "d", "b"],
    )
    encoded = to_row_set([batch.slice(1), batch.slice(0, 1)], schema, True, 5)
    decoded = encoded.decoded()  # type: ignore[union-attr]
    assert decoded.startRowOffset == 5 and decoded.rows == []
    i, s, d, b = decoded.columns
    assert i.i32Val == ttypes.TI32Column([0, 3, 1], b"\x01")
    assert s.stringVal == ttypes.TStringColumn(["", "", "é"], b"\x01")
    assert d.doubleVal == ttypes.TDoubleColumn([2.0, 0.0, 0.5], b"\x02")
    assert b.i64Val == ttypes.TI64Column([2**40, -1, 0], b"\x04")


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        (None, "anything", True),
        ("%", "anything", True),
        ("ord%", "ORDERS", True),
        ("ord_rs", "orders", True),
        ("ord_rs", "ordrs", False),
        ("a\\_b", "a_b", True),
        ("a\\_b", "axb", False),
        ("x.y", "xzy", False),
    ],
)
def test_pattern_matcher(pattern: str | None, name: str, matches: bool) -> None:
    assert pattern_matcher(pattern)(name) is matches


def test_password_hash_is_salted_and_verifies() -> None:
    first = passwords.hash_password("pw", iterations=1000)
    second = passwords.hash_password("pw", iterations=1000)
    assert first != second and "pw" not in first.split(":")
    assert passwords.verify_password("pw", first)
    assert not passwords.verify_password("other", first)
    assert not passwords.verify_password("pw", "garbage")


def test_password_cli_adds_replaces_and_removes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "passwd"
    monkeypatch.setattr("sys.stdin", io.StringIO("one\n"))
    assert passwords.main([str(path), "add", "ann", "--stdin", "--iterations", "1000"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("two\n"))
    assert passwords.main([str(path), "add", "bob", "--stdin", "--iterations", "1000"]) == 0
    text = path.read_text()
    assert "one" not in text and "two" not in text
    assert path.stat().st_mode & 0o077 == 0
    checker = passwords.PasswordFile(path)
    assert checker.check("ann", "one") and checker.check("bob", "two")
    assert not checker.check("ann", "two") and not checker.check("nobody", "one")
    assert passwords.main([str(path), "remove", "ann"]) == 0
    assert not passwords.PasswordFile(path).check("ann", "one")


def _frame(status: int, payload: bytes) -> bytes:
    return struct.pack(">BI", status, len(payload)) + payload


@pytest.mark.parametrize(
    ("second_status", "password", "accepted"),
    [(2, "right", True), (5, "right", True), (2, "wrong", False)],
)
def test_sasl_plain_negotiation(second_status: int, password: str, accepted: bool) -> None:
    server, client = socket.socketpair()
    result: dict[str, object] = {}

    def run() -> None:
        try:
            result["user"] = negotiate_plain(server, lambda u, p: (u, p) == ("ann", "right"))
        except AuthenticationError as exc:
            result["error"] = str(exc)

    thread = threading.Thread(target=run)
    thread.start()
    client.sendall(_frame(1, b"PLAIN") + _frame(second_status, b"\x00ann\x00" + password.encode()))
    thread.join(10)
    status, length = struct.unpack(">BI", client.recv(5))
    message = client.recv(length) if length else b""
    server.close()
    client.close()
    if accepted:
        assert (status, result) == (5, {"user": "ann"})
    else:
        assert status == 3 and b"authentication failed for user 'ann'" in message
        assert "authentication failed" in str(result["error"])


def test_settings_from_config() -> None:
    settings = HiveServer2Settings.from_config(
        Configuration(
            {
                "port": "0",
                "transport-mode": "ALL",
                "authentication": "plain",
                "password-file": "/x/p",
                "fetch-timeout": "5 s",
                "http.path": "/cli/",
            }
        )
    )
    assert settings.transport_mode is TransportMode.ALL and settings.serves_http
    assert settings.authentication is AuthMode.PLAIN and settings.password_file == Path("/x/p")
    assert settings.fetch_timeout == 5.0 and settings.http_path == "cli"
    with pytest.raises(ConfigurationError, match="transport-mode"):
        HiveServer2Settings.from_config(Configuration({"transport-mode": "udp"}))


def test_plain_without_password_file_fails_at_creation() -> None:
    from sparkgate.endpoints.hiveserver2.endpoint import HiveServer2Endpoint

    with pytest.raises(ConfigurationError, match="password-file"):
        # The gateway's authentication is off in the double: the endpoint needs a file.
        HiveServer2Endpoint(
            FakeGatewayService(), HiveServer2Settings(authentication=AuthMode.PLAIN)
        )
