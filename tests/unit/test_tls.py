"""TLS on the endpoints, over the service double: the options and what a bad
certificate, key or password says; REST over HTTPS (httpx, curl); HiveServer2
binary with SSL and HTTP over HTTPS (Thrift's own TLS clients); a client of the
wrong kind (plain on a TLS port, TLS on a plain one) is refused, told why, and
harms no one else."""

from __future__ import annotations

import logging
import shutil
import socket
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from TCLIService import TCLIService, ttypes
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport import THttpClient, TSocket, TSSLSocket, TTransport

from sparkgate.api.config import Configuration
from sparkgate.api.errors import ConfigurationError
from sparkgate.endpoints.hiveserver2.endpoint import HiveServer2Endpoint
from sparkgate.endpoints.hiveserver2.options import HiveServer2Settings, TransportMode
from sparkgate.endpoints.rest.factory import RestEndpointFactory
from sparkgate.endpoints.rest.options import RestSettings
from sparkgate.endpoints.rest.server import RestEndpoint
from sparkgate.endpoints.tls import TlsSettings
from tests.doubles import FakeGatewayService
from tests.hiveserver2.conftest import wait_for
from tests.tls import KEY_PASSWORD, STORE_PASSWORD, Certificates

_REST = "sql-gateway.endpoint.rest."


def _pem(certificates: Certificates) -> TlsSettings:
    return TlsSettings(True, certificate=certificates.certificate, key=certificates.key)


def _keystore(certificates: Certificates) -> TlsSettings:
    return TlsSettings(True, keystore=certificates.keystore, keystore_password=STORE_PASSWORD)


# -- options --------------------------------------------------------------------


def test_off_by_default_and_without_a_context() -> None:
    settings = TlsSettings.from_config(Configuration({}), _REST)
    assert settings == TlsSettings()
    assert settings.server_context() is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ssl.enabled": "true"}, f"{_REST}ssl.enabled is true but neither {_REST}ssl.certificate"),
        (
            {"ssl.enabled": "true", "ssl.certificate": "a.pem", "ssl.keystore": "b.p12"},
            f"either {_REST}ssl.certificate or {_REST}ssl.keystore",
        ),
    ],
)
def test_incomplete_or_ambiguous_options_are_refused(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        TlsSettings.from_config(Configuration(options), _REST)


def test_both_endpoints_declare_the_options() -> None:
    from sparkgate.endpoints.hiveserver2.options import HIVESERVER2_OPTIONS

    rest_keys = {option.key for option in RestEndpointFactory().options()}
    hs2_keys = {option.key for option in HIVESERVER2_OPTIONS}
    expected = {
        "ssl.enabled",
        "ssl.certificate",
        "ssl.key",
        "ssl.key-password",
        "ssl.keystore",
        "ssl.keystore-password",
    }
    assert expected <= rest_keys and expected <= hs2_keys


def test_every_form_of_key_and_certificate_loads(
    certificates: Certificates, tmp_path: Path
) -> None:
    combined = tmp_path / "combined.pem"
    combined.write_bytes(certificates.certificate.read_bytes() + certificates.key.read_bytes())
    forms = [
        _pem(certificates),
        TlsSettings(True, certificate=combined),
        TlsSettings(
            True,
            certificate=certificates.certificate,
            key=certificates.encrypted_key,
            key_password=KEY_PASSWORD,
        ),
        _keystore(certificates),
    ]
    for settings in forms:
        context = settings.server_context()
        assert context is not None
        assert context.minimum_version is ssl.TLSVersion.TLSv1_2


def test_a_keystore_leaves_no_key_file_behind(
    certificates: Certificates, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    assert _keystore(certificates).server_context() is not None
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing certificate", "ssl.certificate: cannot read .*missing.pem"),
        ("missing key", "ssl.key: cannot read .*missing.key"),
        ("wrong key password", "or ssl.key-password is wrong"),
        ("key of another certificate", "do not hold a PEM certificate and its private key"),
        ("missing keystore", "ssl.keystore: cannot read .*missing.p12"),
        ("wrong keystore password", "not a PKCS#12 keystore or ssl.keystore-password is wrong"),
        ("PEM given as keystore", "not a PKCS#12 keystore"),
    ],
)
def test_a_bad_file_or_password_names_the_option(
    certificates: Certificates, tmp_path: Path, case: str, message: str
) -> None:
    from tests.tls import make_certificates

    cert, key = certificates.certificate, certificates.key
    settings = {
        "missing certificate": TlsSettings(True, certificate=tmp_path / "missing.pem", key=key),
        "missing key": TlsSettings(True, certificate=cert, key=tmp_path / "missing.key"),
        "wrong key password": TlsSettings(
            True, certificate=cert, key=certificates.encrypted_key, key_password="nope"
        ),
        "key of another certificate": TlsSettings(
            True, certificate=cert, key=make_certificates(tmp_path / "other").key
        ),
        "missing keystore": TlsSettings(True, keystore=tmp_path / "missing.p12"),
        "wrong keystore password": TlsSettings(
            True, keystore=certificates.keystore, keystore_password="nope"
        ),
        "PEM given as keystore": TlsSettings(True, keystore=cert),
    }[case]
    with pytest.raises(ConfigurationError, match=message):
        settings.server_context()


