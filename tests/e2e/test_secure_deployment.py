"""The gateway deployed as docs/security.md says: LDAP authentication (a real
``slapd``), REST over HTTPS (a PKCS#12 keystore) and HiveServer2 binary with
SSL and HTTP over HTTPS (PEM files), started with ``sparkgate gateway
start-foreground``. Every client a user brings logs in over TLS: curl, the SQL
client, PyHive, impyla, beeline and dbt-spark; each sees the LDAP user as
Spark's ``current_user()``, and a client without TLS or credentials is refused
while the others go on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.hiveserver2.conftest import (
    DBT_REQUIREMENTS,
    IMPYLA_REQUIREMENTS,
    client_venv,
    pyhive_python,
    run_client,
)
from tests.hiveserver2.test_clients import DBT_PROJECT, beeline_path
from tests.ldap_server import SlapdServer
from tests.processes import foreground_gateway, free_port, spark_options
from tests.tls import STORE_PASSWORD, Certificates

__all__ = ["pyhive_python"]  # the client venv fixture, shared with the HiveServer2 tests


@dataclass(frozen=True)
class SecureGateway:
    url: str
    binary: int
    http: int
    user: str
    password: str
    certificates: Certificates
    data_dir: Path


@pytest.fixture(scope="module")
def secure_gateway(
    tmp_path_factory: pytest.TempPathFactory, slapd: SlapdServer, certificates: Certificates
) -> Iterator[SecureGateway]:
    data_dir = tmp_path_factory.mktemp("secure-gateway")
    rest, binary, http = free_port(), free_port(), free_port()
    ann = slapd.users["ann"]
    rest_prefix = "-Dsql-gateway.endpoint.rest."
    hs2_prefix = "-Dsql-gateway.endpoint.hiveserver2."
    options = [
        f"-Dsql-gateway.data-dir={data_dir}",
        "-Dsql-gateway.endpoint.type=rest;hiveserver2",
        "-Dsql-gateway.authentication=ldap",
        f"-Dsql-gateway.authentication.ldap.url={slapd.url}",
        f"-Dsql-gateway.authentication.ldap.user-dn-pattern={slapd.user_dn_pattern}",
        f"{rest_prefix}port={rest}",
        f"{rest_prefix}ssl.enabled=true",
        f"{rest_prefix}ssl.keystore={certificates.keystore}",
        f"{rest_prefix}ssl.keystore-password={STORE_PASSWORD}",
        f"{hs2_prefix}port={binary}",
        f"{hs2_prefix}transport-mode=all",
        f"{hs2_prefix}http.port={http}",
        f"{hs2_prefix}ssl.enabled=true",
        f"{hs2_prefix}ssl.certificate={certificates.certificate}",
        f"{hs2_prefix}ssl.key={certificates.key}",
        *spark_options(),
        "-Dspark.ui.enabled=false",
        "-Dspark.sql.shuffle.partitions=2",
    ]
    env = {**os.environ, "SPARKGATE_CONF_DIR": ""}
    with foreground_gateway(options, port=rest, cwd=data_dir, env=env, ca=certificates.ca) as (
        url,
        _process,
    ):
        yield SecureGateway(url, binary, http, ann.uid, ann.password, certificates, data_dir)


def _curl(gateway: SecureGateway, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["curl", "-sS", "--cacert", str(gateway.certificates.ca), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_curl_opens_a_session_over_https_with_the_ldap_password(
    secure_gateway: SecureGateway,
) -> None:
    sessions = f"{secure_gateway.url}/v1/sessions"
    body = ["-H", "Content-Type: application/json", "-d", "{}"]
    opened = _curl(
        secure_gateway, "-u", f"{secure_gateway.user}:{secure_gateway.password}", *body, sessions
    )
    assert opened.returncode == 0, opened.stderr
    assert json.loads(opened.stdout)["sessionHandle"]
    for credentials in ([], ["-u", f"{secure_gateway.user}:wrong"], ["-u", "nobody:x"]):
        refused = _curl(
            secure_gateway, "-o", "/dev/null", "-w", "%{http_code}", *credentials, *body, sessions
        )
        assert refused.stdout == "401", (credentials, refused.stderr)
    # Plain HTTP to the HTTPS port gets no answer; the endpoint goes on serving.
    plain = _curl(secure_gateway, sessions.replace("https://", "http://"))
    assert plain.returncode != 0
    again = _curl(
        secure_gateway, "-u", f"{secure_gateway.user}:{secure_gateway.password}", *body, sessions
    )
    assert json.loads(again.stdout)["sessionHandle"]


def test_sql_client_over_https(secure_gateway: SecureGateway, tmp_path: Path) -> None:
    script = tmp_path / "query.sql"
    script.write_text(
        "SELECT TIMESTAMP '2024-05-06 07:08:09.123' AS ts, CAST(12.345 AS DECIMAL(10, 3)) AS d, "
        "current_user() AS who;\n",
        encoding="utf-8",
    )
    host_port = secure_gateway.url.removeprefix("https://")
    base = [
        sys.executable,
        "-m",
        "sparkgate.cli",
        "sql",
        "gateway",
        "-u",
        secure_gateway.user,
        "-f",
        str(script),
    ]
    env = {**os.environ, "SPARKGATE_PASSWORD": secure_gateway.password, "SSL_CERT_FILE": ""}
    done = subprocess.run(
        [*base, "-e", secure_gateway.url, "--cacert", str(secure_gateway.certificates.ca)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2024-05-06 07:08:09.123" in done.stdout
    assert "12.345" in done.stdout
    assert f"| {secure_gateway.user} " in done.stdout
    # Without the CA the client does not trust the server, and says so.
    untrusted = subprocess.run(
        [*base, "-e", secure_gateway.url],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert untrusted.returncode != 0
    assert "CERTIFICATE_VERIFY_FAILED" in untrusted.stdout + untrusted.stderr
    assert "pass that CA with --cacert FILE" in untrusted.stdout + untrusted.stderr
    # HOST:PORT alone means plain HTTP, which the HTTPS port does not answer.
    plain = subprocess.run(
        [*base, "-e", host_port],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert plain.returncode != 0
    assert "connect with -e https://HOST:PORT" in plain.stdout + plain.stderr


PYHIVE_TLS_SCRIPT = r"""
import json, os, sys
transport_kind, port, user, password, ca = sys.argv[1:6]
os.environ["SSL_CERT_FILE"] = ca  # what create_default_context() trusts (PyHive's https)
from pyhive import hive
if transport_kind == "binary":
    import thrift_sasl
    from pyhive.sasl_compat import PureSASLClient
    from thrift.transport.TSSLSocket import TSSLSocket
    sock = TSSLSocket("127.0.0.1", int(port), ca_certs=ca)
    transport = thrift_sasl.TSaslClientTransport(
        lambda: PureSASLClient("127.0.0.1", username=user, password=password), "PLAIN", sock
    )
    conn = hive.connect(thrift_transport=transport)
