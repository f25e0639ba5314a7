"""Kafka's ``listeners`` key and the SASL keys that go with it, parsed without importing
``coordinator.security`` (that happens only when a SASL listener is configured).

This step serves one listener, ``PLAINTEXT://HOST:PORT`` or ``SASL_PLAINTEXT://HOST:PORT``
(an empty host binds every interface, as in Kafka; port 0 is ephemeral). Several listeners,
SSL and ``listener.security.protocol.map`` are a later step: they are refused in one line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from coordinator.config import ConfigError

__all__ = [
    "LISTENER_KEYS",
    "PLAINTEXT",
    "SASL_PLAINTEXT",
    "Listener",
    "SaslSettings",
    "is_listener_key",
    "parse_listener",
    "sasl_settings",
]

PLAINTEXT = "PLAINTEXT"
SASL_PLAINTEXT = "SASL_PLAINTEXT"
_PROTOCOLS = (PLAINTEXT, SASL_PLAINTEXT)
#: The keys this module reads (``listener.name.<name>.*`` ones are matched by pattern).
LISTENER_KEYS = frozenset({"listeners", "sasl.enabled.mechanisms"})
_LISTENER_RE = re.compile(r"^([A-Za-z0-9_]+)://(\[[0-9A-Fa-f:.]+\]|[^:/\s]*):(\d+)$")
_LISTENER_KEY_RE = re.compile(
    r"^listener\.name\.([a-z0-9_]+)\.(sasl\.enabled\.mechanisms|plain\.sasl\.jaas\.config)$"
)


class Listener(NamedTuple):
    name: str
    host: str
    port: int

    @property
    def sasl(self) -> bool:
        return self.name == SASL_PLAINTEXT


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

    def __repr__(self) -> str:  # users and the JAAS config hold passwords
        return (f"SaslSettings(enabled_mechanisms={self.enabled_mechanisms!r}, "
                f"users={[name for name, _ in self.users]})")


def is_listener_key(key: str) -> bool:
    return key in LISTENER_KEYS or _LISTENER_KEY_RE.match(key) is not None


def parse_listener(value: str) -> Listener:
    """``listeners``: exactly one ``PLAINTEXT://`` or ``SASL_PLAINTEXT://HOST:PORT``."""
    parts = [part.strip() for part in value.split(",") if part.strip()]
    if len(parts) != 1:
        raise ConfigError(
            f"listeners={value!r}: kcoord serves one listener for now (several listeners "
            "are a later step)")
    match = _LISTENER_RE.match(parts[0])
    if match is None:
        raise ConfigError(f"listeners={value!r}: expected NAME://HOST:PORT")
    name, host, port_text = match.group(1).upper(), match.group(2), match.group(3)
    if name not in _PROTOCOLS:
        raise ConfigError(
            f"listeners={value!r}: listener {name} is not served yet (kcoord serves "
            f"{' or '.join(_PROTOCOLS)})")
    port = int(port_text)
    if port > 65535:
        raise ConfigError(f"listeners={value!r}: port {port} is outside 0..65535")
    return Listener(name, host.strip("[]"), port)


def sasl_settings(
    properties: Mapping[str, str], listener: Listener | None, users: tuple[tuple[str, str], ...]
) -> SaslSettings | None:
    """The SASL listener's settings (None for a PLAINTEXT one). ``listener.name.<name>.``
    keys must name the configured listener; ``--sasl-user`` needs a SASL listener."""
    for key in properties:
        match = _LISTENER_KEY_RE.match(key)
        if match is not None and (listener is None or match.group(1) != listener.name.lower()):
            raise ConfigError(f"{key}: no listener named {match.group(1).upper()} is configured")
    if listener is None or not listener.sasl:
        if users:
            raise ConfigError("--sasl-user needs a SASL listener "
                              "(listeners=SASL_PLAINTEXT://HOST:PORT)")
        return None
    prefix = f"listener.name.{listener.name.lower()}."
    mechanisms = properties.get(prefix + "sasl.enabled.mechanisms",
                                properties.get("sasl.enabled.mechanisms"))
    return SaslSettings(mechanisms, properties.get(prefix + "plain.sasl.jaas.config"), users)


def parse_sasl_user(text: str) -> tuple[str, str]:
    """``--sasl-user NAME:PASSWORD``."""
    name, colon, password = text.partition(":")
    if not colon or not name or not password:
        raise ConfigError("--sasl-user: expected NAME:PASSWORD")
    return name, password
