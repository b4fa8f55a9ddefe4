"""A real PostgreSQL server for tests, from Debian's ``postgresql`` package.

:func:`start_postgres` runs ``initdb`` and ``pg_ctl`` from
``/usr/lib/postgresql/<version>/bin`` on a data directory in a fresh temporary
directory, listening on a free loopback port only (its Unix socket in that
directory too, never in ``/run/postgresql``). PostgreSQL refuses to run as
root, and CI runs the tests as root: then the server runs as ``nobody``, which
owns the temporary directory. Missing binaries are installed with
``apt-get install -y postgresql`` when we are root; otherwise the helper fails
and says what to install (a test that needs PostgreSQL never skips).

The ``postgres`` fixture (session scope) yields a :class:`PostgresServer`: host,
port, user, password, database and the JDBC URL Spark's JDBC data source and
its JDBC table catalog take.

The JDBC driver is not part of Spark. :data:`JDBC_DRIVER_COORDINATES` is its
Maven coordinate (for ``spark.jars.packages`` at start-up);
:func:`jdbc_driver_jar` fetches the jar once with Maven into a cache directory
(for ``spark.jars`` at start-up), and :func:`load_jdbc_driver` makes it
loadable in a Spark that already runs, from every thread. ``ADD JAR`` is not
enough there: it makes the jar visible only to the JVM thread that ran it,
and the gateway runs statements on many threads.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.locks import cache_dir as shared_cache_dir
from tests.locks import exclusive

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "JDBC_DRIVER_CLASS",
    "JDBC_DRIVER_COORDINATES",
    "PostgresServer",
    "find_postgres_bin",
    "jdbc_driver_jar",
    "load_jdbc_driver",
    "postgres",
    "start_postgres",
]

#: Debian's layout: one directory per installed major version.
POSTGRES_LIB = Path("/usr/lib/postgresql")
#: The PostgreSQL JDBC driver on Maven Central (42.7.x runs on Java 8 to 21+).
JDBC_DRIVER_COORDINATES = "org.postgresql:postgresql:42.7.14"
JDBC_DRIVER_CLASS = "org.postgresql.Driver"
_PROGRAMS = ("initdb", "pg_ctl", "postgres", "psql")
# Who runs the server when we are root: it must not be root, and needs no home.
_UNPRIVILEGED_USER = "nobody"
_START_TIMEOUT_S = 60
_START_ATTEMPTS = 3  # another process may take the free port before the server binds it


@dataclass(frozen=True)
class PostgresServer:
    """A running server and the account the tests use (a superuser)."""

    host: str
    port: int
    user: str
    password: str
    database: str
    bin_dir: Path = field(repr=False)
    data_dir: Path = field(repr=False)

    @property
    def jdbc_url(self) -> str:
        """``jdbc:postgresql://host:port/database`` (credentials go in options)."""
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"

    @property
    def jdbc_options(self) -> dict[str, str]:
        """Options for Spark's JDBC source or ``spark.sql.catalog.<name>.*``."""
        return {
            "url": self.jdbc_url,
            "user": self.user,
            "password": self.password,
            "driver": JDBC_DRIVER_CLASS,
        }

    def psql(self, sql: str, *, database: str | None = None) -> str:
        """Run ``sql`` with ``psql`` over TCP; its unaligned, tuples-only output."""
        result = subprocess.run(
            [
                str(self.bin_dir / "psql"),
                "--no-psqlrc",
                "--set=ON_ERROR_STOP=1",
                "--tuples-only",
                "--no-align",
                f"--host={self.host}",
                f"--port={self.port}",
                f"--username={self.user}",
                f"--dbname={database or self.database}",
                f"--command={sql}",
            ],
            env={**os.environ, "PGPASSWORD": self.password, "PGCONNECT_TIMEOUT": "10"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"psql failed ({result.returncode}) on {sql!r}:\n{result.stderr}")
        return result.stdout


# -- binaries -----------------------------------------------------------------


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path.name)) or (0,)


