"""TLS for the endpoints: the ``ssl.*`` options each endpoint declares, and the
server-side :class:`ssl.SSLContext` they resolve to.

Both endpoints take the same prefix-less keys (``sql-gateway.endpoint.rest.ssl.enabled``,
``sql-gateway.endpoint.hiveserver2.ssl.enabled``, ...). The server's key and
certificate chain come either as PEM files (``ssl.certificate``, ``ssl.key``), the
form of most certificate tools, or as a PKCS#12 keystore (``ssl.keystore``), the
form Java's ``keytool`` writes and Hive's ``hive.server2.keystore.path`` names.
Everything is read and checked when the endpoint is created, so a wrong path or
password stops the start with a message naming the option, not the first client.
The context accepts TLS 1.2 and later with Python's default ciphers.
"""

from __future__ import annotations

import os
import secrets
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparkgate.api.config import ConfigOption, Configuration, bool_option, string_option
from sparkgate.api.errors import ConfigurationError

__all__ = [
    "SSL_CERTIFICATE",
    "SSL_ENABLED",
    "SSL_KEY",
    "SSL_KEYSTORE",
    "SSL_KEYSTORE_PASSWORD",
    "SSL_KEY_PASSWORD",
    "TLS_OPTIONS",
    "TlsSettings",
    "looks_like_tls",
]

SSL_ENABLED = bool_option(
    "ssl.enabled",
    False,
    "Serve this endpoint over TLS (HTTPS, or Thrift over SSL). Needs `ssl.certificate` "
    "(PEM) or `ssl.keystore` (PKCS#12).",
)
SSL_CERTIFICATE = string_option(
    "ssl.certificate",
    "",
    "A PEM file with the server's certificate, followed by any intermediate "
    "certificates; it may hold the private key too.",
)
SSL_KEY = string_option(
    "ssl.key",
    "",
    "A PEM file with the private key of `ssl.certificate`; empty when the certificate "
    "file holds it.",
)
SSL_KEY_PASSWORD = string_option(
    "ssl.key-password",
    "",
    "The password of an encrypted PEM private key.",
)
SSL_KEYSTORE = string_option(
    "ssl.keystore",
    "",
    "Instead of PEM files: a PKCS#12 keystore with the private key and its certificate "
    "chain, as `keytool -genkeypair -storetype pkcs12` or `openssl pkcs12 -export` "
    "write it (convert a JKS keystore with `keytool -importkeystore -deststoretype pkcs12`).",
)
SSL_KEYSTORE_PASSWORD = string_option(
    "ssl.keystore-password",
    "",
    "The password of `ssl.keystore`.",
)

TLS_OPTIONS: tuple[ConfigOption[Any], ...] = (
    SSL_ENABLED,
    SSL_CERTIFICATE,
    SSL_KEY,
    SSL_KEY_PASSWORD,
    SSL_KEYSTORE,
    SSL_KEYSTORE_PASSWORD,
)

#: The first byte of a TLS record carrying a handshake (a ClientHello).
_TLS_HANDSHAKE = 0x16


def looks_like_tls(first_byte: int) -> bool:
    """Whether a connection's first byte starts a TLS handshake: a TLS client
    talking to an endpoint that serves no TLS."""
    return first_byte == _TLS_HANDSHAKE


@dataclass(frozen=True)
class TlsSettings:
    """An endpoint's TLS options, resolved; :meth:`server_context` builds the context."""

    enabled: bool = False
    certificate: Path | None = None
    key: Path | None = None
    key_password: str = ""
    keystore: Path | None = None
    keystore_password: str = ""

    @classmethod
    def from_config(cls, config: Configuration, prefix: str) -> TlsSettings:
        """Read the ``ssl.*`` keys of ``config``; ``prefix`` names them in errors.

        Raises:
            ConfigurationError: TLS is on without a certificate or keystore, or
                with both.
        """

        def path(option: ConfigOption[str]) -> Path | None:
            text = config.get(option).strip()
            return Path(text).expanduser() if text else None

        settings = cls(
            enabled=config.get(SSL_ENABLED),
            certificate=path(SSL_CERTIFICATE),
            key=path(SSL_KEY),
            key_password=config.get(SSL_KEY_PASSWORD),
            keystore=path(SSL_KEYSTORE),
            keystore_password=config.get(SSL_KEYSTORE_PASSWORD),
        )
        if settings.enabled:
            if settings.certificate is None and settings.keystore is None:
                raise ConfigurationError(
                    f"{prefix}{SSL_ENABLED.key} is true but neither {prefix}{SSL_CERTIFICATE.key} "
                    f"nor {prefix}{SSL_KEYSTORE.key} is set."
                )
            if settings.certificate is not None and settings.keystore is not None:
                raise ConfigurationError(
                    f"Set either {prefix}{SSL_CERTIFICATE.key} or {prefix}{SSL_KEYSTORE.key}, "
                    "not both."
                )
        return settings

    def server_context(self, prefix: str = "") -> ssl.SSLContext | None:
        """The server's TLS context, or None when TLS is off.

        Raises:
            ConfigurationError: a file cannot be read, a password is wrong, or
                the key does not match the certificate.
        """
        if not self.enabled:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        if self.keystore is not None:
            _load_keystore(context, self.keystore, self.keystore_password, prefix)
            return context
        assert self.certificate is not None
        for option, file in ((SSL_CERTIFICATE, self.certificate), (SSL_KEY, self.key)):
            if file is not None and not os.access(file, os.R_OK):
                raise ConfigurationError(
                    f"{prefix}{option.key}: cannot read {file} (missing or not readable)."
                )
        try:
            context.load_cert_chain(self.certificate, self.key, self.key_password or None)
        except (ssl.SSLError, OSError) as exc:
            files = str(self.certificate) + (f" and {self.key}" if self.key else "")
            raise ConfigurationError(
                f"{prefix}{SSL_CERTIFICATE.key}: {files} do not hold a PEM certificate and its "
                f"private key (or {prefix}{SSL_KEY_PASSWORD.key} is wrong): {exc}"
            ) from exc
        return context


def _load_keystore(context: ssl.SSLContext, keystore: Path, password: str, prefix: str) -> None:
    """Load a PKCS#12 keystore into ``context``.

    :mod:`ssl` loads keys from files only: the key goes to a private temporary
    file encrypted under a one-time password, so it never rests in clear on disk.
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    where = f"{prefix}{SSL_KEYSTORE.key}"
    try:
        data = keystore.read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"{where}: cannot read {keystore}: {exc.strerror}") from exc
    try:
        key, certificate, chain = pkcs12.load_key_and_certificates(
            data, password.encode("utf-8") if password else None
        )
    except ValueError as exc:
        raise ConfigurationError(
            f"{where}: {keystore} is not a PKCS#12 keystore or "
            f"{prefix}{SSL_KEYSTORE_PASSWORD.key} is wrong ({exc})."
        ) from exc
    if key is None or certificate is None:
        raise ConfigurationError(f"{where}: {keystore} holds no private key with its certificate.")
    one_time = secrets.token_urlsafe(24).encode("ascii")
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(one_time),
    )
    for cert in (certificate, *(chain or ())):
        pem += cert.public_bytes(serialization.Encoding.PEM)
    with tempfile.TemporaryDirectory(prefix="sparkgate-tls-") as tmp:
        file = Path(tmp) / "server.pem"
        file.touch(mode=0o600)
        file.write_bytes(pem)
        try:
            context.load_cert_chain(file, password=one_time)
        except ssl.SSLError as exc:
            raise ConfigurationError(f"{where}: {keystore} cannot be used: {exc}") from exc
