"""A real OpenLDAP directory for tests, from Debian's ``slapd`` package.

:func:`start_slapd` writes an old-style ``slapd.conf`` (the ``mdb`` backend,
the core, cosine, inetorgperson and nis schemas of ``/etc/ldap/schema``) into
a fresh temporary directory, loads :data:`USERS` under ``ou=people`` with
``slapadd``, and runs ``slapd`` in the foreground on a free loopback port
only. Nothing of the system's own directory (``/etc/ldap/slapd.d``,
``/var/lib/ldap``, port 389) is used. The tests run as root in CI: then the
server runs as ``nobody``, which owns the temporary directory.

Missing programs are installed with ``apt-get install -y slapd ldap-utils``
when we are root, with a ``policy-rc.d`` that keeps the package from starting
the system's ``slapd`` service; otherwise the helper fails and says what to
install (a test that needs the directory never skips).

The directory's access rules: anyone may bind with a password (``auth`` on
``userPassword``), and anyone, anonymous too, may read and search the rest;
nobody but the root DN (:attr:`SlapdServer.admin_dn`) reads a password.

The ``slapd`` fixture (session scope) yields a :class:`SlapdServer`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.locks import exclusive

__all__ = [
    "USERS",
    "LdapUser",
    "SlapdServer",
    "find_slapd",
    "slapd",
    "ssha",
    "start_slapd",
]

BASE_DN = "dc=example,dc=org"
PEOPLE_DN = f"ou=people,{BASE_DN}"
ADMIN_DN = f"cn=admin,{BASE_DN}"
ADMIN_PASSWORD = "admin-secret"
SCHEMA_DIR = Path("/etc/ldap/schema")
MODULE_DIR = Path("/usr/lib/ldap")
_SCHEMAS = ("core", "cosine", "inetorgperson", "nis")
_PACKAGES = ("slapd", "ldap-utils")
# The programs the helper runs, and the package of each.
_PROGRAMS = {"slapd": "slapd", "slapadd": "slapd", "ldapwhoami": "ldap-utils"}
_SBIN_PATH = "/usr/local/sbin:/usr/sbin:/sbin"
# Keeps a package's maintainer scripts from starting services (invoke-rc.d asks it).
_POLICY_RC_D = Path("/usr/sbin/policy-rc.d")
# Who runs the server when we are root: it must not be root, and needs no home.
_UNPRIVILEGED_USER = "nobody"
_START_TIMEOUT_S = 30
_START_ATTEMPTS = 3  # another process may take the free port before slapd binds it


@dataclass(frozen=True)
class LdapUser:
    """A person under ``ou=people``: ``uid`` (the login), password and DN."""

    uid: str
    password: str = field(repr=False)
    #: The RDN value as RFC 4514 writes it (special characters escaped).
    rdn_value: str
    sn: str
    posix: bool = True

    @property
    def dn(self) -> str:
        return f"uid={self.rdn_value},{PEOPLE_DN}"


#: ann and bob share a surname (a search by ``sn`` finds both); lee's uid has
#: characters special in DNs (``,``) and in search filters (``(``, ``)``, ``*``),
#: and lee is not a ``posixAccount``; dee's password has a tab and a soft hyphen
#: (which SASLprep would refuse and drop).
USERS: tuple[LdapUser, ...] = (
    LdapUser("ann", "ann-secret-1", "ann", "Smith"),
    LdapUser("bob", "bob-secret-2", "bob", "Smith"),
    LdapUser("lee, j (ops)*", "lee-secret-3", "lee\\, j (ops)*", "Lee", posix=False),
    LdapUser("dee", "dee\tsecret-\u00ad4", "dee", "Dee"),
)


@dataclass(frozen=True)
class SlapdServer:
    """A running directory, its root DN (which may read everything) and its users."""

    host: str
    port: int
    base_dn: str
    people_dn: str
    admin_dn: str
    admin_password: str = field(repr=False)
    users: Mapping[str, LdapUser] = field(repr=False, hash=False)
    root: Path = field(repr=False)
    pid: int = field(repr=False)

    @property
    def url(self) -> str:
        return f"ldap://{self.host}:{self.port}"

    @property
    def user_dn_pattern(self) -> str:
        """``uid={user},ou=people,...``: the DN each user binds as."""
        return f"uid={{user}},{self.people_dn}"


def ssha(password: str) -> str:
    """``password`` as a salted SHA-1 ``userPassword`` (what ``slappasswd`` makes)."""
    salt = secrets.token_bytes(8)
    digest = hashlib.sha1(password.encode() + salt).digest()
    return "{SSHA}" + base64.b64encode(digest + salt).decode("ascii")


# -- programs -----------------------------------------------------------------


def _which(program: str) -> Path | None:
    found = shutil.which(program, path=f"{os.environ.get('PATH', '')}:{_SBIN_PATH}")
    return Path(found) if found else None


def _installed() -> dict[str, Path] | None:
    found = {program: _which(program) for program in _PROGRAMS}
    ready = all(found.values()) and (SCHEMA_DIR / "core.schema").is_file()
    return {p: path for p, path in found.items() if path is not None} if ready else None


def find_slapd() -> dict[str, Path]:
    """The paths of ``slapd``, ``slapadd`` and ``ldapwhoami``.

    When one is missing and we are root, installs Debian's ``slapd`` and
    ``ldap-utils`` first (an ``apt-get update`` if the package lists are stale).

    Raises:
        RuntimeError: not installed, and they cannot be (not root, no apt-get, or it failed).
    """
    found = _installed()
    if found is not None:
        return found
    with exclusive("apt-get"):
        return _installed() or _install()


def _apt_get(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["apt-get", *args],
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@contextlib.contextmanager
def _no_service_starts() -> Iterator[None]:
    """A ``policy-rc.d`` that denies every service start, unless one is there already
    (Debian's container images have one): the ``slapd`` package's postinst would start
    the system's directory on port 389, and nothing would stop it."""
    if _POLICY_RC_D.exists():
        yield
        return
    _POLICY_RC_D.write_text("#!/bin/sh\n# sparkgate tests: no services during apt-get\nexit 101\n")
    _POLICY_RC_D.chmod(0o755)
    try:
        yield
    finally:
        _POLICY_RC_D.unlink(missing_ok=True)


def _install() -> dict[str, Path]:
    packages = " ".join(_PACKAGES)
    hint = f"install Debian's {packages} packages (apt-get install -y {packages})"
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        missing = ", ".join(p for p in _PROGRAMS if _which(p) is None) or str(SCHEMA_DIR)
        raise RuntimeError(f"The tests need an OpenLDAP server and {missing} is missing: {hint}")
    command = ("install", "-y", "--no-install-recommends", *_PACKAGES)
    with _no_service_starts():
        result = _apt_get(*command)
        if result.returncode != 0:
            update = _apt_get("update")
            result = _apt_get(*command)
            if result.returncode != 0:
                raise RuntimeError(
                    f"Installing {packages} failed: apt-get update said:\n"
                    f"{update.stdout[-2000:]}{update.stderr[-2000:]}\napt-get install said:\n"
                    f"{result.stdout[-2000:]}{result.stderr[-2000:]}"
                )
    found = _installed()
    if found is None:
        raise RuntimeError(f"apt-get installed {packages} but slapd's programs are not on PATH")
    return found


# -- configuration ------------------------------------------------------------


def _slapd_conf(root: Path) -> str:
    includes = "".join(f"include {SCHEMA_DIR / name}.schema\n" for name in _SCHEMAS)
    return f"""{includes}
pidfile {root / "slapd.pid"}
argsfile {root / "slapd.args"}
modulepath {MODULE_DIR}
moduleload back_mdb
loglevel none

database mdb
suffix "{BASE_DN}"
rootdn "{ADMIN_DN}"
rootpw {ssha(ADMIN_PASSWORD)}
directory {root / "data"}
maxsize 16777216
index objectClass eq
index uid,sn eq

access to attrs=userPassword
    by self =x
    by anonymous auth
    by * none
access to *
    by * read
"""


def _people_ldif() -> str:
    entries = [
        f"dn: {BASE_DN}\nobjectClass: dcObject\nobjectClass: organization\n"
        "dc: example\no: Example\n",
        f"dn: {PEOPLE_DN}\nobjectClass: organizationalUnit\nou: people\n",
    ]
    for number, user in enumerate(USERS, start=1000):
        posix = (
            "objectClass: posixAccount\n"
            f"uidNumber: {number}\ngidNumber: {number}\nhomeDirectory: /home/{user.uid}\n"
            if user.posix
            else ""
        )
        entries.append(
            f"dn: {user.dn}\nobjectClass: inetOrgPerson\n{posix}uid: {user.uid}\n"
            f"cn: {user.uid.title()} {user.sn}\nsn: {user.sn}\n"
            f"userPassword: {ssha(user.password)}\n"
        )
    return "\n".join(entries)


# -- the server ---------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Runner:
    """Runs slapd's programs, as ``nobody`` when we are root."""

    def __init__(self) -> None:
        self.drop = os.geteuid() == 0
        if self.drop:
            account = pwd.getpwnam(_UNPRIVILEGED_USER)
            self.uid, self.gid = account.pw_uid, account.pw_gid

    def own(self, *paths: Path) -> None:
        if self.drop:
            for path in paths:
                os.chown(path, self.uid, self.gid)

    def _user(self) -> dict[str, object]:
        return {"user": self.uid, "group": self.gid, "extra_groups": []} if self.drop else {}

    def run(self, args: Sequence[str]) -> str:
        result = subprocess.run(
            list(args),
            cwd="/",  # the caller's directory may be closed to nobody
            capture_output=True,
            text=True,
            timeout=_START_TIMEOUT_S * 2,
            check=False,
            **self._user(),  # type: ignore[call-overload]
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout}{result.stderr}"
            )
        return str(result.stdout)

    def start(self, args: Sequence[str], log: Path) -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
                list(args),
                cwd="/",
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                **self._user(),
            )


