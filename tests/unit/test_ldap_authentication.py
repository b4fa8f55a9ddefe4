"""The ``ldap`` authenticator against a real OpenLDAP directory (tests/ldap_server.py):
binds by ``user-dn-pattern`` and after a search under ``base-dn`` (anonymous, and
as ``bind-dn``), names that try to inject into a DN or a filter, passwords as their
bytes, and a directory that is stopped, restarted or never answers.

No JVM: the unit tier, though a ``slapd`` runs (started once per session)."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import ldap3
import pytest

from sparkgate.api.auth import Credentials, Principal
from sparkgate.api.config import Configuration
from sparkgate.api.errors import AuthenticationError, ConfigurationError
from sparkgate.security import authentication as chain_module
from sparkgate.security.authentication import Authentication
from tests.ldap_server import SlapdServer, start_slapd

_P = "sql-gateway.authentication.ldap."
WRONG = "wrong user name or password"
UNREACHABLE = "could not be reached"


def ldap_chain(tmp_path: Path, admins: tuple[str, ...] = (), **options: str) -> Authentication:
    """The chain with only ``ldap``; ``options`` without the prefix, ``_`` for ``-``."""
    config = {_P + key.replace("_", "-"): value for key, value in options.items()}
    return Authentication.from_config(("ldap",), admins, Configuration(config), str(tmp_path))


def by_pattern(tmp_path: Path, server: SlapdServer, **options: str) -> Authentication:
    return ldap_chain(tmp_path, url=server.url, user_dn_pattern=server.user_dn_pattern, **options)


def by_search(tmp_path: Path, server: SlapdServer, **options: str) -> Authentication:
    return ldap_chain(tmp_path, url=server.url, base_dn=server.base_dn, **options)


def login(auth: Authentication, user: str, password: str) -> Principal:
    principal = auth.authenticate(Credentials(user, password))
    assert principal is not None
    return principal


def refused(auth: Authentication, user: str, password: str, message: str = WRONG) -> None:
    with pytest.raises(AuthenticationError, match=message):
        auth.authenticate(Credentials(user, password))


@pytest.fixture
def no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every login asks the directory (an accepted password is not remembered)."""
    monkeypatch.setattr(chain_module, "PASSWORD_CACHE_S", 0.0)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that takes connections and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield int(sock.getsockname()[1])


# -- the directory itself --------------------------------------------------------


def test_the_directory_is_real_and_keeps_passwords_to_itself(slapd: SlapdServer) -> None:
    assert slapd.url == f"ldap://127.0.0.1:{slapd.port}"
    status = Path(f"/proc/{slapd.pid}/status").read_text()
    uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
    assert Path(f"/proc/{slapd.pid}/exe").resolve().name == "slapd"
    if os.geteuid() == 0:
        assert uid != 0
    anonymous = ldap3.Connection(slapd.url, auto_bind=True)
    anonymous.search(slapd.people_dn, "(uid=*)", attributes=["uid", "userPassword"])
    assert sorted(str(e.uid) for e in anonymous.entries) == sorted(slapd.users)
    assert all(not e.userPassword.values for e in anonymous.entries)
    anonymous.unbind()
    admin = ldap3.Connection(slapd.url, slapd.admin_dn, slapd.admin_password, auto_bind=True)
    admin.search(slapd.people_dn, "(uid=ann)", attributes=["userPassword"])
    assert admin.entries[0].userPassword.value.startswith(b"{SSHA}")
    admin.unbind()


# -- bind as the DN the pattern makes ----------------------------------------------


def test_a_bind_accepts_the_right_password_only(slapd: SlapdServer, tmp_path: Path) -> None:
    auth = ldap_chain(tmp_path, ("bob",), url=slapd.url, user_dn_pattern=slapd.user_dn_pattern)
    ann, bob = slapd.users["ann"], slapd.users["bob"]
    assert login(auth, "ann", ann.password) == Principal("ann", mechanism="ldap")
    assert login(auth, "bob", bob.password) == Principal("bob", mechanism="ldap", admin=True)
    refused(auth, "ann", "not-her-password")
    refused(auth, "ann", bob.password)
    refused(auth, "ann", ann.password + " ")
    refused(auth, "zed", ann.password)  # nobody of that name


