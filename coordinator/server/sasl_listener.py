"""A SASL listener's mechanisms from its settings (``listeners.SaslSettings``): imported only
when a SASL listener is configured, since it loads ``coordinator.security``.

Users come from ``--sasl-user NAME:PASSWORD`` (a PLAIN credential and both SCRAM ones) and
from the listener's ``plain.sasl.jaas.config`` (``PlainLoginModule``'s ``user_NAME``
options: PLAIN only, as in Kafka), in memory. ``connections.max.reauth.ms`` (KIP-368) sets
how long a session lasts before the client must re-authenticate (``sasl_gate.py``), and
``listener.name.<name>.<mechanism>.connections.max.reauth.ms`` a mechanism's own lifetime
on that listener, as in Kafka's SaslChannelBuilder. SCRAM
users created through AlterUserScramCredentials are persisted in the data directory and
replayed into the same SCRAM store once the coordinator loads
(``security_setup.security_shard``).
"""

from __future__ import annotations

import secrets

from coordinator.config import ConfigError
from coordinator.security.jaas import plain_users, server_jaas_entry
from coordinator.security.mechanisms import SaslMechanisms, parse_enabled_mechanisms
from coordinator.security.plain import PlainUsers
from coordinator.security.scram_credentials import ScramCredentialStore, user_records
from coordinator.server.listeners import SaslSettings

__all__ = ["PLAIN_LOGIN_MODULE", "max_reauth_ms", "sasl_mechanisms"]

PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"


def sasl_mechanisms(settings: SaslSettings) -> SaslMechanisms:
    """The listener's mechanisms over its users; ConfigError for a bad mechanism list or
    JAAS config."""
    try:
        enabled = parse_enabled_mechanisms(settings.enabled_mechanisms)
    except ValueError as exc:
        raise ConfigError(f"sasl.enabled.mechanisms: {exc}") from None
    if not enabled:
        raise ConfigError("sasl.enabled.mechanisms: no mechanism enabled")
    plain = PlainUsers()
    scram = ScramCredentialStore()
    if settings.plain_jaas_config is not None:
        try:
            entry = server_jaas_entry(settings.plain_jaas_config)
        except ValueError as exc:
            raise ConfigError(f"plain.sasl.jaas.config: {exc}") from None
        if entry.login_module != PLAIN_LOGIN_MODULE:
            raise ConfigError(f"plain.sasl.jaas.config: expected {PLAIN_LOGIN_MODULE}, got "
                              f"{entry.login_module}")
        for name, password in plain_users(entry).items():
            plain.add(name, password, secrets.token_bytes)
    for name, password in settings.users:
        plain.add(name, password, secrets.token_bytes)
        for record in user_records(name, password, secrets.token_bytes):
            scram.replay(record)
    return SaslMechanisms(enabled, plain, scram, secrets.token_bytes,
                          max_reauth_ms=max_reauth_ms(settings.max_reauth_ms),
                          max_reauth_ms_by_mechanism={
                              mechanism: max_reauth_ms(value, mechanism)
                              for mechanism, value in settings.max_reauth_ms_by_mechanism})


def max_reauth_ms(value: str | None, mechanism: str = "") -> int:
    """``connections.max.reauth.ms`` (Kafka's LONG, default 0: sessions never expire; a
    value of 0 or less turns re-authentication off), or a ``mechanism``'s own; ConfigError
    if not an integer."""
    key = f"{mechanism.lower()}.connections.max.reauth.ms" if mechanism else (
        "connections.max.reauth.ms")
    if value is None:
        return 0
    try:
        parsed = int(value.strip())
    except ValueError:
        raise ConfigError(f"{key}={value!r}: expected an integer (milliseconds)") from None
    if not -2**63 <= parsed < 2**63:
        raise ConfigError(f"{key}={value!r}: out of range for a long")
    return parsed