# -- REST -----------------------------------------------------------------------


@pytest.fixture
def rest_tls(certificates: Certificates) -> Iterator[RestEndpoint]:
    settings = RestSettings(port=0, bind_ports=(0, 0), tls=_keystore(certificates))
    endpoint = RestEndpoint(FakeGatewayService(), settings)
    endpoint.start()
    try:
        yield endpoint
    finally:
        endpoint.stop()


def _trusting(ca: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca))


def test_rest_serves_https_to_a_client_that_trusts_its_ca(
    rest_tls: RestEndpoint, certificates: Certificates
) -> None:
    assert rest_tls.address == f"https://127.0.0.1:{rest_tls.port}"
    response = httpx.get(rest_tls.address + "/v1/info", verify=_trusting(certificates.ca))
    assert response.status_code == 200
    assert response.json()["productName"]
    # By host name too: the certificate names localhost as well as 127.0.0.1.
    by_name = f"https://localhost:{rest_tls.port}/v1/api_versions"
    assert httpx.get(by_name, verify=_trusting(certificates.ca)).status_code == 200


def test_curl_with_cacert(rest_tls: RestEndpoint, certificates: Certificates) -> None:
    curl = shutil.which("curl")
    assert curl is not None, "curl is part of the test machine"
    done = subprocess.run(
        [curl, "-sS", "--cacert", str(certificates.ca), rest_tls.address + "/v1/api_versions"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "V1" in done.stdout
    # Without the CA, curl refuses the server: it is not vouched for by a public CA.
    refused = subprocess.run(
        [curl, "-sS", rest_tls.address + "/v1/api_versions"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode != 0
    assert "certificate" in refused.stderr.lower()


def test_rest_wrong_ca_and_plain_http_are_refused_and_harm_no_one(
    rest_tls: RestEndpoint, certificates: Certificates
) -> None:
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(rest_tls.address + "/v1/info", verify=_trusting(certificates.other_ca))
    plain = f"http://127.0.0.1:{rest_tls.port}/v1/info"
    with pytest.raises(httpx.HTTPError):
        httpx.get(plain, timeout=10)
    # A connection that never starts its handshake holds nothing either.
    idle = socket.create_connection(("127.0.0.1", rest_tls.port))
    try:
        response = httpx.get(rest_tls.address + "/v1/info", verify=_trusting(certificates.ca))
        assert response.status_code == 200
    finally:
        idle.close()


def test_rest_factory_refuses_a_bad_keystore_password(certificates: Certificates) -> None:
    from sparkgate.api.endpoint import EndpointContext

    config = Configuration(
        {
            "port": "0",
            "ssl.enabled": "true",
            "ssl.keystore": str(certificates.keystore),
            "ssl.keystore-password": "wrong",
        }
    )
    with pytest.raises(ConfigurationError, match=f"{_REST}ssl.keystore-password is wrong"):
        RestEndpointFactory().create(EndpointContext(FakeGatewayService(), config, Configuration()))


# -- HiveServer2 --------------------------------------------------------------------


@pytest.fixture
def hs2_tls(certificates: Certificates) -> Iterator[HiveServer2Endpoint]:
    settings = HiveServer2Settings(
        port=0, http_port=0, transport_mode=TransportMode.ALL, tls=_pem(certificates)
    )
    endpoint = HiveServer2Endpoint(FakeGatewayService(), settings)
    endpoint.start()
    try:
        yield endpoint
    finally:
        endpoint.stop()


def _open_session(transport: Any) -> Any:
    transport.open()
    try:
        client = TCLIService.Client(TBinaryProtocol(transport))
        request = ttypes.TOpenSessionReq(
            client_protocol=ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10
        )
        return client.OpenSession(request).status.statusCode
    finally:
        transport.close()


def _tls_binary(port: int, ca: Path) -> Any:
    sock = TSSLSocket.TSSLSocket("127.0.0.1", port, ca_certs=str(ca))
    sock.setTimeout(30_000)
    return TTransport.TBufferedTransport(sock)


def test_hiveserver2_binary_over_tls(
    hs2_tls: HiveServer2Endpoint, certificates: Certificates
) -> None:
    assert hs2_tls.binary_port is not None
    status = _open_session(_tls_binary(hs2_tls.binary_port, certificates.ca))
    assert status == ttypes.TStatusCode.SUCCESS_STATUS


def test_hiveserver2_http_over_https(
    hs2_tls: HiveServer2Endpoint, certificates: Certificates
) -> None:
    assert hs2_tls.http_address == f"https://127.0.0.1:{hs2_tls.http_port}/cliservice"
    client = THttpClient.THttpClient(hs2_tls.http_address, ssl_context=_trusting(certificates.ca))
    assert _open_session(client) == ttypes.TStatusCode.SUCCESS_STATUS


def test_hiveserver2_plain_client_on_tls_port_is_refused_and_harms_no_one(
    hs2_tls: HiveServer2Endpoint, certificates: Certificates, caplog: pytest.LogCaptureFixture
) -> None:
    port = hs2_tls.binary_port
    assert port is not None
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(30_000)
    with caplog.at_level(logging.INFO, logger="sparkgate.endpoints.hiveserver2"):
        with pytest.raises((TTransport.TTransportException, EOFError, OSError)):
            _open_session(TTransport.TBufferedTransport(sock))
        assert wait_for(
            lambda: any("TLS handshake failed" in r.getMessage() for r in caplog.records)
        )
    # A TLS client that does not trust the server's CA is refused by its own side.
    with pytest.raises((TTransport.TTransportException, ssl.SSLError)):
        _open_session(_tls_binary(port, certificates.other_ca))
    idle = socket.create_connection(("127.0.0.1", port))  # never starts its handshake
    try:
        status = _open_session(_tls_binary(port, certificates.ca))
        assert status == ttypes.TStatusCode.SUCCESS_STATUS
    finally:
        idle.close()


def test_hiveserver2_tls_client_on_a_plain_port_is_told_why(
    certificates: Certificates, caplog: pytest.LogCaptureFixture
) -> None:
    endpoint = HiveServer2Endpoint(FakeGatewayService(), HiveServer2Settings(port=0))
    endpoint.start()
    try:
        assert endpoint.binary_port is not None
        with caplog.at_level(logging.INFO, logger="sparkgate.endpoints.hiveserver2"):
            with pytest.raises((TTransport.TTransportException, ssl.SSLError, OSError)):
                _open_session(_tls_binary(endpoint.binary_port, certificates.ca))
            assert wait_for(
                lambda: any(
                    "starts a TLS handshake, but the endpoint serves no TLS" in r.getMessage()
                    for r in caplog.records
                )
            )
    finally:
        endpoint.stop()


# -- the SQL client's side ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("localhost:8083", ("http", "localhost", 8083)),
        ("http://127.0.0.1:8083", ("http", "127.0.0.1", 8083)),
        ("https://gw.example.com:8443/", ("https", "gw.example.com", 8443)),
        ("https://[::1]:8443", ("https", "::1", 8443)),
    ],
)
def test_sql_client_endpoint_forms(text: str, expected: tuple[str, str, int]) -> None:
    from sparkgate.cli import _endpoint

    assert _endpoint(text) == expected


@pytest.mark.parametrize("text", ["ftp://host:21", "https://host", "host"])
def test_sql_client_refuses_other_endpoint_forms(text: str) -> None:
    from sparkgate.cli import _endpoint

    with pytest.raises(ConfigurationError, match="expected HOST:PORT or https://HOST:PORT"):
        _endpoint(text)


def test_sql_client_cacert(certificates: Certificates, tmp_path: Path) -> None:
    from sparkgate.client.credentials import trusted_certificates

    assert trusted_certificates(None) is True
    context = trusted_certificates(certificates.ca)
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("hello", encoding="utf-8")
    for bad in (not_pem, tmp_path / "missing.pem"):
        with pytest.raises(ConfigurationError, match=f"--cacert {bad}: not a readable PEM"):
            trusted_certificates(bad)


def test_a_busy_data_dir_points_the_sql_client_at_https() -> None:
    from sparkgate.server.datadir import _rest_endpoint
    from sparkgate.server.pidfiles import RunningGateway

    def holder(*addresses: str) -> RunningGateway:
        return RunningGateway(pid=1, addresses=addresses, started=0.0)

    assert _rest_endpoint(holder("https://127.0.0.1:8083")) == "https://127.0.0.1:8083"
    assert _rest_endpoint(holder("thrift://h:10000", "http://h:8083")) == "h:8083"
