"""Kafka's ``listeners``, ``advertised.listeners`` and ``listener.security.protocol.map``
keys and the SASL and TLS keys that go with them, parsed without importing
``coordinator.security`` or building TLS contexts (``sasl_listener.py`` and
``tls_listener.py`` do that, imported only when such a listener is configured).

``listeners`` is a comma-separated list of ``NAME://HOST:PORT`` (an empty host binds every
interface, as in Kafka; port 0 is ephemeral). PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL
name their own security protocol; any other name needs an entry in
``listener.security.protocol.map`` (``NAME:PROTOCOL,...``). A listener's SASL and TLS keys
are read ``listener.name.<name, lower case>.`` first, then without the prefix, as Kafka does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from coordinator.config import ConfigError
from coordinator.configs.security_keys import LISTENER_ADDRESS_KEYS, SASL_KEYS, SSL_KEYS

__all__ = [
    "LISTENER_KEYS",
    "PLAINTEXT",
    "SASL_PLAINTEXT",
    "SASL_SSL",
    "SSL",
    "UNNAMED",
    "Listener",
    "SaslSettings",
    "ServedListener",
    "is_listener_key",
    "is_secret_key",
    "listener_value",
    "parse_listeners",
    "sasl_settings",
]

PLAINTEXT = "PLAINTEXT"
SSL = "SSL"
SASL_PLAINTEXT = "SASL_PLAINTEXT"
SASL_SSL = "SASL_SSL"
_PROTOCOLS = (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)
#: The keys this module reads (``listener.name.<name>.*`` ones are matched by pattern).
LISTENER_KEYS = frozenset({*LISTENER_ADDRESS_KEYS, *SASL_KEYS, *SSL_KEYS})
_PER_LISTENER = frozenset({*SASL_KEYS, "plain.sasl.jaas.config", *SSL_KEYS})
_LISTENER_RE = re.compile(r"^([A-Za-z0-9_]+)://(\[[0-9A-Fa-f:.]+\]|[^:/\s]*):(\d+)$")
_LISTENER_KEY_RE = re.compile(r"^listener\.name\.([a-z0-9_]+)\.(.+)$")
#: KIP-368's per-mechanism session lifetime, ``listener.name.<name>.<mechanism>.`` only.
_MECHANISM_REAUTH_RE = re.compile(
    r"^(plain|scram-sha-256|scram-sha-512|oauthbearer)\.connections\.max\.reauth\.ms$")


def _per_listener(key: str) -> bool:
    """Whether ``key`` (after ``listener.name.<name>.``) is a per-listener key."""
    return key in _PER_LISTENER or _MECHANISM_REAUTH_RE.match(key) is not None


class Listener(NamedTuple):
    """One entry of ``listeners``, with its ``advertised.listeners`` address (None: the
    bound host and port)."""

    name: str
    protocol: str
    host: str
    port: int
    advertised_host: str | None = None
    advertised_port: int | None = None

    @property
    def sasl(self) -> bool:
        return self.protocol in (SASL_PLAINTEXT, SASL_SSL)

    @property
    def tls(self) -> bool:
        return self.protocol in (SSL, SASL_SSL)


class ServedListener(NamedTuple):
    """A listener as connections are served on it: its SASL mechanisms
    (``coordinator.security.mechanisms.SaslMechanisms``; None: no SASL) and its TLS server
    context (``ssl.SSLContext``; None: no TLS). ``listener`` None is the one PLAINTEXT
    listener of a server started without the ``listeners`` key."""

    listener: Listener | None = None
    sasl: Any = None
    tls: Any = None
    #: The CA file clients trust, when its certificate was generated (``tls_certificates``).
    generated_ca: str | None = None

    @property
    def name(self) -> str | None:
        return None if self.listener is None else self.listener.name


#: The one PLAINTEXT listener of a server started without the ``listeners`` key.
UNNAMED = ServedListener()


class SaslSettings(NamedTuple):
    """A SASL listener's raw settings, turned into mechanisms by ``server.sasl_listener``.
    (Named tuples, not dataclasses: this module is imported on every start, and a
    dataclass costs about half a millisecond to define.)"""

    #: ``sasl.enabled.mechanisms`` (``listener.name.<name>.`` first); None: all of them.
    enabled_mechanisms: str | None = None
    #: The listener's ``plain.sasl.jaas.config`` (``PlainLoginModule`` users), if given.
    plain_jaas_config: str | None = None
    #: ``--sasl-user NAME:PASSWORD`` (PLAIN and both SCRAM credentials each).
    users: tuple[tuple[str, str], ...] = ()
    #: ``connections.max.reauth.ms`` (``listener.name.<name>.`` first), as given; None: 0.
    max_reauth_ms: str | None = None
    #: ``listener.name.<name>.<mechanism>.connections.max.reauth.ms`` (KIP-368: a
    #: mechanism's own session lifetime, over the listener's), by mechanism, as given.
    max_reauth_ms_by_mechanism: tuple[tuple[str, str], ...] = ()

    def __repr__(self) -> str:  # users and the JAAS config hold passwords
        return (f"SaslSettings(enabled_mechanisms={self.enabled_mechanisms!r}, "
                f"users={[name for name, _ in self.users]}, "
                f"max_reauth_ms={self.max_reauth_ms!r}, "
                f"max_reauth_ms_by_mechanism={self.max_reauth_ms_by_mechanism!r})")


#: Keys whose values are secrets (Kafka's PASSWORD type): never shown (DescribeConfigs).
_SECRET_SUFFIXES = (".jaas.config", "ssl.key.password", "ssl.keystore.password",
                    "ssl.truststore.password", "ssl.keystore.key")


def is_secret_key(key: str) -> bool:
    """Whether ``key`` (maybe ``listener.name.``-prefixed) holds a password or a key."""
    return key.endswith(_SECRET_SUFFIXES)


def is_listener_key(key: str) -> bool:
    if key in LISTENER_KEYS:
        return True
    match = _LISTENER_KEY_RE.match(key)
    return match is not None and _per_listener(match.group(2))


def _protocol_map(value: str | None) -> dict[str, str]:
    """``listener.security.protocol.map`` over the four names that map to themselves."""
    protocols = {name: name for name in _PROTOCOLS}
    for entry in (value or "").split(","):
        if not entry.strip():
            continue
        name, colon, protocol = entry.strip().partition(":")
        protocol = protocol.strip().upper()
        if not colon or not name.strip() or protocol not in _PROTOCOLS:
            raise ConfigError(
                f"listener.security.protocol.map={value!r}: expected NAME:PROTOCOL entries, "
                f"PROTOCOL one of {', '.join(_PROTOCOLS)}")
        protocols[name.strip().upper()] = protocol
    return protocols


def _endpoints(key: str, value: str) -> list[tuple[str, str, int]]:
    """``NAME://HOST:PORT,...`` as (NAME upper case, host, port)."""
    out: list[tuple[str, str, int]] = []
    for part in (p.strip() for p in value.split(",")):
        if not part:
            continue
        match = _LISTENER_RE.match(part)
        if match is None:
            raise ConfigError(f"{key}={value!r}: expected NAME://HOST:PORT, got {part!r}")
        name, host, port = match.group(1).upper(), match.group(2), int(match.group(3))
        if port > 65535:
            raise ConfigError(f"{key}={value!r}: port {port} is outside 0..65535")
        if any(name == seen for seen, _, _ in out):
            raise ConfigError(f"{key}={value!r}: listener name {name} appears twice "
                              "(each listener must have a different name)")
        out.append((name, host.strip("[]"), port))
    if not out:
        raise ConfigError(f"{key}={value!r}: expected NAME://HOST:PORT")
    return out