def _installed_bin() -> Path | None:
    if not POSTGRES_LIB.is_dir():
        return None
    for version in sorted(POSTGRES_LIB.iterdir(), key=_version_key, reverse=True):
        candidate = version / "bin"
        if all(os.access(candidate / p, os.X_OK) for p in _PROGRAMS):
            return candidate
    return None


def _apt_get(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["apt-get", *args],
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def find_postgres_bin(*, install: bool = True) -> Path:
    """The newest ``/usr/lib/postgresql/<version>/bin`` with the server programs.

    When there is none and we are root, installs Debian's ``postgresql`` first
    (an ``apt-get update`` if the package lists are stale).

    Raises:
        RuntimeError: not installed, and it cannot be (not root, no apt-get, or it failed).
    """
    found = _installed_bin()
    if found is not None or not install:
        if found is None:
            raise RuntimeError(f"PostgreSQL's server programs are not under {POSTGRES_LIB}")
        return found
    with exclusive("apt-get"):
        return _installed_bin() or _install_postgres()


def _install_postgres() -> Path:
    hint = "install Debian's 'postgresql' package (apt-get install -y postgresql)"
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise RuntimeError(
            f"The tests need a PostgreSQL server and none is under {POSTGRES_LIB}: {hint}"
        )
    result = _apt_get("install", "-y", "--no-install-recommends", "postgresql")
    if result.returncode != 0:
        update = _apt_get("update")
        result = _apt_get("install", "-y", "--no-install-recommends", "postgresql")
        if result.returncode != 0:
            raise RuntimeError(
                "Installing PostgreSQL failed: apt-get update said:\n"
                f"{update.stdout[-2000:]}{update.stderr[-2000:]}\napt-get install said:\n"
                f"{result.stdout[-2000:]}{result.stderr[-2000:]}"
            )
    found = _installed_bin()
    if found is None:
        raise RuntimeError(f"apt-get installed 'postgresql' but nothing is under {POSTGRES_LIB}")
    return found


# -- the server ---------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Runner:
    """Runs the server's programs, as ``nobody`` when we are root."""

    def __init__(self) -> None:
        self.drop = os.geteuid() == 0
        if self.drop:
            account = pwd.getpwnam(_UNPRIVILEGED_USER)
            self.uid, self.gid = account.pw_uid, account.pw_gid

    def own(self, path: Path) -> None:
        if self.drop:
            os.chown(path, self.uid, self.gid)

    def run(self, args: Sequence[str], *, env: Mapping[str, str] | None = None) -> str:
        kwargs: dict[str, object] = {}
        if self.drop:
            kwargs = {"user": self.uid, "group": self.gid, "extra_groups": []}
        result = subprocess.run(
            list(args),
            env={**os.environ, "LC_ALL": "C", **(env or {})},
            cwd="/",  # the caller's directory may be closed to nobody
            capture_output=True,
            text=True,
            timeout=_START_TIMEOUT_S * 2,
            check=False,
            **kwargs,  # type: ignore[call-overload]
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout}{result.stderr}"
            )
        return str(result.stdout)


def _log_tail(log: Path) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-30:])
    except OSError:
        return "(no server log)"


