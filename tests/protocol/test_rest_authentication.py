"""REST authentication over the service double with the real authenticators:
HTTP Basic against a password file and Bearer JWTs, 401 with WWW-Authenticate,
sessions owned by their user (403 for another, admins excepted)."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest

from sparkgate.api.config import Configuration
from sparkgate.security.authentication import Authentication
from sparkgate.security.passwords import hash_password
from tests.doubles import FakeGatewayService, InProcessClient, rest_client

SECRET = "a-test-secret-of-at-least-32-bytes!!"


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def bearer(
    claims: dict[str, object], key: str = SECRET, algorithm: str = "HS256"
) -> dict[str, str]:
    return {"Authorization": f"Bearer {jwt.encode(claims, key, algorithm=algorithm)}"}


def fresh(user: str, **extra: object) -> dict[str, object]:
    return {"sub": user, "exp": int(time.time()) + 300, "iss": "idp", **extra}


@pytest.fixture
def authenticated(tmp_path: Path) -> FakeGatewayService:
    users = tmp_path / "users"
    users.write_text(
        "".join(
            f"{u}:{hash_password(p, iterations=1000)}\n"
            for u, p in (("ann", "pw-ann"), ("bob", "pw-bob"), ("root", "pw-root"))
        ),
        encoding="utf-8",
    )
    config = Configuration(
        {
            "sql-gateway.authentication.password.file": str(users),
            "sql-gateway.authentication.token.secret": SECRET,
            "sql-gateway.authentication.token.issuer": "idp",
        }
    )
    authentication = Authentication.from_config(
        ("password", "token"), ("root",), config, str(tmp_path)
    )
    return FakeGatewayService(authentication=authentication)


@pytest.fixture
def client(authenticated: FakeGatewayService) -> Iterator[InProcessClient]:
    with rest_client(authenticated, max_body_size=64 * 1024) as (http, _):
        yield http


def open_as(client: InProcessClient, headers: dict[str, str]) -> str:
    response = client.post("/v4/sessions", json={}, headers=headers)
    assert response.status_code == 200, response.text
    return str(response.json()["sessionHandle"])


def test_no_credentials_get_401_naming_both_ways_in(client: InProcessClient) -> None:
    response = client.get("/v4/info")
    assert response.status_code == 401
    challenge = response.headers["WWW-Authenticate"]
    assert 'Basic realm="sparkgate"' in challenge and 'Bearer realm="sparkgate"' in challenge
    errors = response.json()["errors"]
    assert "Authentication required" in errors[0]
    assert "Authorization: Bearer" in errors[0]


@pytest.mark.parametrize(
    "headers",
    [
        basic("ann", "wrong"),
        basic("nobody", "pw-ann"),
        {"Authorization": "Basic !!!"},
        {"Authorization": "Digest abc"},
        bearer(fresh("ann"), key="another-secret-of-at-least-32-bytes"),
        bearer({**fresh("ann"), "exp": int(time.time()) - 3600}),
        bearer({k: v for k, v in fresh("ann").items() if k != "exp"}),
        bearer(fresh("ann", iss="elsewhere")),
        {"Authorization": "Bearer " + jwt.encode(fresh("ann"), None, algorithm="none")},
    ],
    ids=[
        "wrong-password",
        "unknown-user",
        "bad-base64",
        "other-scheme",
        "forged-token",
        "expired-token",
        "token-without-exp",
        "other-issuer",
        "alg-none",
    ],
)
def test_bad_credentials_are_refused_and_leak_nothing(
    client: InProcessClient, authenticated: FakeGatewayService, headers: dict[str, str]
) -> None:
    response = client.post("/v4/sessions", json={}, headers=headers)
    assert response.status_code == 401, response.text
    assert "WWW-Authenticate" in response.headers
    body = response.text
    assert "pw-ann" not in body and SECRET not in body
    assert authenticated.sessions == {}


def test_expired_token_says_so(client: InProcessClient) -> None:
    response = client.get(
        "/v4/info", headers=bearer({**fresh("ann"), "exp": int(time.time()) - 3600})
    )
    assert response.status_code == 401
    assert "expired" in response.json()["errors"][0]


def test_a_session_belongs_to_its_user(
    client: InProcessClient, authenticated: FakeGatewayService
) -> None:
    ann = open_as(client, basic("ann", "pw-ann"))
    assert next(iter(authenticated.sessions.values())).environment.user == "ann"
    # Ann, by password or by token, uses it; Bob may not; the admin may.
    assert client.get(f"/v4/sessions/{ann}", headers=basic("ann", "pw-ann")).status_code == 200
    assert client.get(f"/v4/sessions/{ann}", headers=bearer(fresh("ann"))).status_code == 200
    refused = client.post(
        f"/v4/sessions/{ann}/statements",
        json={"statement": "SELECT 1"},
        headers=basic("bob", "pw-bob"),
    )
    assert refused.status_code == 403
    assert "another user" in refused.json()["errors"][0]
    assert client.delete(f"/v4/sessions/{ann}", headers=bearer(fresh("bob"))).status_code == 403
    assert ann in {str(h) for h in authenticated.sessions}
    assert client.delete(f"/v4/sessions/{ann}", headers=basic("root", "pw-root")).status_code == 200


def test_other_users_are_served_while_one_fails_to_log_in(client: InProcessClient) -> None:
    for _ in range(5):
        assert client.get("/v4/info", headers=basic("ann", "wrong")).status_code == 401
    assert client.get("/v4/info", headers=basic("bob", "pw-bob")).status_code == 200


def test_probes_and_metrics_need_no_credentials(client: InProcessClient) -> None:
    assert client.get("/health/live").status_code == 200
    assert client.get("/health/ready").status_code == 200
    scraped = client.get("/metrics")
    assert scraped.status_code == 200
    assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")


def test_without_authentication_nothing_is_asked(http: InProcessClient, session: str) -> None:
    assert http.get("/v4/info").status_code == 200
    assert http.get(f"/v4/sessions/{session}").status_code == 200


def test_every_answer_carries_the_security_headers(client: InProcessClient) -> None:
    for response in (
        client.get("/v4/info"),  # a 401
        client.get("/v4/info", headers=basic("ann", "pw-ann")),
        client.get("/health/live"),
        client.get("/v4/no-such-route", headers=basic("ann", "pw-ann")),
    ):
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["cache-control"] == "no-store"
        assert "default-src 'none'" in response.headers["content-security-policy"]
