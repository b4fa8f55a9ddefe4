"""The built-in authenticators and their chain, without a gateway: the password
file, JWTs (HS256 and RS256, every claim check), LDAP's configuration checks,
the order and cache of the chain, and the refusal of unauthenticated remote binds."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from sparkgate.api.auth import Credentials
from sparkgate.api.config import Configuration
from sparkgate.api.errors import AuthenticationError, ConfigurationError
from sparkgate.security import authentication as chain_module
from sparkgate.security.authentication import Authentication
from sparkgate.security.passwords import hash_password
from sparkgate.server.ports import check_unauthenticated_binds

SECRET = "unit-test-secret-that-is-32-bytes-long"


def password_file(tmp_path: Path, **users: str) -> Path:
    path = tmp_path / "users"
    path.write_text(
        "".join(f"{u}:{hash_password(p, iterations=1000)}\n" for u, p in users.items()),
        encoding="utf-8",
    )
    return path


def chain(tmp_path: Path, names: tuple[str, ...], **options: str) -> Authentication:
    return Authentication.from_config(names, ("ops",), Configuration(options), str(tmp_path))


def test_the_password_file_accepts_its_users_only(tmp_path: Path) -> None:
    users = password_file(tmp_path, ann="pw-ann")
    auth = chain(
        tmp_path, ("password",), **{"sql-gateway.authentication.password.file": str(users)}
    )
    assert auth.authenticate(Credentials("ann", "pw-ann")).name == "ann"  # type: ignore[union-attr]
    for user, password in (("ann", "nope"), ("bob", "pw-ann"), ("ann", "")):
        with pytest.raises(AuthenticationError, match="wrong user name or password"):
            auth.authenticate(Credentials(user, password))


def test_the_default_password_file_is_in_the_data_dir(tmp_path: Path) -> None:
    password_file(tmp_path, ann="pw-ann")
    auth = chain(tmp_path, ("password",))
    assert auth.authenticate(Credentials("ann", "pw-ann")) is not None


def test_a_missing_password_file_stops_the_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="sparkgate user add"):
        chain(tmp_path, ("password",))


def test_hs256_tokens_and_their_claims(tmp_path: Path) -> None:
    auth = chain(
        tmp_path,
        ("token",),
        **{
            "sql-gateway.authentication.token.secret": SECRET,
            "sql-gateway.authentication.token.issuer": "idp",
            "sql-gateway.authentication.token.audience": "sparkgate",
        },
    )
    now = int(time.time())
    good = {"sub": "ann", "exp": now + 60, "iss": "idp", "aud": "sparkgate"}
    principal = auth.authenticate(Credentials(token=jwt.encode(good, SECRET)))
    assert principal is not None and principal.name == "ann" and principal.mechanism == "token"
    assert auth.authenticate(Credentials(token=jwt.encode({**good, "sub": "ops"}, SECRET))).admin  # type: ignore[union-attr]
    refused = {
        "expired": {**good, "exp": now - 3600},
        "not valid yet": {**good, "nbf": now + 3600},
        "another issuer": {**good, "iss": "other"},
        "another audience": {**good, "aud": "other"},
        "no 'exp' claim": {k: v for k, v in good.items() if k != "exp"},
        "no 'sub' claim": {k: v for k, v in good.items() if k != "sub"},
    }
    for message, claims in refused.items():
        with pytest.raises(AuthenticationError, match=message):
            auth.authenticate(Credentials(token=jwt.encode(claims, SECRET)))
    for token in (
        jwt.encode(good, "another-secret-also-32-bytes-long!!"),
        jwt.encode(good, None, algorithm="none"),
        "not.a.token",
    ):
        with pytest.raises(AuthenticationError, match="not valid"):
            auth.authenticate(Credentials(token=token))


def test_rs256_tokens_need_the_matching_public_key(tmp_path: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = tmp_path / "idp.pem"
    pem.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    auth = chain(
        tmp_path, ("token",), **{"sql-gateway.authentication.token.public-key-file": str(pem)}
    )
    claims = {"sub": "ann", "exp": int(time.time()) + 60}
    assert (
        auth.authenticate(Credentials(token=jwt.encode(claims, key, algorithm="RS256"))) is not None
    )
    with pytest.raises(AuthenticationError):
        auth.authenticate(Credentials(token=jwt.encode(claims, other, algorithm="RS256")))
    # Signed with the public key as an HMAC secret (algorithm confusion): refused.
    with pytest.raises(AuthenticationError):
        auth.authenticate(Credentials(token=hmac_token(claims, pem.read_bytes())))


def hmac_token(claims: dict[str, object], key: bytes) -> str:
    """An HS256 JWT made by hand (PyJWT refuses a PEM key as an HMAC secret)."""

    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    signing = (
        part(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        + "."
        + part(json.dumps(claims).encode())
    )
    signature = hmac.new(key, signing.encode(), hashlib.sha256).digest()
    return f"{signing}.{part(signature)}"


@pytest.mark.parametrize(
    ("names", "options", "message"),
    [
        (("token",), {}, "secret' and"),
        (
            ("token",),
            {
                "sql-gateway.authentication.token.secret": SECRET,
                "sql-gateway.authentication.token.algorithms": "RS256",
            },
            "cannot be used with a secret",
        ),
        (("ldap",), {}, "ldap.url"),
        (
            ("ldap",),
            {"sql-gateway.authentication.ldap.url": "ldap://127.0.0.1:1"},
            "user-dn-pattern' or",
        ),
        (
            ("ldap",),
            {
                "sql-gateway.authentication.ldap.url": "ldap://127.0.0.1:1",
                "sql-gateway.authentication.ldap.user-dn-pattern": "uid=x",
            },
            "must contain",
        ),
        (("none", "token"), {}, "cannot be combined"),
        (("kerberos",), {}, "Unknown authentication 'kerberos'"),
    ],
)
def test_wrong_settings_stop_the_start_naming_the_option(
    tmp_path: Path, names: tuple[str, ...], options: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        chain(tmp_path, names, **options)


def test_an_unreachable_directory_is_a_clear_refusal(tmp_path: Path) -> None:
    auth = chain(
        tmp_path,
        ("ldap",),
        **{
            "sql-gateway.authentication.ldap.url": "ldap://127.0.0.1:1",
            "sql-gateway.authentication.ldap.user-dn-pattern": "uid={user},dc=example",
            "sql-gateway.authentication.ldap.timeout": "2 s",
        },
    )
    with pytest.raises(AuthenticationError, match="could not be reached"):
        auth.authenticate(Credentials("ann", "pw"))
    with pytest.raises(AuthenticationError, match="required"):
        auth.authenticate(Credentials("ann", ""))


def test_the_chain_asks_each_kind_of_its_own(tmp_path: Path) -> None:
    users = password_file(tmp_path, ann="pw-ann")
    auth = chain(
        tmp_path,
        ("password", "token"),
        **{
            "sql-gateway.authentication.password.file": str(users),
            "sql-gateway.authentication.token.secret": SECRET,
        },
    )
    assert auth.schemes == ("Basic", "Bearer")
    with pytest.raises(AuthenticationError, match="Authentication required") as missing:
        auth.authenticate(Credentials())
    assert missing.value.schemes == ("Basic", "Bearer")
    assert auth.authenticate(Credentials("ann", "pw-ann")).mechanism == "password"  # type: ignore[union-attr]
    token = jwt.encode({"sub": "bob", "exp": int(time.time()) + 60}, SECRET)
    assert auth.authenticate(Credentials(token=token)).name == "bob"  # type: ignore[union-attr]


def test_an_accepted_password_is_cached_briefly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    users = password_file(tmp_path, ann="pw-ann")
    auth = chain(
        tmp_path, ("password",), **{"sql-gateway.authentication.password.file": str(users)}
    )
    assert auth.authenticate(Credentials("ann", "pw-ann")) is not None
    users.write_text("", encoding="utf-8")  # ann removed
    assert auth.authenticate(Credentials("ann", "pw-ann")) is not None  # cached
    with pytest.raises(AuthenticationError):
        auth.authenticate(Credentials("ann", "other"))  # a different password is not
    monkeypatch.setattr(chain_module, "PASSWORD_CACHE_S", 0.0)
    auth._cache.clear()
    with pytest.raises(AuthenticationError):
        auth.authenticate(Credentials("ann", "pw-ann"))


def test_without_authentication_the_claimed_user_is_taken(tmp_path: Path) -> None:
    auth = chain(tmp_path, ("none",))
    assert not auth.enabled
    assert auth.authenticate(Credentials()) is None
    principal = auth.authenticate(Credentials(user="ann"))
    assert principal is not None and not principal.authenticated


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({}, False),
        ({"sql-gateway.endpoint.rest.bind-address": "0.0.0.0"}, True),
        (
            {
                "sql-gateway.endpoint.rest.bind-address": "0.0.0.0",
                "sql-gateway.authentication.none-on-any-address": "true",
            },
            False,
        ),
        (
            {
                "sql-gateway.endpoint.rest.bind-address": "0.0.0.0",
                "sql-gateway.authentication": "token",
            },
            False,
        ),
        (
            {
                "sql-gateway.endpoint.type": "rest;hiveserver2",
                "sql-gateway.endpoint.hiveserver2.host": "10.1.2.3",
            },
            True,
        ),
        ({"sql-gateway.endpoint.rest.bind-address": "::1"}, False),
    ],
)
def test_no_authentication_serves_the_loopback_only(options: dict[str, str], refused: bool) -> None:
    config = Configuration(options)
    if refused:
        with pytest.raises(ConfigurationError, match="none-on-any-address"):
            check_unauthenticated_binds(config)
    else:
        check_unauthenticated_binds(config)
