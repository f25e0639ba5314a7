"""The TLS server context of each SSL and SASL_SSL listener, from Kafka's ``ssl.*`` keys
(``listener.name.<name>.ssl.*`` first): imported only when such a listener is configured.

- ``ssl.keystore.type=PEM`` (the only type kcoord reads; JKS and PKCS12 are refused) with
  ``ssl.keystore.location`` (private key and certificate chain in one PEM file) or inline
  ``ssl.keystore.certificate.chain`` + ``ssl.keystore.key``; ``ssl.key.password`` for an
  encrypted key. No keystore: the generated certificates (``tls_certificates.py``).
- ``ssl.truststore.location`` (PEM) or inline ``ssl.truststore.certificates``: the CAs
  client certificates are checked against (with generated certificates, their CA too).
- ``ssl.client.auth=none|requested|required`` (Kafka's default: none; on a SASL_SSL
  listener only ``listener.name.<name>.ssl.client.auth`` counts, as in Kafka since KIP-684,
  and the principal stays the SASL one).
- ``ssl.enabled.protocols``: TLSv1.2 and/or TLSv1.3 (default both).

Every mistake is a one-line ConfigError before anything listens.
"""

from __future__ import annotations

import os
import socket
import ssl
import tempfile
from collections.abc import Callable, Mapping, Sequence

from coordinator.config import ConfigError
from coordinator.server.listeners import Listener, listener_value
from coordinator.server.tls_certificates import GeneratedCertificates, generated_certificates

__all__ = ["tls_contexts"]

TLS_DIRECTORY = "tls"
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL,
                "required": ssl.CERT_REQUIRED}
_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})
#: A listener's value of an ``ssl.*`` key (None: not given).
_Getter = Callable[[str], "str | None"]


def _has_keystore(properties: Mapping[str, str], listener: Listener) -> bool:
    return any(listener_value(properties, listener, key) is not None for key in (
        "ssl.keystore.location", "ssl.keystore.certificate.chain", "ssl.keystore.key"))


def tls_contexts(properties: Mapping[str, str], listeners: Sequence[Listener],
                 data_dir: str | None) -> dict[str, tuple[ssl.SSLContext, str | None]]:
    """The server context of each TLS listener by name, with the CA file clients trust
    when its certificate is the generated one. Every setting is checked before anything
    is generated."""
    secured = [listener for listener in listeners if listener.tls]
    for listener in secured:
        _check(properties, listener)
    hosts = []
    for listener in secured:
        if not _has_keystore(properties, listener):
            hosts.append(listener.host if listener.host not in _WILDCARD_HOSTS
                         else socket.gethostname())
            hosts.append(listener.advertised_host or "")
    generated = None
    if hosts:
        directory = (os.path.join(data_dir, TLS_DIRECTORY) if data_dir is not None
                     else tempfile.mkdtemp(prefix="kcoord-tls-"))
        generated = generated_certificates(directory, hosts)
    out = {}
    for listener in secured:
        own = None if _has_keystore(properties, listener) else generated
        out[listener.name] = (_context(properties, listener, own),
                              None if own is None else own.ca)
    return out


def _value(properties: Mapping[str, str], listener: Listener, key: str) -> str | None:
    value = listener_value(properties, listener, key)
    return None if value is None or not value.strip() else value.strip()


def _check(properties: Mapping[str, str], listener: Listener) -> None:
    """ConfigError for a setting of ``listener`` that cannot work (nothing is loaded)."""
    def get(key: str) -> str | None:
        return _value(properties, listener, key)

    for kind in ("keystore", "truststore"):
        store_type = (get(f"ssl.{kind}.type") or "PEM").upper()
        if store_type != "PEM":
            raise ConfigError(f"ssl.{kind}.type={store_type} (listener {listener.name}): "
                              "kcoord reads PEM stores only (ssl.keystore.type=PEM)")
    if get("ssl.keystore.password") is not None:  # Kafka's message
        raise ConfigError("SSL key store password cannot be specified with PEM format, "
                          "only key password may be specified (ssl.key.password)")
    if get("ssl.truststore.password") is not None:
        raise ConfigError("SSL trust store password cannot be specified for PEM format "
                          "(ssl.truststore.password)")
    auth = _client_auth(properties, listener)
    if auth not in _CLIENT_AUTH:
        raise ConfigError(f"Invalid value {auth} for configuration ssl.client.auth: String "
                          "must be one of: required, requested, none")
    _protocols(get("ssl.enabled.protocols"))
    location = get("ssl.keystore.location")
    chain, key = get("ssl.keystore.certificate.chain"), get("ssl.keystore.key")
    if location is not None and (chain is not None or key is not None):
        raise ConfigError("ssl.keystore.location cannot be given with "
                          "ssl.keystore.certificate.chain/ssl.keystore.key")
    if (chain is None) != (key is None):
        raise ConfigError("ssl.keystore.certificate.chain and ssl.keystore.key are given "
                          "together (the inline PEM keystore)")
    for store in ("keystore", "truststore"):
        path = get(f"ssl.{store}.location")
        if path is not None and not os.path.isfile(path):
            raise ConfigError(f"ssl.{store}.location {path} (listener {listener.name}): "
                              "no such file")
    trusted = get("ssl.truststore.location") or get("ssl.truststore.certificates")
    if auth != "none" and not trusted and _has_keystore(properties, listener):
        raise ConfigError(f"ssl.client.auth={auth} (listener {listener.name}) needs "
                          "ssl.truststore.location: the CAs client certificates are checked "
                          "against")


