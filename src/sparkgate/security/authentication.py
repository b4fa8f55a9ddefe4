"""The gateway's authentication: the authenticators ``sql-gateway.authentication``
lists, asked in order for the kind of credentials a client presented.

With ``none`` (alone) nobody is checked: a client's claimed user name (a
HiveServer2 login, a session property) is taken as it is. With any other
list, every call must carry credentials that one of them accepts; the first
that takes their kind and accepts them names the user. Admins
(``sql-gateway.authorization.admins``) may act on every user's sessions and
jobs.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from importlib.metadata import entry_points
from typing import Any

from sparkgate.api.auth import (
    AUTHENTICATOR_GROUP,
    Authenticator,
    AuthenticatorContext,
    AuthenticatorFactory,
    CredentialKind,
    Credentials,
    Principal,
)
from sparkgate.api.config import ConfigOption, Configuration
from sparkgate.api.errors import AuthenticationError, ConfigurationError

__all__ = ["NONE", "Authentication", "authenticator_factories", "authenticator_options"]

log = logging.getLogger(__name__)

NONE = "none"
# The HTTP scheme a client uses for each kind of credentials.
_SCHEMES = {CredentialKind.PASSWORD: "Basic", CredentialKind.TOKEN: "Bearer"}
# A password accepted once is not checked again for this long: REST clients send it
# with every request (a Flink client polls results several times a second), and a
# check costs a slow hash or a directory round trip by design. Kept as a keyed hash.
PASSWORD_CACHE_S = 60.0
_PASSWORD_CACHE_SIZE = 1024


def authenticator_factories() -> dict[str, AuthenticatorFactory]:
    """Every installed authenticator factory, by name (the built-ins included)."""
    found: dict[str, AuthenticatorFactory] = {}
    for entry in entry_points(group=AUTHENTICATOR_GROUP):
        factory = entry.load()()
        if not isinstance(factory, AuthenticatorFactory):
            raise ConfigurationError(
                f"Authenticator '{entry.name}' ({entry.value}) is not an AuthenticatorFactory"
            )
        found[entry.name] = factory
    return found


def authenticator_options() -> tuple[ConfigOption[Any], ...]:
    """The options every installed authenticator declares (start-up checks, docs)."""
    return tuple(
        option for factory in authenticator_factories().values() for option in factory.options()
    )


class Authentication:
    """Checks credentials against the configured authenticators."""

    def __init__(
        self,
        authenticators: Sequence[tuple[str, Authenticator]],
        admins: Iterable[str] = (),
    ) -> None:
        self.authenticators = tuple(authenticators)
        self.admins = frozenset(admins)
        self.kinds = frozenset(kind for _, a in self.authenticators for kind in a.kinds)
        self._cache_key = secrets.token_bytes(32)
        self._cache: OrderedDict[bytes, tuple[Principal, float]] = OrderedDict()
        self._cache_lock = threading.Lock()
        #: Logins refused so far (metrics).
        self.failures = 0

    @classmethod
    def from_config(
        cls, names: Sequence[str], admins: Iterable[str], config: Configuration, data_dir: str
    ) -> Authentication:
        """Made from ``sql-gateway.authentication``'s names.

        Raises:
            ConfigurationError: an unknown name, ``none`` with others, or an
                authenticator's options are wrong.
        """
        wanted = [name.strip().lower() for name in names if name.strip()] or [NONE]
        if NONE in wanted:
            if len(wanted) > 1:
                raise ConfigurationError(
                    "'sql-gateway.authentication': 'none' cannot be combined with "
                    + ", ".join(n for n in wanted if n != NONE)
                )
            return cls((), admins)
        factories = authenticator_factories()
        made: list[tuple[str, Authenticator]] = []
        context = AuthenticatorContext(config, data_dir)
        for name in dict.fromkeys(wanted):
            factory = factories.get(name)
            if factory is None:
                known = ", ".join(sorted([NONE, *factories]))
                raise ConfigurationError(
                    f"Unknown authentication '{name}' in 'sql-gateway.authentication' (installed: "
                    f"{known}); an authenticator is a plug-in of the entry-point group "
                    f"'{AUTHENTICATOR_GROUP}'"
                )
            made.append((name, factory.create_authenticator(context)))
        return cls(made, admins)

    @property
    def enabled(self) -> bool:
        return bool(self.authenticators)

    @property
    def schemes(self) -> tuple[str, ...]:
        """The HTTP schemes clients may use (``WWW-Authenticate``), in a stable order."""
        return tuple(
            _SCHEMES[k] for k in (CredentialKind.PASSWORD, CredentialKind.TOKEN) if k in self.kinds
        )

    def authenticate(self, credentials: Credentials) -> Principal | None:
        """The principal ``credentials`` prove; None when authentication is off and
        the client named no user.

        Raises:
            AuthenticationError: missing credentials, or none of the
                authenticators that take their kind accepts them.
        """
        if not self.enabled:
            if credentials.user:
                return Principal(credentials.user, admin=credentials.user in self.admins)
            return None
        kind = credentials.kind
        if kind is CredentialKind.NONE:
            self.failures += 1
            raise AuthenticationError(self._missing(), self.schemes)
        digest = self._digest(credentials) if kind is CredentialKind.PASSWORD else None
        if digest is not None:
            cached = self._cached(digest)
            if cached is not None:
                return cached
        candidates = [(name, a) for name, a in self.authenticators if kind in a.kinds]
        if not candidates:
            raise AuthenticationError(
                f"this gateway does not take {kind.value} credentials; {self._missing()}",
                self.schemes,
            )
        failure: AuthenticationError | None = None
        for name, authenticator in candidates:
            try:
                user = authenticator.authenticate(credentials)
            except AuthenticationError as exc:
                failure = exc
                continue
            principal = Principal(user, mechanism=name, admin=user in self.admins)
            if digest is not None:
                self._remember(digest, principal)
            return principal
        assert failure is not None
        self.failures += 1
        who = f" of user '{credentials.user}'" if credentials.user else ""
        log.info("Login%s from %s refused: %s", who, credentials.address or "?", failure)
        raise AuthenticationError(f"Authentication failed: {failure}", self.schemes)

    def _digest(self, credentials: Credentials) -> bytes:
        text = f"{credentials.user}\0{credentials.password}".encode()
        return hmac.new(self._cache_key, text, hashlib.sha256).digest()

    def _cached(self, digest: bytes) -> Principal | None:
        with self._cache_lock:
            entry = self._cache.get(digest)
            if entry is None:
                return None
            if entry[1] < time.monotonic():
                del self._cache[digest]
                return None
            return entry[0]

    def _remember(self, digest: bytes, principal: Principal) -> None:
        with self._cache_lock:
            self._cache[digest] = (principal, time.monotonic() + PASSWORD_CACHE_S)
            self._cache.move_to_end(digest)
            while len(self._cache) > _PASSWORD_CACHE_SIZE:
                self._cache.popitem(last=False)

    def _missing(self) -> str:
        ways = []
        if CredentialKind.PASSWORD in self.kinds:
            ways.append("a user name and password (HTTP Basic, SASL PLAIN)")
        if CredentialKind.TOKEN in self.kinds:
            ways.append("a token (Authorization: Bearer)")
        return "Authentication required: log in with " + " or ".join(ways)

    def close(self) -> None:
        for _, authenticator in self.authenticators:
            try:
                authenticator.close()
            except Exception:
                log.debug("Closing an authenticator failed", exc_info=True)
