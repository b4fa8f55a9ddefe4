"""The SQL client's credentials for a gateway with authentication on.

``-u USER`` sends HTTP Basic: the password comes from ``SPARKGATE_PASSWORD``
or is asked for on the terminal. Without ``-u``, ``SPARKGATE_TOKEN`` (a JWT)
is sent as ``Authorization: Bearer``.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable, Generator, Mapping

import httpx

__all__ = ["PASSWORD_ENV", "TOKEN_ENV", "BearerAuth", "client_auth"]

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
