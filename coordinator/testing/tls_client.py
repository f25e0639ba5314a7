"""Client certificates for mutual TLS against a kcoord TLS listener that generated its
certificates (``DATA_DIR/tls/``, ``coordinator.server.tls_certificates``): the listener
trusts that CA for client authentication, so a certificate signed with its key is accepted
with ``ssl.client.auth=required``, and the connection's principal is ``User:`` + the
certificate's distinguished name (Java's RFC 2253 form: ``CN=...,OU=...,O=...``).

Needs ``cryptography`` (imported when called).
"""

from __future__ import annotations

import datetime
import os
from typing import Any, NamedTuple

__all__ = ["ClientCertificate", "issue_client_certificate"]


class ClientCertificate(NamedTuple):
    #: The certificate (PEM) and its private key (PEM, unencrypted).
    certificate: str
    key: str


def issue_client_certificate(tls_dir: str, out_dir: str, common_name: str,
                             organizational_unit: str | None = None,
                             organization: str | None = None) -> ClientCertificate:
    """A client certificate for ``CN=common_name[,OU=...][,O=...]`` signed by the CA in
    ``tls_dir`` (``ca.pem``, ``ca-key.pem``), written to ``out_dir``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    with open(os.path.join(tls_dir, "ca.pem"), "rb") as f:
        ca_cert = x509.load_pem_x509_certificate(f.read())
    with open(os.path.join(tls_dir, "ca-key.pem"), "rb") as f:
        ca_key: Any = serialization.load_pem_private_key(f.read(), None)
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization)] if (
        organization) else []
    if organizational_unit:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME,
                                             organizational_unit))
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(x509.Name(attributes))
        .issuer_name(ca_cert.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False)
        .sign(ca_key, hashes.SHA256()))
    os.makedirs(out_dir, exist_ok=True)
    paths = ClientCertificate(os.path.join(out_dir, f"{common_name}.pem"),
                              os.path.join(out_dir, f"{common_name}-key.pem"))
    with open(paths.certificate, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    fd = os.open(paths.key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return paths