def test_names_with_dn_characters_are_escaped_into_the_dn(
    slapd: SlapdServer, tmp_path: Path
) -> None:
    auth = by_pattern(tmp_path, slapd)
    lee = slapd.users["lee, j (ops)*"]
    assert login(auth, lee.uid, lee.password).name == lee.uid
    refused(auth, lee.uid, slapd.users["ann"].password)


@pytest.mark.parametrize(
    "name",
    [
        "*)(uid=*",
        "ann,dc=evil",
        "ann,ou=people,dc=example,dc=org",
        "ann+cn=x",
        "uid=ann",
        "ann\\",
        "#ann",
        "*",
        "ann\x00",
    ],
)
def test_names_cannot_inject_into_the_dn(slapd: SlapdServer, tmp_path: Path, name: str) -> None:
    auth = by_pattern(tmp_path, slapd)
    for password in (slapd.users["ann"].password, slapd.users["bob"].password):
        refused(auth, name, password)
    assert login(auth, "ann", slapd.users["ann"].password).name == "ann"


def test_an_empty_password_never_reaches_the_directory(
    slapd: SlapdServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_connection(*args: object, **kwargs: object) -> None:
        raise AssertionError("the directory was asked")

    for auth in (by_pattern(tmp_path, slapd), by_search(tmp_path, slapd)):
        with monkeypatch.context() as patch:
            patch.setattr(ldap3, "Connection", no_connection)
            refused(auth, "ann", "", "a user name and a password are required")
            refused(
                auth, "", slapd.users["ann"].password, "a user name and a password are required"
            )
        assert login(auth, "ann", slapd.users["ann"].password).name == "ann"


def test_passwords_go_to_the_directory_as_their_bytes(slapd: SlapdServer, tmp_path: Path) -> None:
    dee, ann = slapd.users["dee"], slapd.users["ann"]
    for auth in (by_pattern(tmp_path, slapd), by_search(tmp_path, slapd)):
        assert login(auth, "dee", dee.password).name == "dee"  # a tab, a soft hyphen
        refused(auth, "dee", dee.password.replace("\u00ad", ""))
        refused(auth, "ann", "\u00ad" + ann.password)  # SASLprep would drop it


# -- search under base-dn, then bind -------------------------------------------------


def test_an_anonymous_search_finds_the_user(slapd: SlapdServer, tmp_path: Path) -> None:
    auth = by_search(tmp_path, slapd)
    ann, lee = slapd.users["ann"], slapd.users["lee, j (ops)*"]
    assert login(auth, "ann", ann.password) == Principal("ann", mechanism="ldap")
    assert login(auth, lee.uid, lee.password).name == lee.uid  # ( ) * escaped in the filter
    refused(auth, "ann", "not-her-password")
    refused(auth, "ann", slapd.users["bob"].password)


def test_a_search_as_the_bind_dn_sees_what_anonymous_does_not(
    slapd: SlapdServer, tmp_path: Path
) -> None:
    # Only the root DN may search by userPassword: anonymous finds nobody with this filter.
    secret_filter = "(&(uid={user})(userPassword=*))"
    ann = slapd.users["ann"]
    anonymous = by_search(tmp_path, slapd, user_filter=secret_filter)
    refused(anonymous, "ann", ann.password)
    as_admin = by_search(
        tmp_path,
        slapd,
        user_filter=secret_filter,
        bind_dn=slapd.admin_dn,
        bind_password=slapd.admin_password,
    )
    assert login(as_admin, "ann", ann.password).name == "ann"
    refused(as_admin, "ann", "not-her-password")
    wrong_account = by_search(
        tmp_path, slapd, bind_dn=slapd.admin_dn, bind_password="not-the-admin-password"
    )
    refused(wrong_account, "ann", ann.password, "refused the gateway's search bind")


def test_a_bind_dn_needs_its_password(slapd: SlapdServer, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"bind-dn' needs '.*\.bind-password'"):
        by_search(tmp_path, slapd, bind_dn=slapd.admin_dn)


@pytest.mark.parametrize(
    ("name", "whose"),
    [
        ("a*", "ann"),  # unescaped, it finds ann alone
        ("lee*", "lee, j (ops)*"),
        ("*", "ann"),
        ("*)(uid=*", "ann"),
        ("ann)(uid=bob", "ann"),
        ("ann)(|(uid=*", "ann"),
        ("\\2a", "ann"),
    ],
)
def test_names_cannot_inject_into_the_filter(
    slapd: SlapdServer, tmp_path: Path, name: str, whose: str
) -> None:
    auth = by_search(tmp_path, slapd)
    refused(auth, name, slapd.users[whose].password)
    assert login(auth, "bob", slapd.users["bob"].password).name == "bob"


def test_a_search_that_finds_nobody_is_refused(slapd: SlapdServer, tmp_path: Path) -> None:
    lee = slapd.users["lee, j (ops)*"]
    refused(by_search(tmp_path, slapd), "zed", lee.password)
    posix_only = by_search(tmp_path, slapd, user_filter="(&(uid={user})(objectClass=posixAccount))")
    refused(posix_only, lee.uid, lee.password)  # lee is no posixAccount
    assert login(posix_only, "ann", slapd.users["ann"].password).name == "ann"
    elsewhere = ldap_chain(tmp_path, url=slapd.url, base_dn=f"ou=nowhere,{slapd.base_dn}")
    refused(elsewhere, "ann", slapd.users["ann"].password)


def test_a_search_that_finds_several_is_refused(slapd: SlapdServer, tmp_path: Path) -> None:
    auth = by_search(tmp_path, slapd, user_filter="(sn={user})")
    assert login(auth, "Lee", slapd.users["lee, j (ops)*"].password).name == "Lee"
    for user in ("ann", "bob"):  # both are Smiths
        refused(auth, "Smith", slapd.users[user].password)
    everyone = by_search(tmp_path, slapd, user_filter="(|(uid={user})(objectClass=person))")
    refused(everyone, "ann", slapd.users["ann"].password)  # more than the size limit


# -- a directory that is gone, or silent ---------------------------------------------


def test_a_stopped_directory_is_a_clear_refusal_until_it_is_back(tmp_path: Path) -> None:
    with start_slapd() as server:
        port, root = server.port, server.root
        users = dict(server.users)
        modes = (by_pattern(tmp_path, server), by_search(tmp_path, server))
        for auth in modes:
            assert login(auth, "ann", users["ann"].password).name == "ann"
    assert not root.exists()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    for auth in modes:
        refused(auth, "bob", users["bob"].password, UNREACHABLE)
    with start_slapd(port=port):
        for auth in modes:  # the same authenticators, nothing to reset
            assert login(auth, "bob", users["bob"].password).name == "bob"
            refused(auth, "bob", users["ann"].password)


def test_a_directory_that_never_answers_times_out(tmp_path: Path, silent_port: int) -> None:
    url = f"ldap://127.0.0.1:{silent_port}"
    for auth in (
        ldap_chain(tmp_path, url=url, user_dn_pattern="uid={user},dc=example", timeout="1 s"),
        ldap_chain(tmp_path, url=url, base_dn="dc=example", timeout="1 s"),
    ):
        started = time.monotonic()
        refused(auth, "ann", "ann-secret-1", UNREACHABLE)
        assert time.monotonic() - started < 5  # the timeout, not the 10 s default


def test_users_are_served_among_failures(
    slapd: SlapdServer, tmp_path: Path, no_cache: None
) -> None:
    ann, bob = slapd.users["ann"], slapd.users["bob"]
    attempts = [
        ("ann", ann.password, "ann"),
        ("bob", "not-his-password", None),
        ("a*", ann.password, None),
        ("bob", bob.password, "bob"),
        ("*)(uid=*", bob.password, None),
        ("zed", ann.password, None),
        ("ann", bob.password, None),
    ] * 4
    for auth in (by_pattern(tmp_path, slapd), by_search(tmp_path, slapd)):

        def attempt(user: str, password: str, auth: Authentication = auth) -> str | None:
            try:
                return login(auth, user, password).name
            except AuthenticationError as exc:
                assert WRONG in str(exc)
                return None

        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(attempt, [a[0] for a in attempts], [a[1] for a in attempts]))
        assert results == [a[2] for a in attempts]
