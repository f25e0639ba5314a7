"""The certificates of a TLS listener configured without a keystore: a CA and a server
certificate it signed, generated once in ``DATA_DIR/tls/`` and reused across restarts.

- ``ca.pem``: the CA certificate, the file clients trust (``ssl.ca.location``,
  ``ssl_cafile``); ``ca-key.pem``: its private key (a test may sign client certificates
  with it: the listeners trust this CA for client authentication too);
- ``server.pem``: the server's private key and certificate chain (Kafka's PEM keystore
  layout), with subject alternative names: each such listener's host and advertised host,
  localhost and 127.0.0.1;
- ``server.json``: the names the server certificate covers and when it expires, so a
  restart that needs no new certificate reads no certificate (and does not import
  ``cryptography``). A server certificate that lacks a needed name or expires within a day
  is issued again by the same CA, so clients keep trusting ``ca.pem``.

Keys are ECDSA P-256 (generated in milliseconds; small handshakes); private keys are
written with mode 0600. ``cryptography`` is imported only to generate.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import time
from collections.abc import Iterable
from typing import Any, NamedTuple

from coordinator.config import ConfigError

__all__ = ["GeneratedCertificates", "generated_certificates"]

CA_FILE = "ca.pem"
CA_KEY_FILE = "ca-key.pem"
SERVER_FILE = "server.pem"
SERVER_INFO_FILE = "server.json"
_CA_DAYS = 3650
_SERVER_DAYS = 825
_RENEW_WITHIN_S = 86_400


class GeneratedCertificates(NamedTuple):
    directory: str
    ca: str
    #: Its private key, kept to issue the next server certificate (and client ones).
    ca_key: str
    server: str


def _names(hosts: Iterable[str]) -> list[str]:
    return sorted({h for h in (*hosts, "localhost", "127.0.0.1") if h})


def generated_certificates(directory: str, hosts: Iterable[str]) -> GeneratedCertificates:
    """The CA and a server certificate covering ``hosts`` in ``directory`` (created, or
    reused when they are there and still good); ConfigError when they cannot be written."""
    names = _names(hosts)
    files = GeneratedCertificates(directory, os.path.join(directory, CA_FILE),
                                  os.path.join(directory, CA_KEY_FILE),
                                  os.path.join(directory, SERVER_FILE))
    info_path = os.path.join(directory, SERVER_INFO_FILE)
    try:
        if _reusable(files, info_path, names):
            return files
        os.makedirs(directory, mode=0o700, exist_ok=True)
        _generate(files, info_path, names)
    except OSError as exc:
        raise ConfigError(f"cannot write TLS certificates in {directory}: "
                          f"{exc.strerror or exc}") from None
    return files


def _reusable(files: GeneratedCertificates, info_path: str, names: list[str]) -> bool:
    if not all(os.path.exists(path) for path in (files.ca, files.ca_key, files.server)):
        return False
    try:
        with open(info_path, encoding="utf-8") as f:
            info = json.load(f)
        covered, not_after = set(info["names"]), float(info["not_after"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return set(names) <= covered and not_after - time.time() > _RENEW_WITHIN_S


def _write(path: str, data: bytes, private: bool) -> None:
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _generate(files: GeneratedCertificates, info_path: str, names: list[str]) -> None:
    """A server certificate for ``names`` (and the CA first, if there is none)."""
    try:
        import cryptography  # noqa: F401  (an optional dependency: kcoord[tls])
    except ImportError:
        raise ConfigError("a TLS listener without ssl.keystore.location needs the "
                          "cryptography package to generate its certificate (pip install "
                          "'kcoord[tls]')") from None
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    pem = serialization.Encoding.PEM
    if os.path.exists(files.ca) and os.path.exists(files.ca_key):
        with open(files.ca, "rb") as f:
            ca_cert = x509.load_pem_x509_certificate(f.read())
        with open(files.ca_key, "rb") as f:
            ca_key: Any = serialization.load_pem_private_key(f.read(), None)
    else:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kcoord"),
                             x509.NameAttribute(NameOID.COMMON_NAME, "kcoord test CA")])
        ca_cert = (
            x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
            .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=_CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
        _write(files.ca_key, ca_key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()), True)
        _write(files.ca, ca_cert.public_bytes(pem), False)
    key = ec.generate_private_key(ec.SECP256R1())
    alternative: list[x509.GeneralName] = []
    for name in names:
        try:
            alternative.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alternative.append(x509.DNSName(name))
    not_after = now + datetime.timedelta(days=_SERVER_DAYS)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kcoord"),
                                 x509.NameAttribute(NameOID.COMMON_NAME, "kcoord server")]))
        .issuer_name(ca_cert.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName(alternative), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                       critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
            ca_cert.public_key()), critical=False)  # type: ignore[arg-type]
        .sign(ca_key, hashes.SHA256()))
    _write(files.server, key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        + cert.public_bytes(pem) + ca_cert.public_bytes(pem), True)
    _write(info_path, json.dumps({"names": names, "not_after": not_after.timestamp()}).encode(),
           False)