@contextlib.contextmanager
def start_postgres(
    *, user: str = "sparkgate", password: str = "sparkgate-secret", database: str = "sparkgate"
) -> Iterator[PostgresServer]:
    """A fresh server on ``127.0.0.1`` with ``database`` owned by ``user``.

    The server and its files are gone when the context ends.
    """
    bin_dir = find_postgres_bin()
    runner = _Runner()
    # Not under pytest's tmp dirs: those are root's, mode 0700, closed to nobody.
    root = Path(tempfile.mkdtemp(prefix="sparkgate-postgres-"))
    data_dir, log = root / "data", root / "server.log"
    started = False
    try:
        runner.own(root)
        pwfile = root / "password"
        pwfile.write_text(password + "\n", encoding="utf-8")
        runner.own(pwfile)
        runner.run(
            [
                str(bin_dir / "initdb"),
                f"--pgdata={data_dir}",
                f"--username={user}",
                f"--pwfile={pwfile}",
                "--auth=scram-sha-256",
                "--encoding=UTF8",
                "--no-sync",  # test data: no need to wait for the disk
            ]
        )
        pwfile.unlink()
        port = 0
        for attempt in range(_START_ATTEMPTS):
            port = _free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {port} -k {root} "
                "-c fsync=off -c full_page_writes=off -c max_connections=50"
            )
            try:
                runner.run(
                    [
                        str(bin_dir / "pg_ctl"),
                        "start",
                        "--wait",
                        f"--timeout={_START_TIMEOUT_S}",
                        f"--pgdata={data_dir}",
                        f"--log={log}",
                        f"--options={options}",
                    ]
                )
                started = True
                break
            except RuntimeError as exc:
                if attempt == _START_ATTEMPTS - 1:
                    raise RuntimeError(f"{exc}\nserver log:\n{_log_tail(log)}") from None
        server = PostgresServer("127.0.0.1", port, user, password, database, bin_dir, data_dir)
        server.psql(f'CREATE DATABASE "{database}" OWNER "{user}"', database="postgres")
        yield server
    finally:
        if started:
            _stop(runner, bin_dir, data_dir)
        shutil.rmtree(root, ignore_errors=True)


def _stop(runner: _Runner, bin_dir: Path, data_dir: Path) -> None:
    try:
        runner.run(
            [str(bin_dir / "pg_ctl"), "stop", "--wait", "--mode=fast", f"--pgdata={data_dir}"]
        )
        return
    except (RuntimeError, subprocess.TimeoutExpired):
        pass
    # Not stopped in time (a client holding a transaction open): end it for good.
    with contextlib.suppress(OSError, ValueError, IndexError):
        pid = int((data_dir / "postmaster.pid").read_text().split()[0])
        os.kill(pid, 9)
        for _ in range(100):
            os.kill(pid, 0)
            time.sleep(0.1)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole test run (see :func:`start_postgres`)."""
    with start_postgres() as server:
        yield server


# -- the JDBC driver ------------------------------------------------------------


def _cache_dir() -> Path:
    return shared_cache_dir() / "jars"


def jdbc_driver_jar(cache_dir: Path | None = None) -> Path:
    """The PostgreSQL JDBC driver jar, fetched once with Maven into ``cache_dir``.

    Raises:
        RuntimeError: no ``mvn``, or it could not fetch the jar.
    """
    _, artifact, version = JDBC_DRIVER_COORDINATES.split(":")
    target_dir = cache_dir or _cache_dir()
    jar = target_dir / f"{artifact}-{version}.jar"
    with exclusive("maven"):
        if jar.is_file():
            return jar
        return _fetch_jar(target_dir, jar)


def _fetch_jar(target_dir: Path, jar: Path) -> Path:
    group, artifact, version = JDBC_DRIVER_COORDINATES.split(":")
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError(
            f"Fetching the JDBC driver {JDBC_DRIVER_COORDINATES} needs Maven (mvn) on PATH"
        )
    target_dir.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [
            mvn,
            "--batch-mode",
            "--quiet",
            "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy",
            f"-Dartifact={group}:{artifact}:{version}:jar",
            f"-DoutputDirectory={target_dir}",
        ],
        cwd=target_dir,  # no pom.xml here: the goal needs no project
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if result.returncode != 0 or not jar.is_file():
        raise RuntimeError(
            f"mvn could not fetch {JDBC_DRIVER_COORDINATES} ({result.returncode}):\n"
            f"{result.stdout[-3000:]}{result.stderr[-3000:]}"
        )
    return jar


def load_jdbc_driver(spark: SparkSession, jar: Path | None = None) -> Path:
    """Make the JDBC driver loadable in a running Spark, for every thread, as the
    gateway loads a connector's jars (:func:`sparkgate.service.spark.packages.load_jars`)."""
    from sparkgate.service.spark.packages import load_jars

    jar = jar or jdbc_driver_jar()
    load_jars(spark, [jar])
    return jar
