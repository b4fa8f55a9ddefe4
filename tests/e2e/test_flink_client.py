"""The Flink-protocol DB-API client ``py-flink-sql-gateway`` against the real gateway."""

from __future__ import annotations

import datetime as dt
import decimal
import threading
import time
import uuid

import httpx
import pytest

from .conftest import GatewayProcess

flink_gateway = pytest.importorskip(
    "flink_gateway", reason="py-flink-sql-gateway needs Python 3.11 or newer"
)


def test_ddl_dml_and_query_round_trip(gateway_process: GatewayProcess) -> None:
    table = f"e2e_{uuid.uuid4().hex[:8]}"
    with flink_gateway.connect(gateway_process.url) as conn, conn.cursor() as cur:
        cur.execute(
            f"CREATE TABLE {table} (id BIGINT, name STRING, price DECIMAL(10,2)) USING parquet"
        )
        cur.execute(f"INSERT INTO {table} VALUES (1, 'one', 1.50), (2, 'two', NULL)")
        job = cur.fetchall()
        assert len(job) == 1 and len(job[0][0]) == 32
        cur.execute(f"SELECT id, name, price FROM {table} ORDER BY id")
        assert [d[0] for d in cur.description] == ["id", "name", "price"]
        assert cur.fetchall() == [(1, "one", decimal.Decimal("1.5")), (2, "two", None)]
        cur.execute(f"DROP TABLE {table}")


def test_every_spark_type_decodes(gateway_process: GatewayProcess) -> None:
    with flink_gateway.connect(gateway_process.url) as conn, conn.cursor() as cur:
        cur.execute("SET 'spark.sql.session.timeZone' = 'UTC'")
        cur.execute(
            "SELECT true AS b, CAST(1 AS TINYINT) AS ti, CAST(2 AS SMALLINT) AS si, 3 AS i, "
            "4L AS bi, CAST(1.5 AS FLOAT) AS f, 2.5D AS d, "
            "CAST(123.456789 AS DECIMAL(9,6)) AS dec, "
            "'txt' AS s, DATE'1990-10-14' AS day, "
            "TIMESTAMP_NTZ'1990-10-14 12:12:43.123' AS ts, "
            "array(1, 2) AS arr, map('k', 1L) AS m, named_struct('a', 1, 'b', 'x') AS st, "
            "CAST(NULL AS STRING) AS n FROM range(1)"
        )
        (row,) = cur.fetchall()
        assert row == (
            True,
            1,
            2,
            3,
            4,
            1.5,
            2.5,
            decimal.Decimal("123.456789"),
            "txt",
            dt.date(1990, 10, 14),
            dt.datetime(1990, 10, 14, 12, 12, 43, 123000),
            [1, 2],
            {"k": 1},
            {"a": 1, "b": "x"},
            None,
        )


def test_errors_surface_with_the_root_cause(gateway_process: GatewayProcess) -> None:
    with flink_gateway.connect(gateway_process.url) as conn, conn.cursor() as cur:
        with pytest.raises(flink_gateway.Error) as info:
            cur.execute("SELECT * FROM no_such_table_e2e")
            cur.fetchall()
        assert "TABLE_OR_VIEW_NOT_FOUND" in str(info.value)
        cur.execute("SELECT 41 + 1")
        assert cur.fetchall() == [(42,)]


def test_cancel_stops_a_running_query(gateway_process: GatewayProcess) -> None:
    base = f"{gateway_process.url}/v4"
    with httpx.Client(timeout=30) as http:
        session = http.post(f"{base}/sessions", json={}).json()["sessionHandle"]
        op = http.post(
            f"{base}/sessions/{session}/statements",
            json={"statement": "SELECT max(hash(id)) FROM range(0, 5000000000000, 1, 2)"},
        ).json()["operationHandle"]
        status_url = f"{base}/sessions/{session}/operations/{op}/status"
        time.sleep(2)
        cancelled = http.post(f"{base}/sessions/{session}/operations/{op}/cancel").json()
        assert cancelled == {"status": "CANCELED"}
        assert http.get(status_url).json() == {"status": "CANCELED"}
        # The gateway keeps serving this session after the cancel.
        with flink_gateway.connect(gateway_process.url) as conn, conn.cursor() as cur:
            cur.execute("SELECT 1")
            assert cur.fetchall() == [(1,)]
        http.delete(f"{base}/sessions/{session}")


def test_many_clients_at_once(gateway_process: GatewayProcess) -> None:
    errors: list[BaseException] = []

    def client(i: int) -> None:
        try:
            with flink_gateway.connect(gateway_process.url) as conn, conn.cursor() as cur:
                cur.execute(f"SELECT {i} AS v, count(*) FROM range(1000)")
                assert cur.fetchall() == [(i, 1000)]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
