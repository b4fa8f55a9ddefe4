"""``token``: a JSON Web Token as ``Authorization: Bearer`` (PyJWT).

Signed with a shared secret (HS256...) or a private key whose public key the
gateway has (RS256, ES256...).
Every token must carry ``exp``; an expired, not yet valid, forged, or
wrongly addressed token is refused. ``alg: none`` never is accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from sparkgate.api.auth import Authenticator, AuthenticatorContext, CredentialKind, Credentials
from sparkgate.api.config import (
    ConfigOption,
    Configuration,
    duration_option,
    list_option,
    string_option,
)
from sparkgate.api.errors import AuthenticationError, ConfigurationError

__all__ = ["TOKEN_OPTIONS", "TokenAuthenticator", "TokenAuthenticatorFactory"]

_KEY = "sql-gateway.authentication.token"
SECRET = string_option(
    f"{_KEY}.secret", "", "`token` authentication: the shared key of HS256/HS384/HS512 tokens."
)
PUBLIC_KEY_FILE = string_option(
    f"{_KEY}.public-key-file",
    "",
    "The PEM public key of RS/ES/PS-signed tokens (instead of `secret`).",
)
ALGORITHMS = list_option(
    f"{_KEY}.algorithms",
    (),
    "The signature algorithms accepted. Empty: HS256 with a secret, RS256 with a public "
    "key. `none` is never accepted.",
)
ISSUER = string_option(f"{_KEY}.issuer", "", "When set, a token's `iss` claim must be this.")
AUDIENCE = string_option(f"{_KEY}.audience", "", "When set, a token's `aud` claim must name this.")
USER_CLAIM = string_option(f"{_KEY}.user-claim", "sub", "The claim that names the user.")
LEEWAY = duration_option(
    f"{_KEY}.leeway",
    timedelta(seconds=30),
    "Clock skew allowed on `exp` and `nbf`.",
    min_value=timedelta(0),
)
TOKEN_OPTIONS: tuple[ConfigOption[Any], ...] = (
    SECRET,
    PUBLIC_KEY_FILE,
    ALGORITHMS,
    ISSUER,
    AUDIENCE,
    USER_CLAIM,
    LEEWAY,
)
_SYMMETRIC: tuple[str, ...] = ("HS256", "HS384", "HS512")
_ASYMMETRIC = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "EdDSA")


class TokenAuthenticator:
    """Checks a JWT's signature and claims."""

    kinds = frozenset({CredentialKind.TOKEN})

    def __init__(self, config: Configuration) -> None:
        secret = config.get(SECRET) or None
        key_file = config.get(PUBLIC_KEY_FILE).strip() or None
        if (secret is None) == (key_file is None):
            raise ConfigurationError(
                f"'token' authentication needs one of '{_KEY}.secret' and '{_KEY}.public-key-file'"
            )
        self.key: Any
        if secret is not None:
            self.key, allowed, default = secret, _SYMMETRIC, "HS256"
        else:
            assert key_file is not None
            try:
                self.key = Path(key_file).expanduser().read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigurationError(
                    f"'{_KEY}.public-key-file': cannot read {key_file}: {exc.strerror or exc}"
                ) from None
            allowed, default = _ASYMMETRIC, "RS256"
        algorithms: tuple[str, ...] = config.get(ALGORITHMS)
        self.algorithms = list(algorithms) or [default]
        wrong = [a for a in self.algorithms if a not in allowed]
        if wrong:
            raise ConfigurationError(
                f"'{_KEY}.algorithms': {', '.join(wrong)} cannot be used with "
                f"{'a secret' if secret else 'a public key'} (use {', '.join(allowed)})"
            )
        self.issuer = config.get(ISSUER).strip() or None
        self.audience = config.get(AUDIENCE).strip() or None
        self.user_claim = config.get(USER_CLAIM).strip() or "sub"
        self.leeway = config.get(LEEWAY).total_seconds()

    def authenticate(self, credentials: Credentials) -> str:
        # PyJWT (and cryptography) load with the first token, not with every start-up.
        import jwt

        assert credentials.token is not None
        required = ["exp", self.user_claim]
        if self.issuer:
            required.append("iss")
        if self.audience:
            required.append("aud")
        try:
            claims = jwt.decode(
                credentials.token,
                self.key,
                algorithms=self.algorithms,
                issuer=self.issuer,
                audience=self.audience,
                leeway=self.leeway,
                options={"require": required, "verify_aud": self.audience is not None},
            )
        except jwt.ExpiredSignatureError:
            raise AuthenticationError("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise AuthenticationError("the token is not valid yet") from None
        except jwt.InvalidIssuerError:
            raise AuthenticationError("the token was issued by another issuer") from None
        except jwt.InvalidAudienceError:
            raise AuthenticationError("the token is for another audience") from None
        except jwt.MissingRequiredClaimError as exc:
            raise AuthenticationError(f"the token has no '{exc.claim}' claim") from None
        except jwt.PyJWTError:  # a bad signature or format, a key that does not fit
            raise AuthenticationError("the token is not valid (signature or format)") from None
        user = claims.get(self.user_claim)
        if not isinstance(user, str) or not user:
            raise AuthenticationError(f"the token's '{self.user_claim}' claim is not a user name")
        return user

    def close(self) -> None:
        pass


class TokenAuthenticatorFactory:
    def options(self) -> Sequence[ConfigOption[Any]]:
        return TOKEN_OPTIONS

    def create_authenticator(self, context: AuthenticatorContext) -> Authenticator:
        return TokenAuthenticator(context.configuration)
