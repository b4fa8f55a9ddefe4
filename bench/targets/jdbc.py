"""A JVM client for HiveServer2 fetches: Hive's JDBC driver, from pyspark's ``jars/``.

PyHive builds a Python object per value (about 60 k rows/s for the fetch
query), which hides how fast a HiveServer2 server sends rows. The ``jdbc``
mode drives the same server with ``bench/jdbc/FetchAll.java`` instead: Hive
JDBC 2.3 (``hive-jdbc-*.jar`` and its dependencies, all in pyspark's
``jars/``), the same fetch size as PyHive, every value read with
``getObject``.

The Java program is compiled once per run into the work directory and runs as
one long-lived process per target (JVM start-up and class loading are never
timed). It reads one command per line on stdin and answers with one line on
stdout; a session is one JDBC connection in it. Statements are timed here,
around the request and its answer, like every other target; the time the JVM
measured itself is kept as ``last_inner_s``. Calls are serialised (one
process, one pipe), so sessions of this mode do not run statements in
parallel; only the fetch workloads use it.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import select
import shutil
import subprocess
import threading
import time
from pathlib import Path

from bench.servers import HOST, ManagedProcess, spark_home
from bench.targets.base import BenchError

__all__ = ["JdbcClient", "JdbcSession", "escape", "java_tools", "jdbc_missing", "jdbc_url"]

log = logging.getLogger(__name__)

SOURCE = Path(__file__).resolve().parent.parent / "jdbc" / "FetchAll.java"
MAIN_CLASS = "FetchAll"
#: The client's heap: a page of 10,000 rows is a few MB; 10 M rows are never held.
CLIENT_HEAP = "1g"

_compile_lock = threading.Lock()


def java_tools() -> tuple[str, str] | None:
    """``java`` and the ``javac`` of the same JDK (JAVA_HOME first, then PATH)."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java_bin, javac_bin = Path(home) / "bin" / "java", Path(home) / "bin" / "javac"
        if java_bin.exists() and javac_bin.exists():
            return str(java_bin), str(javac_bin)
    found = shutil.which("java")
    if not found:
        return None
    # The javac beside the java actually run (PATH may name another JDK's first).
    beside = Path(found).resolve().parent / "javac"
    if beside.exists():
        return found, str(beside)
    on_path = shutil.which("javac")
    return (found, on_path) if on_path else None


def _jars_dir() -> Path:
    return spark_home() / "jars"


def jdbc_missing() -> str | None:
    """Why the JDBC client cannot run here, or None if it can."""
    if java_tools() is None:
        return "no JDK (javac) found: the JDBC client is compiled at the start of the run"
    try:
        jars = _jars_dir()
    except Exception as exc:
        return f"no Spark distribution in the pyspark package ({exc})"
    if not glob.glob(str(jars / "hive-jdbc-*.jar")):
        return "the pyspark package ships no hive-jdbc jar"
    return None


def jdbc_url(port: int, auth: str) -> str:
    """Hive JDBC's URL; ``auth=noSasl`` matches ``hive.server2.authentication=NOSASL``."""
    url = f"jdbc:hive2://{HOST}:{port}/default"
    return url + (";auth=noSasl" if auth == "NOSASL" else "")


def escape(text: str) -> str:
    """The line protocol's escaping (FetchAll.unescape reverses it)."""
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def unescape(text: str) -> str:
    out: list[str] = []
    chars = iter(text)
    for ch in chars:
        if ch != "\\":
            out.append(ch)
            continue
        nxt = next(chars, "")
        out.append({"t": "\t", "n": "\n", "r": "\r"}.get(nxt, nxt))
    return "".join(out)


