"""``ldap``: a user is who the directory lets bind with their password (ldap3).

The gateway binds as the user's DN: made from ``user-dn-pattern``, or found
by a search under ``base-dn`` (as ``bind-dn`` when the directory does not
allow anonymous searches).

An empty password is refused before the directory is asked: LDAP takes a bind
with a DN and no password as an anonymous bind, which succeeds.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import ldap3
from ldap3.core.exceptions import LDAPException
from ldap3.utils.conv import escape_filter_chars
from ldap3.utils.dn import escape_rdn

from sparkgate.api.auth import Authenticator, AuthenticatorContext, CredentialKind, Credentials
from sparkgate.api.config import ConfigOption, Configuration, duration_option, string_option
from sparkgate.api.errors import AuthenticationError, ConfigurationError

__all__ = ["LDAP_OPTIONS", "LdapAuthenticator", "LdapAuthenticatorFactory"]

log = logging.getLogger(__name__)

_P = "sql-gateway.authentication.ldap."
URL = string_option(
    _P + "url", "", "`ldap` authentication: the directory, `ldap://host:389` or `ldaps://host:636`."
)
USER_DN_PATTERN = string_option(
    _P + "user-dn-pattern",
    "",
    "The DN a user binds as, `{user}` standing for the name given, e.g. "
    "`uid={user},ou=people,dc=example,dc=org`. Else `base-dn` is searched.",
)
BASE_DN = string_option(
    _P + "base-dn", "", "Where users are searched for when no `user-dn-pattern` is set."
)
USER_FILTER = string_option(
    _P + "user-filter",
    "(uid={user})",
    "The search filter that finds a user's entry under `base-dn`.",
)
BIND_DN = string_option(
    _P + "bind-dn", "", "The DN the search binds as (empty: an anonymous search)."
)
BIND_PASSWORD = string_option(_P + "bind-password", "", "The password of `bind-dn`.")
CA_FILE = string_option(
    _P + "ca-file", "", "The CA certificates (PEM) that sign an `ldaps://` server's certificate."
)
TIMEOUT = duration_option(
    _P + "timeout",
    timedelta(seconds=10),
    "How long to wait for the directory to connect and to answer.",
    min_value=timedelta(milliseconds=100),
)
LDAP_OPTIONS: tuple[ConfigOption[Any], ...] = (
    URL,
    USER_DN_PATTERN,
    BASE_DN,
    USER_FILTER,
    BIND_DN,
    BIND_PASSWORD,
    CA_FILE,
    TIMEOUT,
)

_UNREACHABLE = "the directory server could not be reached"


class LdapAuthenticator:
    """Binds to the directory as the user."""

    kinds = frozenset({CredentialKind.PASSWORD})

    def __init__(self, config: Configuration) -> None:
        self.url = config.get(URL).strip()
        if not self.url:
            raise ConfigurationError(f"'ldap' authentication needs '{URL.key}'")
        self.pattern = config.get(USER_DN_PATTERN).strip() or None
        self.base_dn = config.get(BASE_DN).strip() or None
        self.user_filter = config.get(USER_FILTER).strip()
        self.bind_dn = config.get(BIND_DN).strip() or None
        self.bind_password = config.get(BIND_PASSWORD) or None
        self.timeout = config.get(TIMEOUT).total_seconds()
        if self.pattern is None and self.base_dn is None:
            raise ConfigurationError(
                f"'ldap' authentication needs '{USER_DN_PATTERN.key}' or '{BASE_DN.key}'"
            )
        if self.pattern is not None and "{user}" not in self.pattern:
            raise ConfigurationError(f"'{USER_DN_PATTERN.key}' must contain {{user}}")
        if self.pattern is None and "{user}" not in self.user_filter:
            raise ConfigurationError(f"'{USER_FILTER.key}' must contain {{user}}")
        ca_file = config.get(CA_FILE).strip() or None
        tls = ldap3.Tls(ca_certs_file=ca_file, validate=ssl.CERT_REQUIRED) if ca_file else None
        try:
            self.server = ldap3.Server(
                self.url, connect_timeout=self.timeout, get_info=ldap3.NONE, tls=tls
            )
        except LDAPException as exc:
            raise ConfigurationError(f"'{URL.key}': {exc}") from None

    def authenticate(self, credentials: Credentials) -> str:
        user, password = credentials.user, credentials.password
        assert user is not None and password is not None
        if not user or not password:
            raise AuthenticationError("a user name and a password are required")
        dn = self._dn(user)
        if dn is None:
            raise AuthenticationError("wrong user name or password")
        connection = self._connection(dn, password)
        try:
            if not connection.bind():
                log.debug("LDAP bind of %s refused: %s", dn, connection.result)
                raise AuthenticationError("wrong user name or password")
        except LDAPException as exc:
            log.warning("LDAP login of '%s' failed: %s: %s", user, _UNREACHABLE, exc)
            raise AuthenticationError(f"login failed: {_UNREACHABLE}") from None
        finally:
            connection.unbind()
        return user

    def _dn(self, user: str) -> str | None:
        if self.pattern is not None:
            return self.pattern.replace("{user}", escape_rdn(user))
        assert self.base_dn is not None
        connection = self._connection(self.bind_dn, self.bind_password)
        try:
            if not connection.bind():
                log.warning("LDAP search bind as %s refused: %s", self.bind_dn, connection.result)
                raise AuthenticationError(f"login failed: {_UNREACHABLE}")
            query = self.user_filter.replace("{user}", escape_filter_chars(user))
            connection.search(self.base_dn, query, attributes=[], size_limit=2)
            entries = connection.entries
        except LDAPException as exc:
            log.warning("LDAP search for '%s' failed: %s: %s", user, _UNREACHABLE, exc)
            raise AuthenticationError(f"login failed: {_UNREACHABLE}") from None
        finally:
            connection.unbind()
        return str(entries[0].entry_dn) if len(entries) == 1 else None

    def _connection(self, dn: str | None, password: str | None) -> ldap3.Connection:
        return ldap3.Connection(
            self.server,
            user=dn,
            password=password,
            receive_timeout=self.timeout,
            auto_bind=ldap3.AUTO_BIND_NONE,
            read_only=True,
        )

    def close(self) -> None:
        pass


class LdapAuthenticatorFactory:
    def options(self) -> Sequence[ConfigOption[Any]]:
        return LDAP_OPTIONS

    def create_authenticator(self, context: AuthenticatorContext) -> Authenticator:
        return LdapAuthenticator(context.configuration)
