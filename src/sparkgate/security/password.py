"""``password``: users and salted, slow hashes in a file (:mod:`.passwords`).

Manage the file with ``sparkgate user add|passwd|remove``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sparkgate.api.auth import Authenticator, AuthenticatorContext, CredentialKind, Credentials
from sparkgate.api.config import ConfigOption, string_option
from sparkgate.api.errors import AuthenticationError, ConfigurationError
from sparkgate.security.passwords import PasswordFile

__all__ = ["FILE", "PasswordAuthenticator", "PasswordAuthenticatorFactory", "password_file"]

FILE = string_option(
    "sql-gateway.authentication.password.file",
    "",
    "The password file of `password` authentication: one "
    "`user:pbkdf2_sha256:iterations:salt:hash` line per user, managed with `sparkgate user`. "
    "Empty: `<data-dir>/users`.",
)


def password_file(configuration: Any, data_dir: str) -> Path:
    """Where the password file is, for the gateway and for ``sparkgate user``."""
    path = str(configuration.get(FILE)).strip()
    return Path(path).expanduser() if path else Path(data_dir).expanduser() / "users"


class PasswordAuthenticator:
    """Checks a user name and password against the password file."""

    kinds = frozenset({CredentialKind.PASSWORD})

    def __init__(self, path: Path) -> None:
        try:
            self.file = PasswordFile(path)
        except OSError as exc:
            raise ConfigurationError(
                f"Cannot read the password file {path}: {exc.strerror or exc} "
                "(add a user with 'sparkgate user add <name>')"
            ) from None

    def authenticate(self, credentials: Credentials) -> str:
        assert credentials.user is not None and credentials.password is not None
        if not self.file.check(credentials.user, credentials.password):
            raise AuthenticationError("wrong user name or password")
        return credentials.user

    def close(self) -> None:
        pass


class PasswordAuthenticatorFactory:
    def options(self) -> Sequence[ConfigOption[Any]]:
        return (FILE,)

    def create_authenticator(self, context: AuthenticatorContext) -> Authenticator:
        return PasswordAuthenticator(password_file(context.configuration, context.data_dir))
