"""Authentication: who is calling, checked once for every endpoint.

An endpoint turns what its protocol carries (HTTP Basic or ``Authorization:
Bearer``, a SASL PLAIN login) into :class:`Credentials` and asks the service
(:meth:`~sparkgate.api.service.GatewayService.authenticate`) for the
:class:`Principal` they prove. The service asks the authenticators that
``sql-gateway.authentication`` lists, in order, each for the kinds of
credentials it takes.

Authenticators are plug-ins: an :class:`AuthenticatorFactory` registered under
the entry-point group :data:`AUTHENTICATOR_GROUP`; the built-in ``password``,
``ldap`` and ``token`` ones are registered the same way. A factory declares
its options (full keys, ``sql-gateway.authentication.<name>.*`` by
convention), which the gateway checks at start-up and documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol, runtime_checkable

from sparkgate.api.config import ConfigOption, Configuration

__all__ = [
    "AUTHENTICATOR_GROUP",
    "Authenticator",
    "AuthenticatorContext",
    "AuthenticatorFactory",
    "CredentialKind",
    "Credentials",
    "Principal",
]

AUTHENTICATOR_GROUP = "sparkgate.authenticators"


class CredentialKind(Enum):
    """What a client presented."""

    NONE = "none"
    PASSWORD = "password"  # a user name and a password (HTTP Basic, SASL PLAIN)
    TOKEN = "token"  # a bearer token (a JWT)


@dataclass(frozen=True)
class Credentials:
    """What a client presented, as its endpoint read it. Secrets stay out of ``repr``."""

    user: str | None = None
    password: str | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)
    #: The client's address, for logs and the audit log.
    address: str | None = None

    @property
    def kind(self) -> CredentialKind:
        if self.token is not None:
            return CredentialKind.TOKEN
        if self.user is not None and self.password is not None:
            return CredentialKind.PASSWORD
        return CredentialKind.NONE


@dataclass(frozen=True)
class Principal:
    """An authenticated user. ``mechanism`` names the authenticator that proved it
    (``none`` when authentication is off and the name is only what the client said)."""

    name: str
    mechanism: str = "none"
    admin: bool = False

    @property
    def authenticated(self) -> bool:
        return self.mechanism != "none"


@runtime_checkable
class Authenticator(Protocol):
    """Checks credentials of the kinds it takes."""

    #: The kinds of credentials it checks; others are not shown to it.
    kinds: frozenset[CredentialKind]

    def authenticate(self, credentials: Credentials) -> str:
        """The user name ``credentials`` prove.

        Raises:
            AuthenticationError: they prove nothing (wrong password, unknown user,
                a forged or expired token, the directory refused the bind).
        """
        ...

    def close(self) -> None:
        """Let go of connections and files (the gateway stops)."""
        ...


@dataclass(frozen=True)
class AuthenticatorContext:
    """What a factory is given: the whole configuration and the gateway's data
    directory."""

    configuration: Configuration
    data_dir: str


@runtime_checkable
class AuthenticatorFactory(Protocol):
    def options(self) -> Sequence[ConfigOption[Any]]:
        """The authenticator's options, full keys."""
        ...

    def create_authenticator(self, context: AuthenticatorContext) -> Authenticator:
        """An authenticator for these options.

        Raises:
            ConfigurationError: an option is missing or wrong.
        """
        ...