def parse_listeners(properties: Mapping[str, str]) -> tuple[Listener, ...]:
    """``listeners`` (with ``advertised.listeners`` and the protocol map); ConfigError for a
    malformed entry, a name without a security protocol or an advertised name that is not
    a listener."""
    value = properties["listeners"]
    protocols = _protocol_map(properties.get("listener.security.protocol.map"))
    entries = _endpoints("listeners", value)
    ports = [port for _, _, port in entries if port != 0]
    if len(ports) != len(set(ports)):
        raise ConfigError(f"listeners={value!r}: each listener must have a different port")
    advertised: dict[str, tuple[str, int]] = {}
    if "advertised.listeners" in properties:
        for name, host, port in _endpoints("advertised.listeners",
                                           properties["advertised.listeners"]):
            if all(name != listener for listener, _, _ in entries):
                raise ConfigError(f"advertised.listeners: {name} is not one of the listeners "
                                  f"({', '.join(n for n, _, _ in entries)})")
            advertised[name] = (host, port)
    listeners = []
    for name, host, port in entries:
        protocol = protocols.get(name)
        if protocol is None:
            raise ConfigError(f"listeners={value!r}: no security protocol defined for "
                              f"listener {name} (add {name}:PROTOCOL to "
                              "listener.security.protocol.map)")
        ad_host, ad_port = advertised.get(name, (None, None))
        listeners.append(Listener(name, protocol, host, port, ad_host or None,
                                  ad_port or None))
    return tuple(listeners)


def listener_value(properties: Mapping[str, str], listener: Listener, key: str) -> str | None:
    """``key`` for ``listener``: ``listener.name.<name>.key`` first, then ``key``."""
    value = properties.get(f"listener.name.{listener.name.lower()}.{key}")
    return properties.get(key) if value is None else value


def check_listener_names(properties: Mapping[str, str], listeners: tuple[Listener, ...]) -> None:
    """``listener.name.<name>.`` keys must name a configured listener."""
    names = {listener.name.lower() for listener in listeners}
    for key in properties:
        match = _LISTENER_KEY_RE.match(key)
        if match is not None and _per_listener(match.group(2)) and match.group(1) not in names:
            raise ConfigError(f"{key}: no listener named {match.group(1).upper()} is configured")


def sasl_settings(properties: Mapping[str, str], listener: Listener,
                  users: tuple[tuple[str, str], ...]) -> SaslSettings:
    """A SASL listener's settings."""
    prefix = f"listener.name.{listener.name.lower()}."
    by_mechanism = tuple(
        (match.group(1).upper(), value) for key, value in sorted(properties.items())
        if key.startswith(prefix)
        and (match := _MECHANISM_REAUTH_RE.match(key[len(prefix):])) is not None)
    return SaslSettings(listener_value(properties, listener, "sasl.enabled.mechanisms"),
                        properties.get(f"{prefix}plain.sasl.jaas.config"), users,
                        listener_value(properties, listener, "connections.max.reauth.ms"),
                        by_mechanism)


def parse_sasl_user(text: str) -> tuple[str, str]:
    """``--sasl-user NAME:PASSWORD``."""
    name, colon, password = text.partition(":")
    if not colon or not name or not password:
        raise ConfigError("--sasl-user: expected NAME:PASSWORD")
    return name, password