def _context(properties: Mapping[str, str], listener: Listener,
             generated: GeneratedCertificates | None) -> ssl.SSLContext:
    def get(key: str) -> str | None:
        return _value(properties, listener, key)

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.num_tickets = 0  # (Kafka clients do not resume TLS 1.3 sessions)
    context.minimum_version, context.maximum_version = _protocols(
        get("ssl.enabled.protocols"))
    _load_keystore(context, get, generated)
    _load_truststore(context, get, generated)
    context.verify_mode = _CLIENT_AUTH[_client_auth(properties, listener)]
    return context


def _client_auth(properties: Mapping[str, str], listener: Listener) -> str:
    """``ssl.client.auth``; on a SASL_SSL listener only its ``listener.name.`` key counts
    (Kafka, KIP-684: the broker-wide key is for SSL listeners)."""
    if listener.sasl:
        value = properties.get(f"listener.name.{listener.name.lower()}.ssl.client.auth")
    else:
        value = listener_value(properties, listener, "ssl.client.auth")
    return (value or "none").strip().lower()


def _protocols(value: str | None) -> tuple[ssl.TLSVersion, ssl.TLSVersion]:
    """``ssl.enabled.protocols`` as (minimum, maximum) version."""
    names = [n.strip() for n in (value or "TLSv1.2,TLSv1.3").split(",") if n.strip()]
    unknown = [n for n in names if n not in _PROTOCOLS]
    if unknown or not names:
        raise ConfigError(f"ssl.enabled.protocols={value!r}: kcoord serves "
                          f"{' and '.join(_PROTOCOLS)}")
    versions = sorted(_PROTOCOLS[n] for n in names)
    return versions[0], versions[-1]


def _load_keystore(context: ssl.SSLContext, get: _Getter,
                   generated: GeneratedCertificates | None) -> None:
    location = get("ssl.keystore.location")
    chain, key = get("ssl.keystore.certificate.chain"), get("ssl.keystore.key")
    password = get("ssl.key.password")
    if chain is not None and key is not None:
        with tempfile.TemporaryDirectory(prefix="kcoord-keystore-") as tmp:
            path = os.path.join(tmp, "keystore.pem")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(f"{key}\n{chain}\n")
            _load_chain(context, path, password, "ssl.keystore.certificate.chain/key")
        return
    if location is None:
        assert generated is not None  # (every TLS listener without a keystore has them)
        location = generated.server
    _load_chain(context, location, password, f"ssl.keystore.location {location}")


def _load_chain(context: ssl.SSLContext, path: str, password: str | None, what: str) -> None:
    try:
        context.load_cert_chain(path, password=password)
    except ssl.SSLError as exc:
        raise ConfigError(f"{what}: not a PEM private key and certificate chain kcoord can "
                          f"read ({exc.reason or exc}; an encrypted key needs "
                          "ssl.key.password)") from None
    except OSError as exc:
        raise ConfigError(f"{what}: {exc.strerror or exc}") from None


def _load_truststore(context: ssl.SSLContext, get: _Getter,
                     generated: GeneratedCertificates | None) -> None:
    """Load the CAs client certificates are checked against (with generated
    certificates and no truststore: their CA)."""
    location, inline = get("ssl.truststore.location"), get("ssl.truststore.certificates")
    try:
        if location is not None:
            context.load_verify_locations(cafile=location)
        if inline is not None:
            context.load_verify_locations(cadata=inline)
        if generated is not None and location is None and inline is None:
            context.load_verify_locations(cafile=generated.ca)
    except ssl.SSLError as exc:
        raise ConfigError(f"ssl.truststore: no PEM certificate kcoord can read "
                          f"({exc.reason or exc})") from None
    except OSError as exc:
        raise ConfigError(f"ssl.truststore.location {location}: "
                          f"{exc.strerror or exc}") from None
