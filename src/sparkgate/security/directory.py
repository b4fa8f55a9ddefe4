"""The ``ldap`` authenticator itself: binds to the directory as the user (ldap3).

Its options and factory are :mod:`sparkgate.security.ldap`, which every start-up
reads; this module, and ldap3, are loaded when a gateway authenticates by LDAP.
"""

from __future__ import annotations

import logging
import math
import ssl

import ldap3
from ldap3.core.exceptions import LDAPException
from ldap3.utils.conv import escape_filter_chars
from ldap3.utils.dn import escape_rdn

from sparkgate.api.auth import CredentialKind, Credentials
from sparkgate.api.config import Configuration
from sparkgate.api.errors import AuthenticationError, ConfigurationError
from sparkgate.security.ldap import (
    BASE_DN,
    BIND_DN,
    BIND_PASSWORD,
    CA_FILE,
    TIMEOUT,
    URL,
    USER_DN_PATTERN,
    USER_FILTER,
)

__all__ = ["LdapAuthenticator"]

log = logging.getLogger(__name__)

_UNREACHABLE = "the directory server could not be reached"
_SEARCH_BIND_REFUSED = "the directory refused the gateway's search bind"


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
        # ldap3 packs the receive timeout into SO_RCVTIMEO as whole seconds: a float
        # fails every connection (a struct.error it reports as "invalid server address").
        self.receive_timeout = max(1, math.ceil(self.timeout))
        if self.pattern is None and self.base_dn is None:
            raise ConfigurationError(
                f"'ldap' authentication needs '{USER_DN_PATTERN.key}' or '{BASE_DN.key}'"
            )
        if self.pattern is not None and "{user}" not in self.pattern:
            raise ConfigurationError(f"'{USER_DN_PATTERN.key}' must contain {{user}}")
        if self.pattern is None and "{user}" not in self.user_filter:
            raise ConfigurationError(f"'{USER_FILTER.key}' must contain {{user}}")
        if self.bind_dn is not None and self.bind_password is None:
            raise ConfigurationError(f"'{BIND_DN.key}' needs '{BIND_PASSWORD.key}'")
        ca_file = config.get(CA_FILE).strip() or None
        self.tls = ldap3.Tls(ca_certs_file=ca_file, validate=ssl.CERT_REQUIRED) if ca_file else None
        try:
            self._server()
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
                raise AuthenticationError(f"login failed: {_SEARCH_BIND_REFUSED}")
            query = self.user_filter.replace("{user}", escape_filter_chars(user))
            connection.search(self.base_dn, query, attributes=[], size_limit=2)
            entries = connection.entries
        except LDAPException as exc:
            log.warning("LDAP search for '%s' failed: %s: %s", user, _UNREACHABLE, exc)
            raise AuthenticationError(f"login failed: {_UNREACHABLE}") from None
        finally:
            connection.unbind()
        return str(entries[0].entry_dn) if len(entries) == 1 else None

    def _server(self) -> ldap3.Server:
        """A new one for each connection: an ldap3 ``Server`` remembers an address that
        failed to connect and skips it, for every connection that shares it, for seconds
        after (logins would be refused while the directory is back), and connections
        that share one race on its current address."""
        return ldap3.Server(
            self.url, connect_timeout=self.timeout, get_info=ldap3.NONE, tls=self.tls
        )

    def _connection(self, dn: str | None, password: str | None) -> ldap3.Connection:
        return ldap3.Connection(
            self._server(),
            user=dn,
            password=None if password is None else password.encode("utf-8", "surrogatepass"),
            receive_timeout=self.receive_timeout,
            auto_bind=ldap3.AUTO_BIND_NONE,
            read_only=True,
        )

    def close(self) -> None:
        pass