def _log_tail(log: Path) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-30:])
    except OSError:
        return "(no server log)"


def _wait_ready(process: subprocess.Popen[bytes], port: int, whoami: Path) -> None:
    """Until slapd takes connections on ``port`` and the root DN can bind: the port
    answering is not enough, another process may have taken it.

    Raises:
        RuntimeError: slapd ended, or did not answer in time.
    """
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"slapd ended at start ({process.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                pass
        except OSError:
            time.sleep(0.05)
            continue
        url = f"ldap://127.0.0.1:{port}"
        command = [str(whoami), "-x", "-H", url, "-D", ADMIN_DN, "-w", ADMIN_PASSWORD]
        try:
            check = subprocess.run(command, capture_output=True, text=True, timeout=5, check=False)
            if check.returncode == 0 and ADMIN_DN in check.stdout:
                return
        except subprocess.TimeoutExpired:
            pass  # not slapd's port (yet): slapd ends when another process holds it
        if process.poll() is not None:
            raise RuntimeError(f"slapd ended at start ({process.returncode})")
        time.sleep(0.2)
    raise RuntimeError(f"slapd did not answer on port {port} in {_START_TIMEOUT_S} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()  # slapd shuts down cleanly on SIGTERM
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@contextlib.contextmanager
def start_slapd(*, port: int | None = None) -> Iterator[SlapdServer]:
    """A fresh directory with :data:`USERS` on ``127.0.0.1`` (on ``port``, else a
    free one).

    The server and its files are gone when the context ends.
    """
    programs = find_slapd()
    runner = _Runner()
    # Not under pytest's tmp dirs: those are root's, mode 0700, closed to nobody.
    root = Path(tempfile.mkdtemp(prefix="sparkgate-slapd-"))
    conf, ldif, log = root / "slapd.conf", root / "people.ldif", root / "slapd.log"
    process: subprocess.Popen[bytes] | None = None
    try:
        (root / "data").mkdir()
        conf.write_text(_slapd_conf(root), encoding="utf-8")
        ldif.write_text(_people_ldif(), encoding="utf-8")
        conf.chmod(0o600)
        runner.own(root, root / "data", conf, ldif)
        runner.run([str(programs["slapadd"]), "-q", "-f", str(conf), "-l", str(ldif)])
        attempts = 1 if port is not None else _START_ATTEMPTS
        for attempt in range(attempts):
            listen = port if port is not None else _free_port()
            url = f"ldap://127.0.0.1:{listen}/"
            process = runner.start(
                [str(programs["slapd"]), "-h", url, "-f", str(conf), "-d", "stats"], log
            )
            try:
                _wait_ready(process, listen, programs["ldapwhoami"])
            except RuntimeError as exc:
                _stop(process)
                process = None
                if attempt == attempts - 1:
                    raise RuntimeError(f"{exc}\nslapd log:\n{_log_tail(log)}") from None
                continue
            yield SlapdServer(
                host="127.0.0.1",
                port=listen,
                base_dn=BASE_DN,
                people_dn=PEOPLE_DN,
                admin_dn=ADMIN_DN,
                admin_password=ADMIN_PASSWORD,
                users={user.uid: user for user in USERS},
                root=root,
                pid=process.pid,
            )
            break
    finally:
        if process is not None:
            _stop(process)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def slapd() -> Iterator[SlapdServer]:
    """An OpenLDAP directory for the whole test run (see :func:`start_slapd`)."""
    with start_slapd() as server:
        yield server
