"""``ldap``: a user is who the directory lets bind with their password (ldap3).

The gateway binds as the user's DN: made from ``user-dn-pattern``, or found
by a search under ``base-dn`` (as ``bind-dn`` when the directory does not
allow anonymous searches).

An empty password is refused before the directory is asked: LDAP takes a bind
with a DN and no password as an anonymous bind, which succeeds. Passwords go to
the directory as their UTF-8 bytes, as other LDAP clients send them (not
SASLprep'd: that would refuse a tab and drop a soft hyphen, and directories
compare the bytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from sparkgate.api.auth import Authenticator, AuthenticatorContext
from sparkgate.api.config import ConfigOption, duration_option, string_option

__all__ = ["LDAP_OPTIONS", "LdapAuthenticatorFactory"]

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


class LdapAuthenticatorFactory:
    def options(self) -> Sequence[ConfigOption[Any]]:
        return LDAP_OPTIONS

    def create_authenticator(self, context: AuthenticatorContext) -> Authenticator:
        # ldap3 is imported when the gateway uses it: every start-up reads these options.
        from sparkgate.security.directory import LdapAuthenticator

        return LdapAuthenticator(context.configuration)
