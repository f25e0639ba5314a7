"""TLS listeners in process (issue 29): the handshake's deadline, the principal a client
certificate gives (and SASL's over it on SASL_SSL), an inline PEM keystore, the generated
certificates reused or re-issued by the same CA, and what is imported when. Raw frames
over real TLS connections (trio's SSLStream on the client side too)."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from raw_client import RawClient

from coordinator.server import tls_connection
from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from coordinator.testing.tls_client import issue_client_certificate
from wire import ApiKey

#: The inline keystore's PASSWORD keys.
SECRETS = ("ssl.key.password", "ssl.keystore.certificate.chain", "ssl.keystore.key")


async def _start(nursery: trio.Nursery, props: dict[str, str], data_dir: Path,
                 **kwargs: Any) -> RunningServer:
    options = build_options({"group.initial.rebalance.delay.ms": "0", **props},
                            data_dir=str(data_dir), **kwargs)
    running: RunningServer = await nursery.start(serve, options)
    return running


async def _tls_client(port: int, ca: str, cert: Any = None) -> RawClient:
    context = ssl.create_default_context(cafile=ca)
    if cert is not None:
        context.load_cert_chain(cert.certificate, cert.key)
    tcp = await trio.open_tcp_stream("127.0.0.1", port)
    stream = trio.SSLStream(tcp, context, server_hostname="localhost")
    await stream.do_handshake()
    return RawClient(stream)  # type: ignore[arg-type]


def _principals(running: RunningServer) -> list[str]:
    return [conn.principal for conn in running.server.connections.values()]


@pytest.mark.trio
async def test_a_client_that_never_handshakes_is_closed_at_the_deadline(
    nursery: trio.Nursery, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tls_connection, "TLS_HANDSHAKE_DEADLINE_S", 0.3)
    running = await _start(nursery, {"listeners": "SSL://127.0.0.1:0"}, tmp_path / "d")
    silent = await trio.open_tcp_stream("127.0.0.1", running.port)
    slow = await trio.open_tcp_stream("127.0.0.1", running.port)
    await slow.send_all(b"\x16\x03")  # the start of a ClientHello, and no more
    with trio.fail_after(10):
        assert await silent.receive_some(10) == b""
        assert await slow.receive_some(10) == b""
    await silent.aclose()
    await slow.aclose()
    assert running.server.connections == {}
    # ... and a client that handshakes is served.
    client = await _tls_client(running.port, str(tmp_path / "d" / "tls" / "ca.pem"))
    answer = await client.request(ApiKey.METADATA, 12, {"topics": []})
    assert [b.port for b in answer.brokers] == [running.port]
    await client.aclose()


@pytest.mark.trio
async def test_a_client_certificate_is_the_principal(nursery: trio.Nursery,
                                                     tmp_path: Path) -> None:
    running = await _start(nursery, {"listeners": "SSL://127.0.0.1:0",
                                     "ssl.client.auth": "requested"}, tmp_path / "d")
    tls = tmp_path / "d" / "tls"
    cert = issue_client_certificate(str(tls), str(tmp_path / "c"), "bob, jr", "Ops",
                                    "Example")
    with_cert = await _tls_client(running.port, str(tls / "ca.pem"), cert)
    await with_cert.request(ApiKey.API_VERSIONS, 3, {"client_software_name": "t",
                                                     "client_software_version": "1"})
    assert _principals(running) == ["User:CN=bob\\, jr,OU=Ops,O=Example"]
    await with_cert.aclose()
    # Requested, not required: a client without a certificate is ANONYMOUS.
    without = await _tls_client(running.port, str(tls / "ca.pem"))
    await without.request(ApiKey.API_VERSIONS, 3, {"client_software_name": "t",
                                                   "client_software_version": "1"})
    with trio.fail_after(5):
        while len(running.server.connections) > 1:
            await trio.sleep(0.01)
    assert _principals(running) == ["User:ANONYMOUS"]
    await without.aclose()


@pytest.mark.trio
async def test_on_sasl_ssl_the_sasl_user_is_the_principal(nursery: trio.Nursery,
                                                          tmp_path: Path) -> None:
    running = await _start(nursery, {"listeners": "SASL_SSL://127.0.0.1:0",
                                     "listener.name.sasl_ssl.ssl.client.auth": "required"},
                           tmp_path / "d",
                           sasl_users=(("alice", "alice-secret"),))
    tls = tmp_path / "d" / "tls"
    cert = issue_client_certificate(str(tls), str(tmp_path / "c"), "carol")
    client = await _tls_client(running.port, str(tls / "ca.pem"), cert)
    handshake = await client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    assert handshake.error_code == 0
    answer = await client.request(ApiKey.SASL_AUTHENTICATE, 2,
                                  {"auth_bytes": b"\0alice\0alice-secret"})
    assert answer.error_code == 0
    assert _principals(running) == ["User:alice"]
    # Before authenticating, anything but the SASL requests closes the connection.
    other = await _tls_client(running.port, str(tls / "ca.pem"), cert)
    await other.send(ApiKey.METADATA, 12, {"topics": []})
    with trio.fail_after(5):
        assert await other.closed_by_server()
    await trio.aclose_forcefully(other.stream)
    await client.aclose()
    # Required on this listener: a client without a certificate fails its handshake.
    refused = await _tls_client(running.port, str(tls / "ca.pem"))  # (TLS 1.3: then refused)
    await refused.send(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    with trio.fail_after(5):
        assert await refused.closed_by_server()
    await trio.aclose_forcefully(refused.stream)


@pytest.mark.trio
async def test_on_sasl_ssl_only_the_listener_key_asks_for_client_certificates(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    running = await _start(nursery, {"listeners": "SASL_SSL://127.0.0.1:0",
                                     "ssl.client.auth": "required"}, tmp_path / "d",
                           sasl_users=(("alice", "alice-secret"),))
    client = await _tls_client(running.port, str(tmp_path / "d" / "tls" / "ca.pem"))
    handshake = await client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    assert handshake.error_code == 0  # no certificate needed: the key is SSL listeners'
    await client.aclose()


@pytest.mark.trio
async def test_an_inline_pem_keystore_is_served(nursery: trio.Nursery, tmp_path: Path) -> None:
    # A key and chain to inline: the generated ones of another server's data directory.
    from coordinator.server.tls_certificates import generated_certificates

    files = generated_certificates(str(tmp_path / "elsewhere"), ["localhost"])
    pem = Path(files.server).read_text()
    cut = pem.index("-----BEGIN CERTIFICATE-----")
    running = await _start(nursery, {"listeners": "SSL://127.0.0.1:0",
                                     "ssl.keystore.type": "PEM",
                                     "ssl.keystore.key": pem[:cut],
                                     "ssl.key.password": "unused",
                                     "ssl.keystore.certificate.chain": pem[cut:]},
                           tmp_path / "d")
    assert not (tmp_path / "d" / "tls").exists()  # nothing generated
    client = await _tls_client(running.port, files.ca)
    answer = await client.request(ApiKey.METADATA, 12, {"topics": []})
    assert [b.port for b in answer.brokers] == [running.port]
    # The private key is not configuration DescribeConfigs shows (Kafka: a PASSWORD key).
    described = await client.request(ApiKey.DESCRIBE_CONFIGS, 4, {"resources": [
        {"resource_type": 4, "resource_name": "0", "configuration_keys": None}],
        "include_synonyms": False, "include_documentation": False})
    values = {c.name: c.value for c in described.results[0].configs}
    assert values["ssl.keystore.type"] == "PEM"
    # Kafka lists a PASSWORD key as set (STATIC_BROKER_CONFIG), sensitive, without its value.
    secrets = [(c.name, c.value, c.is_sensitive, c.config_type, c.config_source)
               for c in described.results[0].configs if c.name in SECRETS]
    assert secrets == [(name, None, True, 9, 4) for name in sorted(SECRETS)]
    assert not any("PRIVATE KEY" in (value or "") for value in values.values())
    await client.aclose()


def test_generated_certificates_are_reused_or_reissued_by_the_same_ca(tmp_path: Path) -> None:
    from coordinator.server.tls_certificates import generated_certificates

    first = generated_certificates(str(tmp_path), ["kafka-1"])
    ca, server = Path(first.ca).read_bytes(), Path(first.server).read_bytes()
    assert oct(os.stat(first.server).st_mode & 0o777) == "0o600"
    assert oct(os.stat(first.ca_key).st_mode & 0o777) == "0o600"
    generated_certificates(str(tmp_path), ["kafka-1", "localhost"])  # covered: reused
    assert Path(first.server).read_bytes() == server
    generated_certificates(str(tmp_path), ["kafka-2"])  # a new name: a new server cert
    assert Path(first.server).read_bytes() != server
    assert Path(first.ca).read_bytes() == ca  # ... by the same CA
    context = ssl.create_default_context(cafile=first.ca)
    context.load_cert_chain(first.server)  # key and chain in one file, as Kafka's PEM


@pytest.mark.parametrize("properties,imported", [
    ("{}", False),
    ("{'listeners': 'SSL://127.0.0.1:0'}", True),  # generating: cryptography
])
def test_cryptography_is_imported_only_to_generate(tmp_path: Path, properties: str,
                                                   imported: bool) -> None:
    code = ("import sys\nfrom coordinator.server.options import build_options\n"
            f"build_options({properties}, data_dir={str(tmp_path)!r})\n"
            "print('cryptography' in sys.modules)")
    run = [sys.executable, "-c", code]
    first = subprocess.run(run, capture_output=True, text=True, timeout=60, check=True)
    assert first.stdout.strip() == str(imported)
    # A restart reuses what was generated: no cryptography then either.
    again = subprocess.run(run, capture_output=True, text=True, timeout=60, check=True)
    assert again.stdout.strip() == "False"