else:
    conn = hive.connect("localhost", port=int(port), scheme="https", username=user,
                        password=password, ssl_cert="required", check_hostname="true")
cur = conn.cursor()
cur.execute("SELECT current_user() AS who, CAST(12.345 AS DECIMAL(10, 3)) AS d, "
            "TIMESTAMP '2024-05-06 07:08:09.123' AS ts")
row = [str(v) for v in cur.fetchone()]
conn.close()
print(json.dumps({"row": row}))
"""


@pytest.mark.parametrize("transport", ["binary", "http"])
def test_pyhive_over_tls(
    secure_gateway: SecureGateway, pyhive_python: Path, transport: str
) -> None:
    port = secure_gateway.binary if transport == "binary" else secure_gateway.http
    out = run_client(
        pyhive_python,
        PYHIVE_TLS_SCRIPT,
        transport,
        str(port),
        secure_gateway.user,
        secure_gateway.password,
        str(secure_gateway.certificates.ca),
    )
    assert out["row"] == [secure_gateway.user, "12.345", "2024-05-06 07:08:09.123000"]


def test_pyhive_without_tls_or_with_a_wrong_password_is_refused(
    secure_gateway: SecureGateway, pyhive_python: Path
) -> None:
    script = (
        "import json, sys\nfrom pyhive import hive\n"
        "try:\n"
        "    hive.connect('127.0.0.1', port=int(sys.argv[1]), username=sys.argv[2], "
        "auth='LDAP', password=sys.argv[3]).cursor().execute('SELECT 1')\n"
        "    print(json.dumps({'error': None}))\n"
        "except Exception as exc:\n"
        "    print(json.dumps({'error': type(exc).__name__}))\n"
    )
    plain = run_client(
        pyhive_python,
        script,
        str(secure_gateway.binary),
        secure_gateway.user,
        secure_gateway.password,
    )
    assert plain["error"] is not None
    proc = subprocess.run(
        [
            str(pyhive_python),
            "-c",
            PYHIVE_TLS_SCRIPT,
            "binary",
            str(secure_gateway.binary),
            secure_gateway.user,
            "wrong-password",
            str(secure_gateway.certificates.ca),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert "Authentication failed" in proc.stderr or "Bad status" in proc.stderr, proc.stderr


IMPYLA_TLS_SCRIPT = r"""
import json, sys
from impala.dbapi import connect
transport, port, user, password, ca = sys.argv[1:6]
kw = dict(host="127.0.0.1", port=int(port), use_ssl=True, ca_cert=ca, auth_mechanism="LDAP",
          user=user, password=password)
if transport == "http":
    kw.update(use_http_transport=True, http_path="cliservice")
