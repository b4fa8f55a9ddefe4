"""What a REST request presents: HTTP Basic or ``Authorization: Bearer``."""

from __future__ import annotations

import base64
import binascii

from starlette.requests import Request

from sparkgate.api.auth import Credentials
from sparkgate.api.errors import AuthenticationError

__all__ = ["request_credentials"]


def request_credentials(request: Request) -> Credentials:
    """The request's credentials (none when it has no ``Authorization`` header).

    Raises:
        AuthenticationError: a header that cannot be read, or of another scheme.
    """
    address = request.client.host if request.client is not None else None
    header = request.headers.get("authorization")
    if header is None:
        return Credentials(address=address)
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer" and value:
        return Credentials(token=value, address=address)
    if scheme.lower() == "basic" and value:
        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise AuthenticationError(
                "The Authorization header's Basic value is not base64 of user:password"
            ) from None
        user, sep, password = decoded.partition(":")
        if not sep:
            raise AuthenticationError(
                "The Authorization header's Basic value has no ':' between user and password"
            )
        return Credentials(user=user, password=password, address=address)
    raise AuthenticationError(f"Unsupported Authorization scheme '{scheme}': use Basic or Bearer")
