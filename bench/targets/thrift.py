"""Spark's own Thrift server (HiveThriftServer2) from the pyspark package, through PyHive.

The server runs with ``hive.server2.authentication=NOSASL`` (the default,
``--thrift-auth NONE``, adds SASL PLAIN framing); PyHive gets a buffered
socket transport with a timeout, which is what ``hive.connect(...,
auth='NOSASL')`` builds, minus the missing timeout. Every statement is a
new cursor: ``execute`` (synchronous), ``fetchall`` (PyHive turns every
value into a Python object: ``datetime``, ``Decimal``, ...) and ``close``
(CloseOperation). Opening a session is ``OpenSession`` plus the
``USE default`` PyHive sends.

Modes: ``rows`` is PyHive (latency workloads use it); ``jdbc`` is Hive's JDBC
driver in a JVM of the benchmark's (:mod:`bench.targets.jdbc`), same fetch
size, every value read with ``getObject``: what a JVM client gets from the
same server without PyHive's per-value Python decoding.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from bench.servers import (
    HOST,
    ManagedProcess,
    free_port,
    port_accepts,
    spark_home,
    start_thrift_server,
    thrift_server_jar,
)
from bench.targets.base import BenchError, Session, Target
from bench.targets.jdbc import JdbcClient, JdbcSession, jdbc_missing, jdbc_url

__all__ = ["ThriftTarget"]

log = logging.getLogger(__name__)

#: Rows per FetchResults call (PyHive's ``arraysize``; its default is 1,000).
FETCH_SIZE = 10_000
#: Seconds between GetOperationStatus calls on a background statement.
POLL_S = 0.1


class _ThriftSession:
    def __init__(self, target: ThriftTarget) -> None:
        from pyhive import hive

        self._timeout_s = target.settings.statement_timeout_s
        timeout_ms = int(self._timeout_s * 1000)
        if target.auth == "NOSASL":
            from thrift.transport import TSocket, TTransport

            sock = TSocket.TSocket(HOST, target.port)
            sock.setTimeout(timeout_ms)
            self._conn = hive.connect(thrift_transport=TTransport.TBufferedTransport(sock))
        else:
            self._conn = hive.connect(host=HOST, port=target.port, auth=target.auth)

    def execute(self, sql: str) -> int:
        cursor = self._conn.cursor(arraysize=FETCH_SIZE)
        try:
            cursor.execute(sql)
            if cursor.description is None:
                return 0
            return len(cursor.fetchall())
        finally:
            cursor.close()

    def submit(self, sql: str) -> _ThriftBackground:
        cursor = self._conn.cursor(arraysize=FETCH_SIZE)
        try:
            cursor.execute(sql, async_=True)
        except BaseException:
            cursor.close()
            raise
        return _ThriftBackground(cursor, self._timeout_s)

    def close(self) -> None:
        self._conn.close()


class _ThriftBackground:
    """A statement run with ``runAsync``. A Thrift connection serves one call at
    a time, so :meth:`cancel` only raises a flag: the thread in :meth:`wait`,
    which polls the status, sends CancelOperation itself."""

    def __init__(self, cursor: Any, timeout_s: float) -> None:
        self._cursor = cursor
        self._timeout_s = timeout_s
        self._stop = threading.Event()

    def wait(self) -> int:
        from TCLIService.ttypes import TOperationState

        running = {
            TOperationState.INITIALIZED_STATE,
            TOperationState.PENDING_STATE,
            TOperationState.RUNNING_STATE,
        }
        deadline = time.monotonic() + self._timeout_s
        while not self._stop.wait(POLL_S):
            state = self._cursor.poll(get_progress_update=False).operationState
            if state == TOperationState.FINISHED_STATE:
                return len(self._cursor.fetchall())
            if state not in running:
                name = TOperationState._VALUES_TO_NAMES.get(state, state)
                raise BenchError(f"the statement ended in state {name}")
            if time.monotonic() > deadline:
                raise BenchError("the statement did not end before the timeout")
        self._cursor.cancel()
        return 0

    def cancel(self) -> None:
        self._stop.set()

    def close(self) -> None:
        self._cursor.close()


class ThriftTarget(Target):
    name = "thrift"
    label = "Spark Thrift server"
    # ``rows`` (PyHive) first: latency workloads use it; fetches run both.
    modes = ("rows", "jdbc")

    def __init__(self, *args: Any, auth: str = "NOSASL", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.auth = auth
        self.port = 0
        self._process: ManagedProcess | None = None
        self._launched_at = 0.0
        self._jdbc: JdbcClient | None = None
        self._jdbc_lock = threading.Lock()

    def unavailable(self) -> str | None:
        try:
            import pyhive.hive  # noqa: F401
            import thrift  # noqa: F401
        except ImportError as exc:
            return (
                f"PyHive/thrift not installed ({exc}); "
                "run make bench or pip install -r bench/requirements.txt"
            )
        try:
            home = spark_home()
        except Exception as exc:
            return f"no Spark distribution in the pyspark package ({exc})"
        if thrift_server_jar(home) is None:
            return "the pyspark package ships no spark-hive-thriftserver jar"
        return None

    def launch(self) -> None:
        logging.getLogger("pyhive").setLevel(logging.WARNING)
        self.port = free_port()
        self._launched_at = time.monotonic()
        self._process = start_thrift_server(
            self.work_dir, self.settings.spark, self.port, auth=self.auth
        )

    def wait_ready(self) -> None:
        if self._process is None:
            raise RuntimeError("the Thrift server was not launched")
        port = self.port
        self._process.wait_ready(lambda: port_accepts(port), self.settings.startup_timeout_s)
        session = self.open_session()
        try:
            if session.execute("SELECT 1") != 1:
                raise BenchError("SELECT 1 over Thrift did not return one row")
        finally:
            session.close()
        self.startup_s = time.monotonic() - self._launched_at

    def stop(self) -> None:
        if self._jdbc is not None:
            self._jdbc.stop()
        if self._process is not None:
            self._process.stop()

    def open_session(self, mode: str | None = None) -> Session:
        if mode == "jdbc":
            return self._jdbc_session()
        return _ThriftSession(self)

    def _jdbc_session(self) -> JdbcSession:
        reason = jdbc_missing()
        if reason:
            raise BenchError(reason)
        with self._jdbc_lock:
            if self._jdbc is None:
                # Started on first use: the JVM is the benchmark's, not the server's.
                self._jdbc = JdbcClient(self.name, self.work_dir, self.settings.statement_timeout_s)
        user = None if self.auth == "NOSASL" else "bench"
        return JdbcSession(self._jdbc, jdbc_url(self.port, self.auth), FETCH_SIZE, user)

    def server_pids(self) -> list[int]:
        return [self._process.pid] if self._process is not None else []

    def client_pids(self) -> list[int]:
        pid = self._jdbc.pid if self._jdbc is not None else None
        return [pid] if pid else []

    def log_tail(self) -> str:
        return self._process.tail() if self._process is not None else ""