def _compile(work_dir: Path) -> Path:
    """``javac`` the client once per work dir; returns the classes directory."""
    classes = work_dir / "jdbc-client" / "classes"
    with _compile_lock:
        if (classes / f"{MAIN_CLASS}.class").exists():
            return classes
        tools = java_tools()
        if tools is None:
            raise BenchError("no javac found (a JDK is needed for the JDBC client)")
        classes.mkdir(parents=True, exist_ok=True)
        # Against the driver's jars: the client wraps its Thrift client (see the source).
        classpath = str(_jars_dir() / "*")
        done = subprocess.run(
            [tools[1], "-nowarn", "-cp", classpath, "-d", str(classes), str(SOURCE)],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        if done.returncode != 0:
            raise BenchError(f"javac {SOURCE.name} failed: {(done.stderr or done.stdout)[-1500:]}")
        return classes


class JdbcClient:
    """One ``FetchAll`` JVM; :meth:`call` sends a command and reads its answer."""

    def __init__(self, name: str, work_dir: Path, timeout_s: float) -> None:
        self.name = name
        self._work_dir = work_dir
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        self._process: ManagedProcess | None = None
        self._buffer = b""
        self.java_version = ""

    def cpu_s(self) -> float | None:
        """The client JVM's CPU seconds so far (user + system), None if not running."""
        import psutil

        pid = self.pid
        if pid is None:
            return None
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.Error:
            return None
        return float(times.user + times.system)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None and self._process.alive() else None

    def _start(self) -> ManagedProcess:
        classes = _compile(self._work_dir)
        tools = java_tools()
        assert tools is not None  # _compile checked
        root = self._work_dir / "jdbc-client"
        argv = [
            tools[0],
            f"-Xmx{CLIENT_HEAP}",
            "-cp",
            os.pathsep.join([str(classes), str(_jars_dir() / "*")]),
            MAIN_CLASS,
        ]
        process = ManagedProcess(
            f"JDBC client ({self.name})",
            argv,
            log_file=root / f"{self.name}.log",
            cwd=root,
            env=dict(os.environ),
            pipes=True,
        )
        self._process = process
        self._buffer = b""
        ready = self._read_line(process, time.monotonic() + 120)
        if not ready.startswith("READY"):
            raise BenchError(f"the JDBC client did not start: {ready!r}; {process.tail()}")
        self.java_version = ready.partition("\t")[2]
        log.info("JDBC client for %s started (Java %s)", self.name, self.java_version)
        return process

    def call(self, *fields: str, timeout_s: float | None = None, start: bool = True) -> list[str]:
        """Send one command; the answer's fields after ``OK``. ``start=False``: if the
        client is not running, do nothing (closing a connection of a JVM that ended).

        Raises:
            BenchError: the client answered ``ERR``, died, or did not answer in time
                (then it is stopped; the next call starts a new one).
        """
        line = "\t".join(escape(f) for f in fields) + "\n"
        with self._lock:
            try:
                process = self._process
                if process is None or not process.alive():
                    if not start:
                        return []
                    process = self._start()
                deadline = time.monotonic() + (timeout_s or self._timeout_s)
                assert process.proc.stdin is not None
                process.proc.stdin.write(line.encode("utf-8"))
                process.proc.stdin.flush()
                answer = self._read_line(process, deadline)
            except BaseException:
                # A half-read answer would desynchronise the pipe: start afresh next time.
                self._stop_locked()
                raise
        status, _, rest = answer.partition("\t")
        if status == "OK":
            return rest.split("\t") if rest else []
        if status == "ERR":
            raise BenchError(unescape(rest))
        raise BenchError(f"unexpected answer from the JDBC client: {answer[:300]!r}")

    def _read_line(self, process: ManagedProcess, deadline: float) -> str:
        stdout = process.proc.stdout
        assert stdout is not None
        fd = stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self._stop_locked()
                raise BenchError("the JDBC client did not answer before the timeout")
            readable, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not readable:
                if not process.alive():
                    break
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            self._buffer += chunk
        if b"\n" not in self._buffer:
            code = process.proc.poll()
            raise BenchError(f"the JDBC client exited (code {code}); {process.tail(20)}")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace")

    def _stop_locked(self) -> None:
        process, self._process = self._process, None
        self._buffer = b""
        if process is not None:
            with contextlib.suppress(Exception):
                process.stop(timeout=5)

    def stop(self) -> None:
        """End the JVM (QUIT, then the process group); idempotent."""
        with self._lock:
            process = self._process
            if process is not None and process.alive() and process.proc.stdin is not None:
                with contextlib.suppress(OSError, ValueError):
                    process.proc.stdin.write(b"QUIT\n")
                    process.proc.stdin.flush()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.proc.wait(timeout=5)
            self._stop_locked()


class JdbcSession:
    """One JDBC connection in the target's client JVM."""

    def __init__(self, client: JdbcClient, url: str, fetch_size: int, user: str | None) -> None:
        self._client = client
        fields = ["OPEN", str(fetch_size), url] + ([user] if user else [])
        self._id = client.call(*fields)[0]
        #: Seconds the JVM measured for the last statement (execute to statement closed).
        self.last_inner_s: float | None = None
        #: CPU seconds the client's JVM spent on the last statement (all its threads).
        self.last_client_cpu_s: float | None = None

    def execute(self, sql: str) -> int:
        before = self._client.cpu_s()
        rows, nanos, _checksum = self._client.call("EXEC", self._id, sql)
        self.last_inner_s = int(nanos) / 1e9
        after = self._client.cpu_s()
        # The client's own CPU: near the elapsed time, the client is the limit.
        self.last_client_cpu_s = None if before is None or after is None else after - before
        return int(rows)

    def close(self) -> None:
        self._client.call("CLOSE", self._id, start=False)
