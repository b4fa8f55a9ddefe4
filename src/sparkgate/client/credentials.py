"""The SQL client's credentials for a gateway with authentication on, and the
certificates it trusts for one with TLS.

``-u USER`` sends HTTP Basic: the password comes from ``SPARKGATE_PASSWORD``
or is asked for on the terminal. Without ``-u``, ``SPARKGATE_TOKEN`` (a JWT)
is sent as ``Authorization: Bearer``. ``--cacert FILE`` adds a private CA to
the trusted ones (``SSL_CERT_FILE``, else the system's and certifi's).
"""

from __future__ import annotations

import getpass
import os
import ssl
from collections.abc import Callable, Generator, Mapping
from pathlib import Path

import httpx

from sparkgate.api.errors import ConfigurationError

__all__ = ["PASSWORD_ENV", "TOKEN_ENV", "BearerAuth", "client_auth", "trusted_certificates"]

PASSWORD_ENV = "SPARKGATE_PASSWORD"
TOKEN_ENV = "SPARKGATE_TOKEN"


class BearerAuth(httpx.Auth):
    """``Authorization: Bearer <token>`` on every request."""

    def __init__(self, token: str) -> None:
        self._header = f"Bearer {token}"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self._header
        yield request


def client_auth(
    user: str | None,
    environ: Mapping[str, str] | None = None,
    prompt: Callable[[str], str] = getpass.getpass,
) -> httpx.Auth | None:
    """What the client sends: Basic for ``user``, else a token from the environment."""
    env = os.environ if environ is None else environ
    if user:
        password = env.get(PASSWORD_ENV)
        if password is None:
            password = prompt(f"Password for {user}: ")
        return httpx.BasicAuth(user, password)
    token = env.get(TOKEN_ENV, "").strip()
    return BearerAuth(token) if token else None


def trusted_certificates(cacert: Path | None) -> ssl.SSLContext | bool:
    """What verifies an https gateway: httpx's default (True), or that plus ``cacert``.

    Raises:
        ConfigurationError: ``cacert`` is not a readable PEM file of certificates.
    """
    if cacert is None:
        return True
    context = httpx.create_ssl_context()
    try:
        context.load_verify_locations(cafile=cacert)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigurationError(
            f"--cacert {cacert}: not a readable PEM file of certificates ({exc})"
        ) from exc
    return context
