"""Certificates for TLS tests: a private CA and a server certificate it signed
for ``127.0.0.1`` and ``localhost``, in every form a deployment brings them.

- ``ca``: the CA's certificate (PEM), what clients trust (curl ``--cacert``,
  ``SSL_CERT_FILE``, impyla ``ca_cert``);
- ``certificate`` / ``key``: the server's chain and its private key (PEM);
- ``encrypted_key``: the same key under ``KEY_PASSWORD``;
- ``keystore``: a PKCS#12 keystore with the key and chain under ``STORE_PASSWORD``;
- ``truststore``: a PKCS#12 truststore with the CA, written by the JDK's
  ``keytool`` so Java clients (beeline) read it, under ``STORE_PASSWORD``;
- ``other_ca``: an unrelated CA, which a client must not accept the server under.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

__all__ = ["KEY_PASSWORD", "STORE_PASSWORD", "Certificates", "certificates", "make_certificates"]

KEY_PASSWORD = "key-pass-1"
STORE_PASSWORD = "store-pass-2"


@dataclass(frozen=True)
class Certificates:
    ca: Path
    certificate: Path
    key: Path
    encrypted_key: Path
    keystore: Path
    truststore: Path
    other_ca: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _ca(common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _server(
    ca_key: ec.EllipticCurvePrivateKey, ca: x509.Certificate
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("sparkgate test server"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _keytool() -> str:
    """The JDK's keytool (beside the ``java`` Spark runs on)."""
    java_home = os.environ.get("JAVA_HOME")
    candidates = [Path(java_home) / "bin" / "keytool"] if java_home else []
    found = shutil.which("keytool")
    candidates += [Path(found)] if found else []
    for candidate in candidates:
        if candidate.exists():
            return str(candidate)
    raise RuntimeError("keytool not found: it comes with the Java that Spark needs")


def make_certificates(directory: Path) -> Certificates:
    """Write a CA, a server certificate and their keystores into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca = _ca("sparkgate test CA")
    key, cert = _server(ca_key, ca)
    _, other = _ca("another CA")
    files = Certificates(
        ca=directory / "ca.pem",
        certificate=directory / "server.pem",
        key=directory / "server.key",
        encrypted_key=directory / "server-encrypted.key",
        keystore=directory / "server.p12",
        truststore=directory / "truststore.p12",
        other_ca=directory / "other-ca.pem",
    )
    files.ca.write_bytes(_pem(ca))
    files.other_ca.write_bytes(_pem(other))
    files.certificate.write_bytes(_pem(cert) + _pem(ca))
    files.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    files.encrypted_key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(KEY_PASSWORD.encode()),
        )
    )
    files.keystore.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"sparkgate",
            key,
            cert,
            [ca],
            serialization.BestAvailableEncryption(STORE_PASSWORD.encode()),
        )
    )
    subprocess.run(
        [
            _keytool(),
            "-importcert",
            "-noprompt",
            "-alias",
            "sparkgate-test-ca",
            "-file",
            str(files.ca),
            "-keystore",
            str(files.truststore),
            "-storetype",
            "pkcs12",
            "-storepass",
            STORE_PASSWORD,
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return files


@pytest.fixture(scope="session")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Certificates]:
    """One CA and server certificate for the whole run."""
    yield make_certificates(tmp_path_factory.mktemp("tls"))