conn = connect(**kw)
cur = conn.cursor()
cur.execute("SELECT current_user() AS who, CAST(12.345 AS DECIMAL(10, 3)) AS d")
row = [str(v) for v in cur.fetchone()]
conn.close()
print(json.dumps({"row": row}))
"""


@pytest.mark.parametrize("transport", ["binary", "http"])
def test_impyla_over_tls(secure_gateway: SecureGateway, transport: str) -> None:
    python = client_venv("impyla", IMPYLA_REQUIREMENTS)
    port = secure_gateway.binary if transport == "binary" else secure_gateway.http
    out = run_client(
        python,
        IMPYLA_TLS_SCRIPT,
        transport,
        str(port),
        secure_gateway.user,
        secure_gateway.password,
        str(secure_gateway.certificates.ca),
    )
    assert out["row"] == [secure_gateway.user, "12.345"]


def _beeline(url: str, gateway: SecureGateway, password: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(beeline_path()),
            "-u",
            url,
            "-n",
            gateway.user,
            "-p",
            password,
            "--outputformat=csv2",
            "-e",
            "SELECT current_user() AS who, CAST(12.345 AS DECIMAL(10, 3)) AS d",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("transport", ["binary", "http"])
def test_beeline_over_tls(secure_gateway: SecureGateway, transport: str) -> None:
    trust = (
        f";ssl=true;sslTrustStore={secure_gateway.certificates.truststore}"
        f";trustStorePassword={STORE_PASSWORD}"
    )
    if transport == "binary":
        url = f"jdbc:hive2://127.0.0.1:{secure_gateway.binary}/default{trust}"
    else:
        url = (
            f"jdbc:hive2://127.0.0.1:{secure_gateway.http}/default{trust}"
            ";transportMode=http;httpPath=cliservice"
        )
    done = _beeline(url, secure_gateway, secure_gateway.password)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"who,d\n{secure_gateway.user},12.345\n" in done.stdout
    refused = _beeline(url, secure_gateway, "wrong-password")
    assert refused.returncode != 0
    assert "who,d" not in refused.stdout


_DBT_TLS_PROFILES = """
hs2_dbt:
  target: dev
  outputs:
    dev:
      type: spark
      method: thrift
      host: 127.0.0.1
      port: {port}
      schema: hs2_dbt_tls
      user: {user}
      password: "{password}"
      auth: LDAP
      use_ssl: true
      threads: 1
      connect_retries: 0
"""


def test_dbt_spark_over_tls_with_ldap(
    secure_gateway: SecureGateway, tmp_path: Path, pyhive_python: Path
) -> None:
    python = client_venv("dbt", DBT_REQUIREMENTS)
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(DBT_PROJECT, encoding="utf-8")
    (project / "profiles.yml").write_text(
        _DBT_TLS_PROFILES.format(
            port=secure_gateway.binary, user=secure_gateway.user, password=secure_gateway.password
        ),
        encoding="utf-8",
    )
    (project / "models" / "owners.sql").write_text(
        "{{ config(materialized='table') }}\nselect current_user() as who, id from range(2)\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            str(python.parent / "dbt"),
            "run",
            "--project-dir",
            str(project),
            "--profiles-dir",
            str(project),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=project,
        env={**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Completed successfully" in done.stdout
    check = run_client(
        pyhive_python,
        PYHIVE_TLS_SCRIPT.replace(
            '"SELECT current_user() AS who, CAST(12.345 AS DECIMAL(10, 3)) AS d, "\n'
            "            \"TIMESTAMP '2024-05-06 07:08:09.123' AS ts\"",
            '"SELECT who, count(*) FROM hs2_dbt_tls.owners GROUP BY who"',
        ),
        "binary",
        str(secure_gateway.binary),
        secure_gateway.user,
        secure_gateway.password,
        str(secure_gateway.certificates.ca),
    )
    assert check["row"] == [secure_gateway.user, "2"]


def test_the_audit_log_names_who_did_what_from_where(secure_gateway: SecureGateway) -> None:
    """After the clients above (or on its own): the REST and HiveServer2 logins and
    statements are in the audit log with the LDAP user and the client's address,
    and no password is."""
    _curl(
        secure_gateway,
        "-u",
        f"{secure_gateway.user}:not-the-password",
        "-H",
        "Content-Type: application/json",
        "-d",
        "{}",
        f"{secure_gateway.url}/v1/sessions",
    )
    audit = secure_gateway.data_dir / "log" / "audit.log"
    text = audit.read_text(encoding="utf-8")
    assert secure_gateway.password not in text and "not-the-password" not in text
    records = [json.loads(line) for line in text.splitlines()]
    refused = [r for r in records if r["event"] == "login-refused"]
    assert any(r["user"] == secure_gateway.user and r["address"] == "127.0.0.1" for r in refused)
    opened = [r for r in records if r["event"] == "session-opened"]
    assert opened and all(r["address"] == "127.0.0.1" for r in opened)
    assert {r["user"] for r in opened} == {secure_gateway.user}
